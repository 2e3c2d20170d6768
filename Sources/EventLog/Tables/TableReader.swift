import Foundation

/// Reads a ``TableProjection``'s rows from a ``ProjectionReader``, live or replayed alike: one row by
/// key, every row in primary-key or an index's order, a range or a prefix of an index, counts.
///
/// Ranges compare an index's key (without the primary key its entries end in) bytewise: `from`
/// is inclusive, `to` exclusive, and `prefix` keeps the keys that start with it
/// (``TableKey/caseInsensitivePrefix(_:)`` for the texts that start so). Every read goes either
/// way: `direction: .backward` gives the same rows last first (the newest first of an index by
/// date), starting at the range's end without reading what lies past it. Valid only inside the
/// closure that received the view.
public struct TableReader<Row: TableRow> {
  /// The projection's tables.
  public let view: ProjectionReader
  @usableFromInline let schema: TableSchema<Row>

  @inlinable
  init(view: ProjectionReader, schema: TableSchema<Row>) {
    self.view = view
    self.schema = schema
  }

  /// The row under the primary key `key`, or `nil`.
  /// - Complexity: O(log n) live, O(1) on a replay.
  @inlinable
  public func row(forKey key: TableKey) throws -> Row? {
    try key.bytes.withUnsafeBytes { key in
      try view.withValue(forKey: key, in: schema.rowTable) {
        try Row(storedBytes: $0, datesSince1970: view.rowDatesSince1970)
      }
    }
  }

  /// The ID of the latest event (by stamp) of the row under `key`, in a table with updates; `nil`
  /// when the table has no event for the key, or has no updates.
  ///
  /// A write names it as its `causationID` (``EventMetadata``) to say what it had seen: the
  /// convergent rule then records a ``Conflict`` where it overwrites a write it had not seen
  /// (``EntityRepository`` does so).
  /// - Parameter key: the row's primary key.
  /// - Returns: the event's ID, or `nil`.
  /// - Throws: a storage error.
  /// - Complexity: O(log n).
  public func latestEventID(forKey key: TableKey) throws -> UUID? {
    guard schema.converges else { return nil }
    return try key.bytes.withUnsafeBytes { key in
      try view.withValue(forKey: key, in: RowStamps.table) { entry -> UUID? in
        entry.count >= Stamp.size ? Stamp.eventID(stored: entry) : nil
      }
    } ?? nil
  }

  /// The number of rows.
  /// - Complexity: O(1).
  @inlinable
  public func count() throws -> Int { try view.count(in: schema.rowTable) }

  /// The number of rows in a range or prefix of `index` (every row when none is given).
  /// - Complexity: O(1) for the whole index, else O(log n + k) live.
  @inlinable
  public func count(
    in index: TableIndex<Row>, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil
  ) throws -> Int {
    if from == nil && to == nil && prefix == nil { return try view.count(in: index.name) }
    var count = 0
    try forEachEntry(in: index, from: from, to: to, prefix: prefix) { _, _ in
      count += 1
      return true
    }
    return count
  }

  /// Calls `body` with every row in primary-key order (`.backward`: the last key first) until it
  /// returns `false`.
  /// - Complexity: O(n), one sequential scan live.
  @inlinable
  public func forEach(direction: EventStore.ReadDirection = .forward, _ body: (Row) throws -> Bool) throws {
    switch direction {
    case .forward:
      try view.forEach(in: schema.rowTable) { _, value in
        try body(try Row(storedBytes: value, datesSince1970: view.rowDatesSince1970))
      }
    case .backward:
      try view.reverseForEach(in: schema.rowTable) { _, value in
        try body(try Row(storedBytes: value, datesSince1970: view.rowDatesSince1970))
      }
    }
  }

  /// Calls `body` with the rows of `index` in its order (within the range or prefix given;
  /// `.backward`: last first) until it returns `false`.
  /// - Complexity: O(log n + k) live: a sequential scan of the index, and for an index that holds
  ///   keys only a lookup by primary key per row.
  @inlinable
  public func forEach(
    in index: TableIndex<Row>, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil,
    direction: EventStore.ReadDirection = .forward, _ body: (Row) throws -> Bool
  ) throws {
    if index.storesRows {
      try forEachEntry(in: index, from: from, to: to, prefix: prefix, direction: direction) { _, value in
        try body(try Row(storedBytes: value, datesSince1970: view.rowDatesSince1970))
      }
      return
    }
    // A keys-only index: each entry's row looked up by its primary key, both tables found once.
    let visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Bool = { key, stored in
      if !Self.contains(key, from: from, to: to, prefix: prefix) { return false }
      guard let stored else {
        throw TableError.danglingIndexEntry(
          projection: schema.projection, index: index.name, key: TableKey(bytes: Array(key)))
      }
      return try body(try Row(storedBytes: stored, datesSince1970: view.rowDatesSince1970))
    }
    let lookupKey: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> UnsafeRawBufferPointer = {
      key, value in
      schema.primaryKey(ofEntry: key, value: value)
    }
    let bound =
      direction == .forward ? Self.start(from: from, prefix: prefix) : Self.end(to: to, prefix: prefix)
    try view.forEachEntry(
      in: index.name, bound: bound, direction: direction, joinedTo: schema.rowTable, lookupKey: lookupKey,
      visit)
  }

  /// Whether an entry's key is in the range and prefix, for a scan that starts inside them: the
  /// first key outside ends the scan either way.
  @inlinable
  static func contains(
    _ key: UnsafeRawBufferPointer, from: TableKey?, to: TableKey?, prefix: TableKey?
  ) -> Bool {
    if let to, !key.lexicographicallyPrecedes(to.bytes) { return false }
    if let from, key.lexicographicallyPrecedes(from.bytes) { return false }
    if let prefix, !key.starts(with: prefix.bytes) { return false }
    return true
  }

  /// Where a scan of a range or prefix starts: the later of the two.
  @inlinable
  static func start(from: TableKey?, prefix: TableKey?) -> [UInt8]? {
    switch (from?.bytes, prefix?.bytes) {
    case (nil, nil): nil
    case (let from?, nil): from
    case (nil, let prefix?): prefix
    case (let from?, let prefix?): from.lexicographicallyPrecedes(prefix) ? prefix : from
    }
  }

  /// Every row in primary-key order, or in `index`'s order (within the range or prefix given), at
  /// most `limit` of them; `.backward` gives the last ones, last first (`limit: 10` reads ten).
  /// - Complexity: as ``forEach(direction:_:)`` and ``forEach(in:from:to:prefix:direction:_:)``;
  ///   a read of every row allocates the array once, at the table's ``count()``.
  @inlinable
  public func rows(
    in index: TableIndex<Row>? = nil, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil,
    direction: EventStore.ReadDirection = .forward, limit: Int = .max
  ) throws -> [Row] {
    try rows(in: index, from: from, to: to, prefix: prefix, direction: direction, limit: limit) { $0 }
  }

  /// The rows ``rows(in:from:to:prefix:direction:limit:)`` reads, each turned into a `T` as it is
  /// read, with no array of rows in between: what a repository lists
  /// (`reader.rows(in: Users.byName, as: User.init)`).
  /// - Complexity: as ``rows(in:from:to:prefix:direction:limit:)``, plus `transform` per row.
  @inlinable
  public func rows<T>(
    in index: TableIndex<Row>? = nil, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil,
    direction: EventStore.ReadDirection = .forward, limit: Int = .max, as transform: (Row) throws -> T
  ) throws -> [T] {
    var result: [T] = []
    guard limit > 0 else { return result }
    // Every row (an index has one entry per row): the count is O(1), so the array never grows.
    // A range's size is not known without reading it.
    if from == nil && to == nil && prefix == nil { result.reserveCapacity(min(limit, try count())) }
    let collect: (Row) throws -> Bool = { row in
      result.append(try transform(row))
      return result.count < limit
    }
    if let index {
      try forEach(in: index, from: from, to: to, prefix: prefix, direction: direction, collect)
    } else {
      precondition(from == nil && to == nil && prefix == nil, "a range needs an index")
      try forEach(direction: direction, collect)
    }
    return result
  }

  /// Calls `body` with the entries of `index` within the range and prefix, in key order
  /// (`.backward`: descending).
  @inlinable
  func forEachEntry(
    in index: TableIndex<Row>, from: TableKey?, to: TableKey?, prefix: TableKey?,
    direction: EventStore.ReadDirection = .forward,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    let visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool = { key, value in
      guard Self.contains(key, from: from, to: to, prefix: prefix) else { return false }
      return try body(key, value)
    }
    switch direction {
    case .forward: try view.forEach(in: index.name, from: Self.start(from: from, prefix: prefix), visit)
    case .backward: try view.reverseForEach(in: index.name, before: Self.end(to: to, prefix: prefix), visit)
    }
  }

  /// Where a backward scan of a range or prefix starts (exclusive): the earlier of `to` and the
  /// first key past every key that starts with `prefix`; `nil`: at the last key.
  @inlinable
  static func end(to: TableKey?, prefix: TableKey?) -> [UInt8]? {
    // The prefix with its last byte that is not 0xFF raised by one, and what follows it dropped.
    var pastPrefix: [UInt8]?
    if var bytes = prefix?.bytes {
      while bytes.last == 0xFF { bytes.removeLast() }
      if let last = bytes.last {
        bytes[bytes.count - 1] = last + 1
        pastPrefix = bytes
      }
    }
    switch (to?.bytes, pastPrefix) {
    case (nil, nil): return nil
    case (let to?, nil): return to
    case (nil, let past?): return past
    case (let to?, let past?): return to.lexicographicallyPrecedes(past) ? to : past
    }
  }
}

@available(*, unavailable)
extension TableReader: Sendable {}
