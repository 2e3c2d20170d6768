import CLMDB

/// A position in a database, inside one transaction.
///
/// ``key`` and ``value`` point into the memory map and stay valid until the cursor moves, a write
/// happens, or the transaction ends.
public final class Cursor {
  let handle: OpaquePointer
  let transaction: Transaction
  /// The database the cursor walks.
  public let database: Database
  var isLive = true
  /// The key and the value at the cursor, as `mdb_cursor_get` fills them in: two slots allocated
  /// with the cursor, not two stored properties, which every move, `key` and `value` would have
  /// checked for exclusive access at run time (a few per cent of a replay's reading thread, `perf`).
  private let current: UnsafeMutablePointer<MDB_val>
  private var currentKey: UnsafeMutablePointer<MDB_val> { current }
  private var currentValue: UnsafeMutablePointer<MDB_val> { current + 1 }

  init(handle: OpaquePointer, transaction: Transaction, database: Database) {
    self.handle = handle
    self.transaction = transaction
    self.database = database
    current = .allocate(capacity: 2)
    current.initialize(repeating: MDB_val(), count: 2)
  }

  deinit {
    current.deallocate()
  }

  /// A cursor movement.
  public enum Movement: Sendable {
    /// The first entry.
    case first
    /// The last entry.
    case last
    /// The next entry (the next value of the same key, in a sorted-duplicates database).
    case next
    /// The previous entry.
    case previous
    /// The first value of the next key.
    case nextKey
    /// The last value of the previous key.
    case previousKey
    /// The next value of the current key.
    case nextDuplicate
    /// The last value of the current key.
    case lastDuplicate

    var operation: MDB_cursor_op {
      switch self {
      case .first: MDB_FIRST
      case .last: MDB_LAST
      case .next: MDB_NEXT
      case .previous: MDB_PREV
      case .nextKey: MDB_NEXT_NODUP
      case .previousKey: MDB_PREV_NODUP
      case .nextDuplicate: MDB_NEXT_DUP
      case .lastDuplicate: MDB_LAST_DUP
      }
    }
  }

  @inline(__always) private func get(_ op: MDB_cursor_op) throws(LMDBError) -> Bool {
    precondition(isLive && transaction.isLive, "an LMDB cursor was used after its closure returned")
    let rc = mdb_cursor_get(handle, currentKey, currentValue, op)
    if rc == MDB_NOTFOUND { return false }
    try check(rc, "mdb_cursor_get", context: database.description)
    return true
  }

  /// Moves the cursor.
  /// - Returns: `false` when there is no such entry (the cursor's position is then unspecified).
  /// - Complexity: O(1) amortized for next/previous, O(log n) for first/last.
  @discardableResult
  public func move(_ movement: Movement) throws(LMDBError) -> Bool {
    try get(movement.operation)
  }

  /// Positions the cursor at `key` (`exact`) or at the first key greater than or equal to it.
  /// - Returns: `false` when there is no such key.
  /// - Complexity: O(log n).
  @discardableResult
  public func seek(_ key: UnsafeRawBufferPointer, exact: Bool = false) throws(LMDBError) -> Bool {
    currentKey.pointee = MDB_val(
      mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    return try get(exact ? MDB_SET_KEY : MDB_SET_RANGE)
  }

  /// Positions the cursor at `key` (`exact`) or at the first key greater than or equal to it.
  @inlinable @discardableResult
  public func seek(_ key: [UInt8], exact: Bool = false) throws -> Bool {
    try key.withUnsafeBytes { try seek($0, exact: exact) }
  }

  /// How many values the key at the cursor has, in a sorted-duplicates database
  /// (`mdb_cursor_count`).
  /// - Complexity: O(1).
  public func duplicateCount() throws(LMDBError) -> Int {
    precondition(isLive, "an LMDB cursor was used after its closure returned")
    var count = 0
    try check(mdb_cursor_count(handle, &count), "mdb_cursor_count", context: database.description)
    return count
  }

  /// The key at the cursor: valid until the cursor moves or the transaction ends.
  public var key: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: currentKey.pointee.mv_data, count: currentKey.pointee.mv_size)
  }

  /// The value at the cursor: valid until the cursor moves or the transaction ends.
  public var value: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: currentValue.pointee.mv_data, count: currentValue.pointee.mv_size)
  }

  /// Stores `value` under `key` through the cursor (faster than ``WriteTransaction/put(_:forKey:in:flags:)-…``
  /// for runs of sequential keys with ``WriteTransaction/PutFlags/append``).
  public func put(
    _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer,
    flags: WriteTransaction.PutFlags = []
  ) throws(LMDBError) {
    precondition(isLive, "an LMDB cursor was used after its closure returned")
    guard let writer = transaction as? WriteTransaction else {
      throw LMDBError(
        code: .init(rawValue: 13), operation: "mdb_cursor_put", context: "read-only transaction")
    }
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try writer.checkWrite(mdb_cursor_put(handle, &k, &v, flags.rawValue), "mdb_cursor_put", database)
  }

  /// Deletes the entry at the cursor.
  public func deleteCurrent() throws(LMDBError) {
    precondition(isLive, "an LMDB cursor was used after its closure returned")
    guard let writer = transaction as? WriteTransaction else {
      throw LMDBError(
        code: .init(rawValue: 13), operation: "mdb_cursor_del", context: "read-only transaction")
    }
    try writer.checkWrite(mdb_cursor_del(handle, 0), "mdb_cursor_del", database)
  }
}

@available(*, unavailable)
extension Cursor: Sendable {}
