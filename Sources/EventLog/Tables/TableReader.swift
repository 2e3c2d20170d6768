/// Reads a ``TableProjection``'s rows from a ``ProjectionView``, live or replayed alike: one row by
/// key, every row in primary-key or an index's order, a range or a prefix of an index, counts.
///
/// Ranges compare an index's key (without the primary key its entries end in) bytewise: `from`
/// is inclusive, `to` exclusive, and `prefix` keeps the keys that start with it
/// (``TableKey/caseInsensitivePrefix(_:)`` for the texts that start so). Valid only inside the
/// closure that received the view.
public struct TableReader<Row: TableRow> {
  /// The projection's tables.
  public let view: ProjectionView
  @usableFromInline let schema: TableSchema<Row>

  @inlinable
  init(view: ProjectionView, schema: TableSchema<Row>) {
    self.view = view
    self.schema = schema
  }

  /// The row under the primary key `key`, or `nil`.
  /// - Complexity: O(log n) live, O(1) on a replay.
  @inlinable
  public func row(forKey key: TableKey) throws -> Row? {
    try key.bytes.withUnsafeBytes { key in
      try view.withValue(forKey: key, in: schema.rowTable) { try Row(storedBytes: $0) }
    }
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

  /// Calls `body` with every row in primary-key order until it returns `false`.
  /// - Complexity: O(n), one sequential scan live.
  @inlinable
  public func forEach(_ body: (Row) throws -> Bool) throws {
    try view.forEach(in: schema.rowTable) { _, value in try body(try Row(storedBytes: value)) }
  }

  /// Calls `body` with the rows of `index` in its order (within the range or prefix given) until
  /// it returns `false`.
  /// - Complexity: O(log n + k) live: a sequential scan of the index, and for an index that holds
  ///   keys only a lookup by primary key per row.
  @inlinable
  public func forEach(
    in index: TableIndex<Row>, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil,
    _ body: (Row) throws -> Bool
  ) throws {
    if index.storesRows {
      try forEachEntry(in: index, from: from, to: to, prefix: prefix) { _, value in
        try body(try Row(storedBytes: value))
      }
      return
    }
    // A keys-only index: each entry's row looked up by its primary key, both tables found once.
    let start = Self.start(from: from, prefix: prefix)
    try view.forEachEntry(
      in: index.name, from: start, joinedTo: schema.rowTable,
      lookupKey: { key, value in schema.primaryKey(ofEntry: key, value: value) }
    ) { key, stored in
      if let to, !key.lexicographicallyPrecedes(to.bytes) { return false }
      if let prefix, !key.starts(with: prefix.bytes) { return false }
      guard let stored else {
        throw TableError.danglingIndexEntry(
          projection: schema.projection, index: index.name, key: TableKey(bytes: Array(key)))
      }
      return try body(try Row(storedBytes: stored))
    }
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
  /// most `limit` of them.
  @inlinable
  public func rows(
    in index: TableIndex<Row>? = nil, from: TableKey? = nil, to: TableKey? = nil, prefix: TableKey? = nil,
    limit: Int = .max
  ) throws -> [Row] {
    var rows: [Row] = []
    guard limit > 0 else { return rows }
    let collect: (Row) -> Bool = { row in
      rows.append(row)
      return rows.count < limit
    }
    if let index {
      try forEach(in: index, from: from, to: to, prefix: prefix, collect)
    } else {
      precondition(from == nil && to == nil && prefix == nil, "a range needs an index")
      try forEach(collect)
    }
    return rows
  }

  /// Calls `body` with the entries of `index` within the range and prefix, in key order.
  @inlinable
  func forEachEntry(
    in index: TableIndex<Row>, from: TableKey?, to: TableKey?, prefix: TableKey?,
    _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try view.forEach(in: index.name, from: Self.start(from: from, prefix: prefix)) { key, value in
      if let to, !key.lexicographicallyPrecedes(to.bytes) { return false }
      if let prefix, !key.starts(with: prefix.bytes) { return false }
      return try body(key, value)
    }
  }
}

@available(*, unavailable)
extension TableReader: Sendable {}
