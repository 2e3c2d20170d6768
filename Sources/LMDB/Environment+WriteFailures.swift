import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Environment {
  /// Whether an LMDB result is a failed write to the data file: `EIO` (LMDB's code for a short
  /// write, which is what a full disk usually gives), `ENOSPC` or `EDQUOT`.
  static func isWriteFailure(_ rc: Int32) -> Bool {
    rc == EIO || rc == ENOSPC || rc == EDQUOT
  }

  /// Below this many free bytes, a failed write is taken for a full disk.
  static let nearlyFull = 4 << 20

  /// The error for a failed write: it says the disk is full when it is (or nearly is), and
  /// names the environment either way; LMDB alone says "Input/output error [event_ids]".
  func writeFailure(_ rc: Int32, operation: String, context: String) -> LMDBError {
    let technical = LMDBError(code: .init(rawValue: rc), operation: operation, context: context)
    let free = freeBytes()
    if rc == ENOSPC || rc == EDQUOT || (free.map { $0 < Self.nearlyFull } ?? false) {
      let room = free.map { "\($0 >> 10) KiB free" } ?? "no space left"
      return LMDBError(
        code: .noSpace, operation: operation, context: context,
        explanation:
          "the disk is full: cannot write the event log at '\(path)' (\(room); \(technical.technicalDescription))"
      )
    }
    return LMDBError(
      code: technical.code, operation: operation, context: context,
      explanation: "a write to the event log at '\(path)' failed: \(technical.technicalDescription)")
  }

  /// The bytes free for this process on the environment's file system, or `nil`.
  func freeBytes() -> Int? { Self.freeBytes(at: path) }

  /// The bytes free for this process on the file system holding `path`, or `nil`.
  static func freeBytes(at path: String) -> Int? {
    var status = statvfs()
    guard statvfs(path, &status) == 0 else { return nil }
    return Int(status.f_bavail) * Int(status.f_frsize)
  }

  /// The least free space a new lock file is created with.
  static let spaceToCreate = 256 << 10

  /// Refuses to let LMDB create `lock.mdb` on a file system without room for it. LMDB sizes the
  /// new file with `ftruncate` and writes it through a shared memory map: on a full disk the
  /// first write to a page that cannot be allocated kills the process with SIGBUS, instead of
  /// returning an error.
  static func checkSpaceForLockFile(at path: String) throws(LMDBError) {
    var status = stat()
    guard lstat(path + "/lock.mdb", &status) != 0, errno == ENOENT else { return }
    guard let free = freeBytes(at: path), free < spaceToCreate else { return }
    throw LMDBError(
      code: .noSpace, operation: "mdb_env_open", context: path,
      explanation: "the disk is full: cannot create the event log at '\(path)' (\(free >> 10) KiB free)")
  }

  /// After a write transaction that failed writing (a full disk), gives back what it wrote past
  /// the last committed page: LMDB extends `data.mdb` as it writes a transaction's pages and
  /// never shrinks it, so a failed import would leave the disk full and the file large.
  ///
  /// Runs in a write transaction of its own, so no writer of any process is between its read
  /// of the last page and the truncation; readers never read past the last committed page.
  /// Best effort: a failure is ignored.
  func trimAfterFailedWrite() {
    var txn: OpaquePointer?
    guard mdb_txn_begin(handle, nil, 0, &txn) == 0, let txn else { return }
    defer { mdb_txn_abort(txn) }
    var info = MDB_envinfo()
    var pages = MDB_stat()
    mdb_env_info(handle, &info)
    mdb_env_stat(handle, &pages)
    let used = (info.me_last_pgno + 1) * Int(pages.ms_psize)
    var descriptor: mdb_filehandle_t = -1
    var status = stat()
    guard mdb_env_get_fd(handle, &descriptor) == 0, fstat(descriptor, &status) == 0,
      Int(status.st_size) > used
    else { return }
    if ftruncate(descriptor, off_t(used)) == 0 { forgetFileEnd(below: used) }
  }
}
