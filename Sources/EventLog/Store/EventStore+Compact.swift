import Dispatch
import LMDB

extension EventStore {
  /// The sizes of the data file around ``EventStore/compact()``.
  public struct Compaction: Sendable, Equatable {
    /// The environment directory.
    public var path: String
    /// The size of `data.mdb` before, in bytes.
    public var bytesBefore: Int
    /// The size of the compacted `data.mdb`, in bytes.
    public var bytesAfter: Int
  }

  /// The scratch directory, inside the environment's, that the compacted copy is written to before
  /// it replaces `data.mdb`.
  static let compactionDirectory = "compacting"

  /// Replaces the environment's data file with a compacting copy of itself, so that nothing
  /// deleted or overwritten survives in its free pages, and closes the store.
  ///
  /// LMDB never writes over a page that a committed transaction freed until a later commit
  /// reuses it: the bytes of a deleted key or value stay in `data.mdb`. The compacting copy
  /// (LMDB's `mdb_env_copy2` with `MDB_CP_COMPACT`, as `mdb_copy -c`) holds only the pages in use,
  /// renumbered without gaps. It is written to a directory inside the environment's
  /// (`compacting/`), flushed, and renamed over `data.mdb`, which is atomic: a crash
  /// leaves the old file or the compacted one, never a mix. The log, its chain head and the
  /// projections are unchanged; the file is usually smaller.
  ///
  /// It needs the environment to itself: appends of this store that began before are committed
  /// first and later ones are refused, and it refuses, changing nothing, when another process has
  /// the environment open (a process that opens it while this runs waits, then fails once and can
  /// open it again; see `LMDB.Environment.compact(using:)`). No other ``EventStore`` of this
  /// process may have the same path open.
  ///
  /// Whether it succeeds or fails, the store is closed when it returns (as after ``close()``):
  /// open the path again to go on. A store opened read-only is refused before anything is done.
  /// - Returns: the path and the data file's sizes before and after.
  /// - Throws: ``EventStoreError/readOnly(path:)``;
  ///   ``EventStoreError/environmentInUse(path:process:)`` naming the other process when another
  ///   process has the environment open; ``EventStoreError/storage(_:)`` when the copy fails (a
  ///   full disk: the old file is kept); ``EventStoreError/closed`` after ``close()``.
  public func compact() async throws -> Compaction {
    if options.readOnly { throw EventStoreError.readOnly(path: path) }
    await writer.close()
    await notifier.close()
    let environment = self.environment
    let path = self.path
    // The copy and `Environment.close()` wait on locks and the disk: off the cooperative pool.
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<Compaction, any Error>, Never>) in
      DispatchQueue.global().async {
        continuation.resume(returning: Result { try Self.compact(environment, path: path) })
      }
    }
    return try result.get()
  }

  /// ``compact()``'s work on the environment; closes it whatever happens.
  private static func compact(_ environment: Environment, path: String) throws -> Compaction {
    defer { environment.close() }
    do {
      if let process = try environment.otherProcessID() {
        throw EventStoreError.environmentInUse(path: path, process: process)
      }
      let sizes = try environment.compact(using: path + "/" + compactionDirectory)
      return Compaction(path: path, bytesBefore: sizes.bytesBefore, bytesAfter: sizes.bytesAfter)
    } catch let error as LMDBError where error.code == .busy {
      // Another process opened the environment between the check and the lock.
      throw EventStoreError.environmentInUse(path: path, process: nil)
    } catch let error as LMDBError {
      throw EventStoreError(storage: error)
    }
  }
}
