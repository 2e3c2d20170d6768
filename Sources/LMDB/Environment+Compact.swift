import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The sizes of the data file around ``Environment/compact(using:)``.
public struct Compaction: Sendable, Equatable {
  /// The size of `data.mdb` before, in bytes (its used pages, the free pages and what was written
  /// ahead of them).
  public var bytesBefore: Int
  /// The size of the compacted `data.mdb`, in bytes: the pages in use, renumbered without gaps.
  public var bytesAfter: Int
}

extension Environment {
  /// The ID of another process that has the environment open, or `nil` when no other process has.
  ///
  /// Every process that has an LMDB environment open holds a shared `fcntl` read lock on the first
  /// byte of `lock.mdb` (LMDB's `mdb_env_excl_lock` and `mdb_env_share_locks`); asking
  /// (`F_GETLK`) for a write lock on that byte reports another process's lock. A process's own
  /// locks never conflict with its own requests, so the answer is about other processes only;
  /// another ``Environment`` of this process on the same path is not seen.
  ///
  /// The lock file's descriptor this opens stays open until the environment is closed: closing it
  /// would drop this process's own lock.
  /// - Returns: the other process's ID (one of them, when there are several), or `nil`.
  /// - Throws: ``LMDBError`` naming `lock.mdb` when it cannot be opened or asked;
  ///   ``LMDBError/Code/closed`` after ``close()``.
  public func otherProcessID() throws(LMDBError) -> Int32? {
    try resizeLock.withShared { () throws(LMDBError) -> Int32? in
      try checkOpen("fcntl")
      return try Self.lockHolder(of: openLockProbe(), file: path + "/lock.mdb")
    }
  }

  /// Writes a compacting copy of the environment (`mdb_env_copy2` with `MDB_CP_COMPACT`) to
  /// `data.mdb` in `directory`, which this creates (mode 0700) and which must not exist, and
  /// flushes it to disk.
  ///
  /// The copy holds the pages in use at the start of the copy, renumbered without gaps: none of
  /// the free pages, so nothing of what was deleted or overwritten before. Its file has mode 0600.
  /// The environment stays open; writers of any process may go on meanwhile (the copy is of one
  /// read transaction's snapshot).
  /// - Parameter directory: the new directory for the copy.
  /// - Throws: ``LMDBError`` naming the directory or file: it exists already, the disk is full,
  ///   ``LMDBError/Code/closed`` after ``close()``.
  public func copyCompacted(to directory: String) throws(LMDBError) {
    try resizeLock.withShared { () throws(LMDBError) in
      try checkOpen("mdb_env_copy2")
      try writeCompactedCopy(to: directory)
    }
  }

  /// Replaces `data.mdb` with a compacting copy of itself and closes the environment, so that the
  /// file keeps nothing of its free pages; the environment must then be opened again.
  ///
  /// In order, with no transaction of this process running: takes the write lock on the first byte
  /// of `lock.mdb` (refused when another process has the environment open: see
  /// ``otherProcessID()``; holding it keeps other processes from opening the environment until
  /// the environment is closed), removes what an interrupted earlier run left at `directory`,
  /// writes the copy there (``copyCompacted(to:)``), renames it over `data.mdb` (atomic: a crash
  /// leaves the old file or the new one), flushes the directory, and removes `directory`. Then
  /// it clears the lock file's magic number and closes the environment: the compacted file
  /// restarts LMDB's transaction numbering, so the lock file's state must not be reused. The next
  /// process to open the environment opens it alone and rebuilds the lock file; a process that was
  /// waiting to open it meanwhile fails with ``LMDBError/Code/invalid`` rather than use it, and
  /// can open it again.
  ///
  /// On a failure before the rename, the copy is removed, the lock is shared again and the
  /// environment is left open and unchanged. Another ``Environment`` of this process on the same
  /// path must not be open (it would keep using the old file).
  /// - Parameter directory: the scratch directory for the copy, on the same file system as the
  ///   environment (inside it, say).
  /// - Returns: the data file's sizes before and after.
  /// - Throws: ``LMDBError``: ``LMDBError/Code/busy`` naming the other process when another
  ///   process has the environment open; the copy's errors (a full disk); ``LMDBError/Code/closed``
  ///   after ``close()``; a read-only environment is refused (`EACCES`).
  public func compact(using directory: String) throws(LMDBError) -> Compaction {
    try resizeLock.withExclusive { () throws(LMDBError) -> Compaction in
      try checkOpen("mdb_env_copy2")
      let lockFile = path + "/lock.mdb"
      let dataFile = path + "/data.mdb"
      if options.readOnly {
        throw LMDBError(
          code: .permissionDenied, operation: "mdb_env_copy2", context: path,
          explanation: "cannot compact '\(path)': it is open read-only")
      }
      let probe = try openLockProbe()
      try Self.lockFirstByte(probe, exclusively: true, file: lockFile, environment: path)
      let bytesBefore: Int
      let bytesAfter: Int
      do throws(LMDBError) {
        bytesBefore = try Self.fileSize(dataFile)
        try Self.removeScratch(directory)
        try writeCompactedCopy(to: directory)
        bytesAfter = try Self.fileSize(directory + "/data.mdb")
        guard rename(directory + "/data.mdb", dataFile) == 0 else {
          throw LMDBError(code: .init(rawValue: errno), operation: "rename", context: dataFile)
        }
      } catch {
        try? Self.removeScratch(directory)
        try? Self.lockFirstByte(probe, exclusively: false, file: lockFile, environment: path)
        throw error
      }
      // Renamed: from here on the old file is gone, whatever fails.
      try? Self.syncDirectory(path)
      _ = rmdir(directory)
      // The magic number is the first 4 bytes of the lock file's header (MDB_txninfo).
      let zero: UInt32 = 0
      _ = withUnsafeBytes(of: zero) { pwrite(probe, $0.baseAddress, $0.count, 0) }
      closeHoldingResizeLock()
      return Compaction(bytesBefore: bytesBefore, bytesAfter: bytesAfter)
    }
  }

  /// Closes the descriptor of ``otherProcessID()`` if it is open; call only once LMDB closed its
  /// own descriptors (or never opened them).
  func closeLockProbe() {
    lockProbe.withLock { descriptor in
      if descriptor >= 0 { closeDescriptor(descriptor) }
      descriptor = -1
    }
  }

  /// The descriptor of `lock.mdb` kept for the lock checks, opened (read-write, so that it can
  /// take the write lock) on first use.
  private func openLockProbe() throws(LMDBError) -> Int32 {
    let file = path + "/lock.mdb"
    return try lockProbe.withLock { (descriptor: inout Int32) throws(LMDBError) -> Int32 in
      if descriptor >= 0 { return descriptor }
      let mode = options.readOnly ? O_RDONLY : O_RDWR
      let opened = open(file, mode | O_CLOEXEC | O_NOFOLLOW)
      guard opened >= 0 else {
        throw LMDBError(code: .init(rawValue: errno), operation: "open", context: file)
      }
      descriptor = opened
      return opened
    }
  }

  /// The process that holds a lock on the first byte of the lock file open at `descriptor`
  /// conflicting with a write lock, or `nil`.
  private static func lockHolder(of descriptor: Int32, file: String) throws(LMDBError) -> Int32? {
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    request.l_start = 0
    request.l_len = 1
    guard fcntl(descriptor, F_GETLK, &request) == 0 else {
      throw LMDBError(code: .init(rawValue: errno), operation: "fcntl", context: file)
    }
    return request.l_type == Int16(F_UNLCK) ? nil : request.l_pid
  }

  /// Takes the write lock (`exclusively`) or the shared read lock on the lock file's first byte,
  /// without waiting; this process's lock on it, LMDB's, is replaced, not added to.
  /// - Throws: ``LMDBError/Code/busy`` naming the other process when it holds a lock there.
  private static func lockFirstByte(
    _ descriptor: Int32, exclusively: Bool, file: String, environment: String
  ) throws(LMDBError) {
    var request = flock()
    request.l_type = Int16(exclusively ? F_WRLCK : F_RDLCK)
    request.l_whence = Int16(SEEK_SET)
    request.l_start = 0
    request.l_len = 1
    while fcntl(descriptor, F_SETLK, &request) != 0 {
      let code = errno
      if code == EINTR { continue }
      guard code == EAGAIN || code == EACCES else {
        throw LMDBError(code: .init(rawValue: code), operation: "fcntl", context: file)
      }
      let holder = (try? lockHolder(of: descriptor, file: file)) ?? nil
      throw LMDBError(
        code: .busy, operation: "fcntl", context: file,
        explanation: "'\(environment)' is open in another process"
          + (holder.map { " (process \($0))" } ?? "") + "; close it first")
    }
  }

  /// `mdb_env_copy2` with `MDB_CP_COMPACT` into the new `directory`, then mode 0600 and `fsync`
  /// of the copy; removes what it wrote when it fails.
  private func writeCompactedCopy(to directory: String) throws(LMDBError) {
    guard mkdir(directory, 0o700) == 0 else {
      throw LMDBError(code: .init(rawValue: errno), operation: "mkdir", context: directory)
    }
    let copy = directory + "/data.mdb"
    do throws(LMDBError) {
      try check(mdb_env_copy2(handle, directory, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2", context: directory)
      let descriptor = open(copy, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
      guard descriptor >= 0 else {
        throw LMDBError(code: .init(rawValue: errno), operation: "open", context: copy)
      }
      defer { closeDescriptor(descriptor) }
      guard fchmod(descriptor, 0o600) == 0 else {
        throw LMDBError(code: .init(rawValue: errno), operation: "fchmod", context: copy)
      }
      guard fsync(descriptor) == 0 else {
        throw LMDBError(code: .init(rawValue: errno), operation: "fsync", context: copy)
      }
      try Self.syncDirectory(directory)
    } catch {
      _ = unlink(copy)
      _ = rmdir(directory)
      throw error
    }
  }

  /// Removes `directory` and the copy in it, left by an interrupted compaction; nothing when it
  /// does not exist.
  /// - Throws: when it holds anything else, or is not a directory (a symbolic link is not
  ///   followed).
  private static func removeScratch(_ directory: String) throws(LMDBError) {
    var status = stat()
    if lstat(directory, &status) == 0 && status.st_mode & S_IFMT != S_IFDIR {
      throw LMDBError(
        code: .wrongFileType, operation: "lstat", context: directory,
        explanation:
          "refusing '\(directory)': it is \(kind(of: status.st_mode)), not the compaction's directory")
    }
    if unlink(directory + "/data.mdb") != 0 && errno != ENOENT && errno != ENOTDIR {
      throw LMDBError(code: .init(rawValue: errno), operation: "unlink", context: directory + "/data.mdb")
    }
    if rmdir(directory) != 0 && errno != ENOENT {
      throw LMDBError(code: .init(rawValue: errno), operation: "rmdir", context: directory)
    }
  }

  /// The size of the file at `path` in bytes.
  private static func fileSize(_ path: String) throws(LMDBError) -> Int {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw LMDBError(code: .init(rawValue: errno), operation: "stat", context: path)
    }
    return Int(status.st_size)
  }

  /// `fsync` of a directory, so that the names created or renamed in it survive a power loss.
  static func syncDirectory(_ path: String) throws(LMDBError) {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw LMDBError(code: .init(rawValue: errno), operation: "open", context: path)
    }
    defer { closeDescriptor(descriptor) }
    guard fsync(descriptor) == 0 else {
      throw LMDBError(code: .init(rawValue: errno), operation: "fsync", context: path)
    }
  }
}

/// `close(2)`, under a name apart from ``Environment/close()``.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
