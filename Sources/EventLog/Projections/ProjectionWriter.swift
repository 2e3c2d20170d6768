import LMDB

/// The tables of one projection as ``Projection/apply(_:to:)`` sees them: in LMDB inside the
/// append's write transaction, or in memory during a replay.
///
/// Keys and values are bytes; ``row(_:forKey:in:)`` and ``putRow(_:forKey:in:)`` store `Codable`
/// rows in the compact binary format of `BinaryEncoder`. Keys are 1 to 511 bytes, sorted
/// bytewise. A writer is valid only during the `apply` call that receives it.
public final class ProjectionWriter {
  enum Backend {
    case lmdb(WriteTransaction, [String: Database])
    case memory([String: MemoryTable])
  }

  /// The projection's name.
  public let projection: String
  /// The write transaction of the LMDB backend; `nil` for the in-memory one.
  private let transaction: WriteTransaction?
  /// The tables in small arrays: a linear search of a few names beats hashing a string on every
  /// call of the replay's hot path.
  private let memoryTables: [MemoryTable]
  private let databases: [(name: String, database: Database)]
  /// The log, for a projection that reads events back during its fold (a ``TableProjection``
  /// with updates folding a row's events again); `nil` where the fold has no log.
  var log: LogReader?

  init(projection: String, backend: Backend, log: LogReader? = nil) {
    self.projection = projection
    self.log = log
    switch backend {
    case .lmdb(let txn, let databases):
      self.transaction = txn
      self.databases = databases.map { (name: $0.key, database: $0.value) }
      self.memoryTables = []
    case .memory(let tables):
      self.transaction = nil
      self.databases = []
      self.memoryTables = Array(tables.values)
    }
  }

  private func unknown(_ table: String) -> EventStoreError {
    .invalidProjection("projection '\(projection)' has no table '\(table)'")
  }

  @inline(__always)
  private func memoryTable(_ name: String) throws -> MemoryTable {
    for table in memoryTables where table.name == name { return table }
    throw unknown(name)
  }

  @inline(__always)
  private func database(_ name: String) throws -> Database {
    for entry in databases where entry.name == name { return entry.database }
    throw unknown(name)
  }

  /// The value stored under `key` in `table`, or `nil`.
  /// - Complexity: O(log n) in LMDB, O(1) in memory.
  public func value(forKey key: [UInt8], in table: String) throws -> [UInt8]? {
    if let txn = transaction {
      let database = try database(table)
      return try key.withUnsafeBytes { try txn.value(forKey: $0, in: database) }
    } else {
      return try memoryTable(table).value(forKey: key)
    }
  }

  /// Calls `body` with the bytes stored under `key` in `table`, without copying them out.
  ///
  /// The bytes are valid only inside `body`, and `body` must not change this state (any table):
  /// a write can move or free them, in LMDB as in memory. Copy what a write needs first.
  /// - Returns: what `body` returns, or `nil` when the key is absent (`body` is not called).
  /// - Complexity: O(log n) in LMDB, O(1) in memory.
  @inlinable
  public func withValue<R>(
    forKey key: [UInt8], in table: String, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    // Inlined, so that the result is handled as its concrete type at the call site rather than
    // copied through value witnesses; the lookup itself is not generic.
    var result: R?
    try withStoredBytes(forKey: key, in: table) { result = try body($0) }
    return result
  }

  /// Calls `body` with the bytes stored under `key` (given as bytes in scratch memory) in
  /// `table`, without copying them out: ``withValue(forKey:in:_:)`` for keys built without an
  /// array.
  @inlinable
  public func withValue<R>(
    forKey key: UnsafeRawBufferPointer, in table: String, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    var result: R?
    try withStoredBytes(forKey: key, in: table) { result = try body($0) }
    return result
  }

  /// Calls `body` with the bytes stored under `key` in `table`, if any.
  @usableFromInline
  func withStoredBytes(
    forKey key: [UInt8], in table: String, _ body: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try key.withUnsafeBytes { try withStoredBytes(forKey: $0, in: table, body) }
  }

  /// Calls `body` with the bytes stored under `key` in `table`, if any.
  @usableFromInline
  func withStoredBytes(
    forKey key: UnsafeRawBufferPointer, in table: String, _ body: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    if let txn = transaction {
      _ = try txn.withValue(forKey: key, in: try database(table), body)
    } else {
      _ = try memoryTable(table).withValue(forKey: key, body)
    }
  }

  /// Calls `body` with the bytes stored under `key` in `table`, which it may change in place (not
  /// their length), and keeps the change when it returns `true`: in memory one lookup for a read
  /// and a write; in LMDB a copy, put back when changed. `body` must not change this state
  /// otherwise.
  /// - Returns: `nil` when the key is absent (`body` is not called), else what `body` returned.
  func modifyValue(
    forKey key: UnsafeRawBufferPointer, in table: String,
    _ body: (UnsafeMutableRawBufferPointer) throws -> Bool
  ) throws -> Bool? {
    if let txn = transaction {
      let database = try database(table)
      guard var copy = try txn.value(forKey: key, in: database) else { return nil }
      let changed = try copy.withUnsafeMutableBytes(body)
      if changed { try copy.withUnsafeBytes { try txn.put($0, forKey: key, in: database) } }
      return changed
    } else {
      return try memoryTable(table).withMutableValue(forKey: key, body)
    }
  }

  /// Stores `value` under `key` in `table`, replacing what was there. Both are copied.
  public func put(_ value: [UInt8], forKey key: [UInt8], in table: String) throws {
    try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(v, forKey: k, in: table) } }
  }

  /// Stores a copy of `value` under a copy of `key` in `table`, replacing what was there: for
  /// keys and rows built in scratch memory (`withUnsafeBytes(of:)`, a temporary allocation), so
  /// that a hot `apply` creates no array.
  public func put(
    _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in table: String
  ) throws {
    if let txn = transaction {
      try txn.put(value, forKey: key, in: try database(table))
    } else {
      try memoryTable(table).setValue(value, forKey: key)
    }
  }

  /// Stores a copy of `value` under a copy of `key` in `table` unless `key` is present there.
  /// - Returns: whether it stored them (`false`: the key was present, and nothing changed).
  /// - Complexity: O(log n) in LMDB (one search), O(1) in memory.
  public func insert(
    _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in table: String
  ) throws -> Bool {
    if let txn = transaction {
      do {
        try txn.put(value, forKey: key, in: try database(table), flags: .noOverwrite)
        return true
      } catch let error as LMDBError where error.code == .keyExists {
        return false
      }
    } else {
      return try memoryTable(table).insertValue(value, forKey: key)
    }
  }

  /// Removes `key` from `table`.
  /// - Returns: whether it was there.
  @discardableResult
  public func delete(forKey key: [UInt8], in table: String) throws -> Bool {
    try key.withUnsafeBytes { try delete(forKey: $0, in: table) }
  }

  /// Removes `key` (given as bytes in scratch memory) from `table`.
  /// - Returns: whether it was there.
  @discardableResult
  public func delete(forKey key: UnsafeRawBufferPointer, in table: String) throws -> Bool {
    if let txn = transaction {
      return try txn.delete(forKey: key, in: try database(table))
    } else {
      return try memoryTable(table).removeValue(forKey: key)
    }
  }

  /// The row stored under `key`, decoded, or `nil`.
  public func row<T: Decodable>(_ type: T.Type, forKey key: [UInt8], in table: String) throws -> T? {
    guard let bytes = try value(forKey: key, in: table) else { return nil }
    return try BinaryDecoder().decode(type, from: bytes)
  }

  /// Stores `row`, encoded, under `key`.
  public func putRow<T: Encodable>(_ row: T, forKey key: [UInt8], in table: String) throws {
    try put(BinaryEncoder().encode(row), forKey: key, in: table)
  }
}

@available(*, unavailable)
extension ProjectionWriter: Sendable {}
