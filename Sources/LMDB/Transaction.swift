import CLMDB

/// A read transaction: a consistent snapshot of the environment.
///
/// Transactions exist only inside ``Environment/read(_:)`` and ``Environment/write(_:)`` closures.
/// Byte buffers handed out by a transaction point into the memory map and are valid only until
/// the transaction ends (or, for a cursor, until it moves): copy them out before returning.
/// A transaction must not be used from another thread or after its closure returned.
public class Transaction {
  let handle: OpaquePointer
  /// The environment the transaction belongs to.
  public let environment: Environment
  var isLive = true

  init(handle: OpaquePointer, environment: Environment) {
    self.handle = handle
    self.environment = environment
  }

  @inline(__always) func precheck() {
    precondition(isLive, "an LMDB transaction was used after its closure returned")
  }

  /// Calls `body` with the bytes stored under `key`, without copying them.
  ///
  /// - Returns: `body`'s result, or `nil` when the key is absent.
  /// - Throws: ``LMDBError`` (other than not-found) or what `body` throws.
  /// - Complexity: O(log n).
  public func withValue<R>(
    forKey key: UnsafeRawBufferPointer, in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    precheck()
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val()
    let rc = mdb_get(handle, database.handle, &k, &v)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "mdb_get", context: database.description)
    return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  /// The bytes stored under `key`, copied out; `nil` when the key is absent.
  /// - Complexity: O(log n).
  public func value(forKey key: UnsafeRawBufferPointer, in database: Database) throws(LMDBError) -> [UInt8]? {
    precheck()
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val()
    let rc = mdb_get(handle, database.handle, &k, &v)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "mdb_get", context: database.description)
    return Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  /// The bytes stored under `key`, copied out; `nil` when the key is absent.
  @inlinable
  public func value(forKey key: [UInt8], in database: Database) throws -> [UInt8]? {
    try key.withUnsafeBytes { try value(forKey: $0, in: database) }
  }

  /// Opens a cursor on `database` for the duration of `body`.
  public func withCursor<R>(in database: Database, _ body: (Cursor) throws -> R) throws -> R {
    precheck()
    var cursor: OpaquePointer?
    try check(
      mdb_cursor_open(handle, database.handle, &cursor), "mdb_cursor_open", context: database.description)
    guard let cursor else { throw LMDBError(code: .invalid, operation: "mdb_cursor_open") }
    let wrapper = Cursor(handle: cursor, transaction: self, database: database)
    defer {
      wrapper.isLive = false
      mdb_cursor_close(cursor)
    }
    return try body(wrapper)
  }

  /// The number of entries in `database`.
  /// - Complexity: O(1).
  public func count(in database: Database) throws(LMDBError) -> Int {
    precheck()
    var stat = MDB_stat()
    try check(mdb_stat(handle, database.handle, &stat), "mdb_stat", context: database.description)
    return stat.ms_entries
  }

  /// The number of pages `database` uses (branch, leaf and overflow).
  public func pageCount(in database: Database) throws(LMDBError) -> Int {
    precheck()
    var stat = MDB_stat()
    try check(mdb_stat(handle, database.handle, &stat), "mdb_stat", context: database.description)
    return stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages
  }
}

@available(*, unavailable)
extension Transaction: Sendable {}

/// A write transaction. Only one exists at a time per environment, across processes.
public final class WriteTransaction: Transaction {
  /// Set when an operation hit `MDB_MAP_FULL`, so that ``Environment/write(_:)`` grows the map
  /// and retries even when the caller wrapped the error in one of its own.
  var hitMapFull = false
  /// Set when a write to the data file failed (a full disk): ``Environment/write(_:)`` then
  /// gives back what the transaction wrote past the committed pages.
  var hitWriteFailure = false

  /// How a value is stored.
  public struct PutFlags: OptionSet, Sendable {
    /// The `MDB_*` flag bits, as `mdb_put` and `mdb_cursor_put` take them.
    public let rawValue: UInt32
    /// Creates flags from their `MDB_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Fail with `keyExists` when the key is present (`MDB_NOOVERWRITE`).
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// In a sorted-duplicates database, fail when the pair is present (`MDB_NODUPDATA`).
    public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// The key is greater than every key stored: the fast sequential path (`MDB_APPEND`).
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// The value is greater than every value of its key (`MDB_APPENDDUP`).
    public static let appendDuplicate = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
  }

  @inline(__always) func checkWrite(
    _ rc: Int32, _ operation: StaticString, _ database: Database
  ) throws(LMDBError) {
    if _slowPath(rc != 0) {
      if rc == MDB_MAP_FULL { hitMapFull = true }
      if Environment.isWriteFailure(rc) {
        hitWriteFailure = true
        throw environment.writeFailure(rc, operation: "\(operation)", context: database.description)
      }
      throw LMDBError(code: .init(rawValue: rc), operation: "\(operation)", context: database.description)
    }
  }

  /// Stores `value` under `key`.
  /// - Throws: ``LMDBError``: `keyExists` with ``PutFlags/noOverwrite`` or a misplaced
  ///   ``PutFlags/append``; `mapFull` (the enclosing ``Environment/write(_:)`` grows the map and retries).
  /// - Complexity: O(log n); O(1) amortized with ``PutFlags/append``.
  public func put(
    _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in database: Database,
    flags: PutFlags = []
  ) throws(LMDBError) {
    precheck()
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try checkWrite(mdb_put(handle, database.handle, &k, &v, flags.rawValue), "mdb_put", database)
  }

  /// Stores `value` under `key`.
  @inlinable
  public func put(
    _ value: [UInt8], forKey key: [UInt8], in database: Database, flags: PutFlags = []
  ) throws {
    try key.withUnsafeBytes { k in
      try value.withUnsafeBytes { v in try put(v, forKey: k, in: database, flags: flags) }
    }
  }

  /// Reserves `count` bytes under `key` and lets `fill` write them in place (`MDB_RESERVE`).
  ///
  /// Saves a copy for large values. Not for sorted-duplicates databases.
  public func put(
    reservingCount count: Int, forKey key: UnsafeRawBufferPointer, in database: Database,
    flags: PutFlags = [], _ fill: (UnsafeMutableRawBufferPointer) throws -> Void
  ) throws {
    precheck()
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: count, mv_data: nil)
    try checkWrite(
      mdb_put(handle, database.handle, &k, &v, flags.rawValue | UInt32(MDB_RESERVE)), "mdb_put", database)
    try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
  }

  /// Removes `key` (and all its values, in a sorted-duplicates database).
  /// - Returns: whether the key was present.
  @discardableResult
  public func delete(forKey key: UnsafeRawBufferPointer, in database: Database) throws(LMDBError) -> Bool {
    precheck()
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    let rc = mdb_del(handle, database.handle, &k, nil)
    if rc == MDB_NOTFOUND { return false }
    try checkWrite(rc, "mdb_del", database)
    return true
  }

  /// Removes `key`.
  @inlinable @discardableResult
  public func delete(forKey key: [UInt8], in database: Database) throws -> Bool {
    try key.withUnsafeBytes { try delete(forKey: $0, in: database) }
  }

  /// Removes every entry of `database`, keeping the database (`mdb_drop` without delete).
  public func removeAll(in database: Database) throws(LMDBError) {
    precheck()
    try checkWrite(mdb_drop(handle, database.handle, 0), "mdb_drop", database)
  }
}
