import CLMDB
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A failed LMDB call of a baseline, with the call and the path or database it was about.
struct RawLMDBError: Error, CustomStringConvertible {
  var operation: String
  var code: Int32
  var context: String

  var description: String {
    "\(operation) (\(context)): \(String(cString: mdb_strerror(code))) [\(code)]"
  }
}

/// Checks an LMDB return code: every C call of the baselines goes through here.
@inline(__always)
func mdbCheck(
  _ rc: Int32, _ operation: StaticString, _ context: @autoclosure () -> String = ""
) throws(RawLMDBError) {
  if _slowPath(rc != 0) { throw RawLMDBError(operation: "\(operation)", code: rc, context: context()) }
}

/// An `MDB_val` over `buffer`, for the duration of `body`.
@inline(__always)
func withMDBVal<R>(_ buffer: UnsafeRawBufferPointer, _ body: (inout MDB_val) throws -> R) rethrows -> R {
  var value = MDB_val(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
  return try body(&value)
}

/// The bytes an `MDB_val` points at (valid until the transaction ends or the cursor moves).
@inline(__always)
func bytes(of value: MDB_val) -> UnsafeRawBufferPointer {
  UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
}

/// An LMDB environment used straight through the C API, as the `lmdb-raw` and `lmdb-append`
/// baselines do: no wrapper, no checks beyond the return codes.
final class RawEnvironment: @unchecked Sendable {
  // @unchecked Sendable: an MDB_env is thread-safe (LMDB locks internally, and the environment is
  // opened with MDB_NOTLS); the handle never changes, and every transaction begins and ends on the
  // thread that uses it (see `write` and `read`).
  let handle: OpaquePointer
  let path: String

  /// Opens (creating) the environment at `path`: default LMDB durability (fsync at every commit)
  /// when `durable`, `MDB_NOSYNC` for fixture building otherwise.
  init(path: String, durable: Bool, mapSize: Int = BenchmarkDefaults.mapSize) throws {
    self.path = path
    if mkdir(path, 0o700) != 0 && errno != EEXIST {
      throw RawLMDBError(operation: "mkdir", code: errno, context: path)
    }
    var env: OpaquePointer?
    try mdbCheck(mdb_env_create(&env), "mdb_env_create", path)
    guard let env else { throw RawLMDBError(operation: "mdb_env_create", code: EINVAL, context: path) }
    do {
      try mdbCheck(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize", path)
      try mdbCheck(mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs", path)
      var flags = UInt32(MDB_NOTLS)
      if !durable { flags |= UInt32(MDB_NOSYNC) }
      try mdbCheck(mdb_env_open(env, path, flags, 0o600), "mdb_env_open", path)
    } catch {
      mdb_env_close(env)
      throw error
    }
    handle = env
  }

  deinit { mdb_env_close(handle) }

  /// Opens (creating) a named database. Call before other threads use the environment.
  func openDatabase(_ name: String, flags: Int32 = 0) throws -> MDB_dbi {
    try write { txn in
      var dbi: MDB_dbi = 0
      try mdbCheck(mdb_dbi_open(txn, name, UInt32(MDB_CREATE) | UInt32(flags), &dbi), "mdb_dbi_open", name)
      return dbi
    }
  }

  /// Runs `body` in a write transaction and commits it (fsync when durable); aborts on throw.
  func write<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    var txn: OpaquePointer?
    try mdbCheck(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin", path)
    guard let txn else { throw RawLMDBError(operation: "mdb_txn_begin", code: EINVAL, context: path) }
    let result: R
    do {
      result = try body(txn)
    } catch {
      mdb_txn_abort(txn)
      throw error
    }
    try mdbCheck(mdb_txn_commit(txn), "mdb_txn_commit", path)
    return result
  }

  /// Runs `body` in a read-only transaction.
  func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    var txn: OpaquePointer?
    try mdbCheck(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin", path)
    guard let txn else { throw RawLMDBError(operation: "mdb_txn_begin", code: EINVAL, context: path) }
    defer { mdb_txn_abort(txn) }
    return try body(txn)
  }
}

/// Small helpers over the C calls the baselines make.
enum RawLMDB {
  @inline(__always)
  static func put(
    _ txn: OpaquePointer, _ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
    flags: Int32 = 0
  ) throws(RawLMDBError) {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try mdbCheck(mdb_put(txn, dbi, &k, &v, UInt32(flags)), "mdb_put")
  }

  /// The value under `key`, handed to `body` without a copy; `nil` when absent.
  @inline(__always)
  static func get<R>(
    _ txn: OpaquePointer, _ dbi: MDB_dbi, key: UnsafeRawBufferPointer,
    _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val()
    let rc = mdb_get(txn, dbi, &k, &v)
    if rc == MDB_NOTFOUND { return nil }
    try mdbCheck(rc, "mdb_get")
    return try body(bytes(of: v))
  }

  @inline(__always)
  static func delete(_ txn: OpaquePointer, _ dbi: MDB_dbi, key: UnsafeRawBufferPointer) throws(RawLMDBError) {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    let rc = mdb_del(txn, dbi, &k, nil)
    if rc == MDB_NOTFOUND { return }
    try mdbCheck(rc, "mdb_del")
  }

  /// Calls `body` with every entry of `dbi` in key order, through one cursor.
  static func scan(
    _ txn: OpaquePointer, _ dbi: MDB_dbi,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
  ) throws {
    var cursor: OpaquePointer?
    try mdbCheck(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    var key = MDB_val()
    var value = MDB_val()
    var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
    while rc == 0 {
      try body(bytes(of: key), bytes(of: value))
      rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
    }
    if rc != MDB_NOTFOUND { try mdbCheck(rc, "mdb_cursor_get") }
  }

  /// The number of entries of `dbi`.
  static func count(_ txn: OpaquePointer, _ dbi: MDB_dbi) throws -> Int {
    var stat = MDB_stat()
    try mdbCheck(mdb_stat(txn, dbi, &stat), "mdb_stat")
    return stat.ms_entries
  }

  /// The name of the database of data keys (subject 16 → key 32), apart from the events, as
  /// eventlog's `subject_keys` (``RawSealing``).
  static let subjectKeys = "subject_keys"

  /// Stores the data key of `subject` in `keys` (in the transaction of the event that first
  /// seals for it); a subject's key is never replaced.
  static func putKey(_ txn: OpaquePointer, _ keys: MDB_dbi, subject: UUID, key: [UInt8]) throws {
    try withUnsafeBytes(of: subject.uuid) { subject in
      try key.withUnsafeBytes { try put(txn, keys, key: subject, value: $0, flags: MDB_NOOVERWRITE) }
    }
  }

  /// Every data key stored in `keys`.
  static func keyring(_ txn: OpaquePointer, _ keys: MDB_dbi) throws -> RawKeyring {
    var loaded: [UUID: [UInt8]] = [:]
    try scan(txn, keys) { subject, key in
      guard subject.count == 16 else {
        throw RawRecords.CorruptRecord(description: "a data key's subject of \(subject.count) bytes")
      }
      loaded[UUID(uuid: subject.loadUnaligned(as: uuid_t.self))] = Array(key)
    }
    return RawKeyring(keys: loaded)
  }
}
