import LMDB

/// Reads the tables of one projection: live (inside a read transaction) or as a replay
/// built them. Repositories read through it, so the same query code serves both.
///
/// A reader is valid only inside the closure that received it; the bytes handed to
/// ``forEach(in:from:_:)`` only during the call of its body.
public final class ProjectionReader {
  enum Backend {
    case lmdb(Transaction, [String: Database])
    case memory([String: MemoryTable])
  }

  /// The projection's name.
  public let projection: String
  let backend: Backend
  /// Whether its rows' dates are the seconds since 1970 (``RowReader/date()``): the live rows of
  /// an environment of format 3 or older opened read-only, which no upgrade has rebuilt yet.
  @usableFromInline let rowDatesSince1970: Bool

  init(projection: String, backend: Backend, rowDatesSince1970: Bool = false) {
    self.projection = projection
    self.backend = backend
    self.rowDatesSince1970 = rowDatesSince1970
  }

  private func unknown(_ table: String) -> EventStoreError {
    .invalidProjection("projection '\(projection)' has no table '\(table)'")
  }

  /// The value stored under `key` in `table`, or `nil`.
  /// - Complexity: O(log n).
  public func value(forKey key: [UInt8], in table: String) throws -> [UInt8]? {
    switch backend {
    case .lmdb(let txn, let databases):
      guard let database = databases[table] else { throw unknown(table) }
      return try storage { try key.withUnsafeBytes { try txn.value(forKey: $0, in: database) } }
    case .memory(let tables):
      guard let memory = tables[table] else { throw unknown(table) }
      return memory.value(forKey: key)
    }
  }

  /// Calls `body` with the bytes stored under `key` in `table` without copying them out, or
  /// returns `nil` when the key is absent. The bytes are valid only inside `body`.
  /// - Complexity: O(log n) live, O(1) on a replay's in-memory tables.
  public func withValue<R>(
    forKey key: UnsafeRawBufferPointer, in table: String, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    switch backend {
    case .lmdb(let txn, let databases):
      guard let database = databases[table] else { throw unknown(table) }
      return try storage { try txn.withValue(forKey: key, in: database, body) }
    case .memory(let tables):
      guard let memory = tables[table] else { throw unknown(table) }
      return try memory.withValue(forKey: key, body)
    }
  }

  /// The row stored under `key`, decoded, or `nil`.
  public func row<T: Decodable>(_ type: T.Type, forKey key: [UInt8], in table: String) throws -> T? {
    guard let bytes = try value(forKey: key, in: table) else { return nil }
    return try BinaryDecoder().decode(type, from: bytes)
  }

  /// Calls `body` for each entry of `table` in key order, from `start` (inclusive) on, until it
  /// returns `false`.
  /// - Complexity: O(log n + k) live; O(n log n) on a replay's in-memory tables.
  public func forEach(
    in table: String, from start: [UInt8]? = nil,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try scan(table, bound: start, direction: .forward, body)
  }

  /// Calls `body` for each entry of `table` in descending key order, from the last key before
  /// `end` (exclusive; the last key of the table when `nil`), until it returns `false`: the
  /// newest first of an index by date, without reading the others.
  /// - Complexity: O(log n + k) live; O(n log n) on a replay's in-memory tables.
  public func reverseForEach(
    in table: String, before end: [UInt8]? = nil,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try scan(table, bound: end, direction: .backward, body)
  }

  /// The scan of ``forEach(in:from:_:)`` (`bound` the first key, inclusive) and of
  /// ``reverseForEach(in:before:_:)`` (`bound` the key before which it starts, exclusive).
  private func scan(
    _ table: String, bound: [UInt8]?, direction: EventStore.ReadDirection,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    switch backend {
    case .lmdb(let txn, let databases):
      guard let database = databases[table] else { throw unknown(table) }
      try storage {
        try txn.withCursor(in: database) { cursor in
          var found = try Self.seek(cursor, bound, direction)
          while found {
            guard try body(cursor.key, cursor.value) else { return }
            found = try cursor.move(direction == .forward ? .next : .previous)
          }
        }
      }
    case .memory(let tables):
      guard let memory = tables[table] else { throw unknown(table) }
      try Self.forEach(of: memory, bound: bound, direction) { k, v in try body(k, v) }
    }
  }

  /// Calls `body` with the entries of an in-memory table in `direction` from `bound` (as
  /// ``scan(_:bound:direction:_:)`` takes it), until it returns `false`.
  private static func forEach(
    of memory: MemoryTable, bound: [UInt8]?, _ direction: EventStore.ReadDirection,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    let entries = memory.sortedEntries()
    let step = direction == .forward ? 1 : -1
    var index = direction == .forward ? entries.startIndex : entries.endIndex - 1
    while entries.indices.contains(index) {
      let entry = entries[index]
      index += step
      if let bound {
        let before = entry.key.lexicographicallyPrecedes(bound)
        if direction == .forward ? before : !before { continue }
      }
      let proceed = try entry.key.withUnsafeBytes { k in
        try entry.value.withUnsafeBytes { v in try body(k, v) }
      }
      if !proceed { return }
    }
  }

  /// Places `cursor` on the first entry of a scan in `direction` from `bound`; `false` when there
  /// is none.
  private static func seek(
    _ cursor: Cursor, _ bound: [UInt8]?, _ direction: EventStore.ReadDirection
  ) throws -> Bool {
    direction == .forward ? try seekForward(cursor, from: bound) : try seekBackward(cursor, before: bound)
  }

  /// Places `cursor` on the first key at or after `start` (the first key when `nil` or empty, which
  /// LMDB cannot seek); `false` when there is none.
  private static func seekForward(_ cursor: Cursor, from start: [UInt8]?) throws -> Bool {
    guard let start, !start.isEmpty else { return try cursor.move(.first) }
    return try cursor.seek(start)
  }

  /// Places `cursor` on the last key before `end` (the last key when `nil`); `false` when there
  /// is none.
  private static func seekBackward(_ cursor: Cursor, before end: [UInt8]?) throws -> Bool {
    guard let end else { return try cursor.move(.last) }
    guard !end.isEmpty else { return false }  // no key sorts before the empty one
    // The first key at or after `end`, then one back; past the end, the last key.
    return try cursor.seek(end) ? cursor.move(.previous) : cursor.move(.last)
  }

  /// Calls `body` with each entry of `index` in `direction` from `bound` (the first key,
  /// inclusive, forward; the key before which it starts, exclusive, backward) and the value
  /// `table` holds under the key `lookupKey` picks from the entry (`nil` when it holds none),
  /// until `body` returns `false`: an index scan joined to its rows, with both tables found once
  /// rather than by name for every entry (`read.all`: `Benchmarks/Results/FINDINGS.md`, finding 7).
  @usableFromInline
  func forEachEntry(
    in index: String, bound: [UInt8]?, direction: EventStore.ReadDirection, joinedTo table: String,
    lookupKey: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer,
    _ body: (_ key: UnsafeRawBufferPointer, _ row: UnsafeRawBufferPointer?) throws -> Bool
  ) throws {
    switch backend {
    case .lmdb(let txn, let databases):
      guard let indexDatabase = databases[index] else { throw unknown(index) }
      guard let rowDatabase = databases[table] else { throw unknown(table) }
      try storage {
        try txn.withCursor(in: indexDatabase) { cursor in
          var found = try Self.seek(cursor, bound, direction)
          while found {
            let key = cursor.key
            let proceed = try txn.withValue(forKey: lookupKey(key, cursor.value), in: rowDatabase) {
              try body(key, $0)
            }
            guard try proceed ?? body(key, nil) else { return }
            found = try cursor.move(direction == .forward ? .next : .previous)
          }
        }
      }
    case .memory(let tables):
      guard let memory = tables[index] else { throw unknown(index) }
      guard let rows = tables[table] else { throw unknown(table) }
      try Self.forEach(of: memory, bound: bound, direction) { k, v in
        try rows.withValue(forKey: lookupKey(k, v)) { try body(k, $0) } ?? body(k, nil)
      }
    }
  }

  /// Every row of `table` in key order, decoded.
  public func rows<T: Decodable>(_ type: T.Type, in table: String) throws -> [T] {
    var rows: [T] = []
    let decoder = BinaryDecoder()
    try forEach(in: table) { _, value in
      rows.append(try decoder.decode(type, from: value))
      return true
    }
    return rows
  }

  /// The number of entries in `table`.
  /// - Complexity: O(1).
  public func count(in table: String) throws -> Int {
    switch backend {
    case .lmdb(let txn, let databases):
      guard let database = databases[table] else { throw unknown(table) }
      return try storage { try txn.count(in: database) }
    case .memory(let tables):
      guard let memory = tables[table] else { throw unknown(table) }
      return memory.count
    }
  }
}

@available(*, unavailable)
extension ProjectionReader: Sendable {}
