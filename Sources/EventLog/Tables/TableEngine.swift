/// The byte-level layout of a ``TableProjection``'s tables, without its row type: what the engine
/// needs to keep the indexes in step.
@usableFromInline
final class TableLayout: Sendable {
  @usableFromInline let projection: String
  @usableFromInline let rowTable: String
  /// The width of every primary key, or `nil` when it varies (keys-only index entries then hold
  /// the primary key as their value).
  @usableFromInline let primaryKeyWidth: Int?
  @usableFromInline let indexes: [IndexLayout]

  init(projection: String, rowTable: String, primaryKeyWidth: Int?, indexes: [IndexLayout]) {
    self.projection = projection
    self.rowTable = rowTable
    self.primaryKeyWidth = primaryKeyWidth
    self.indexes = indexes
  }
}

/// One index's layout: its table, what its entries hold, and how its key is read from a stored
/// row.
@usableFromInline
struct IndexLayout: Sendable {
  @usableFromInline let name: String
  @usableFromInline let storesRows: Bool
  /// Writes the index's key of a stored row: the index's own fast path, else the row decoded.
  @usableFromInline let keyOfStoredRow: @Sendable (UnsafeRawBufferPointer, inout KeyBuilder) throws -> Void
  /// Whether ``keyOfStoredRow`` is the index's fast path (rows given as bytes need one).
  @usableFromInline let hasFastPath: Bool
}

/// A reference lent for the length of a call, held without retaining it: a trivial value, so
/// closures that capture it retain nothing (a retain and a release of each reference for every
/// event and projection cost replay a tenth of its time). Safe only while the lender holds the
/// object, which is how ``TableEngine`` and ``TableWriter`` use it: within one `apply` call.
@usableFromInline
struct Lent<Object: AnyObject> {
  @usableFromInline let reference: Unmanaged<Object>

  @inlinable init(_ object: Object) { reference = .passUnretained(object) }

  /// Calls `body` with the object, lent again without a retain.
  @inlinable @inline(__always)
  func use<R>(_ body: (Object) throws -> R) rethrows -> R { try reference._withUnsafeGuaranteedRef(body) }
}

/// The table engine: stores, replaces and deletes rows given as bytes and keeps every index in
/// step. Not generic, so the hot path of a fold asks the runtime for no type metadata, and its
/// state and layout are ``Lent``, so it retains nothing.
@usableFromInline
enum TableEngine {
  /// Stores `row` under `primaryKey` and keeps every index in step: a new key inserts the row and
  /// its entries; a stored one replaces the row and moves the entries whose keys changed.
  /// - Parameters:
  ///   - row: the row's stored bytes.
  ///   - primaryKey: the row's primary key.
  ///   - newKey: writes index `i`'s key of the new row (without the primary key).
  ///   - known: the old row's entry keys when the caller knows the old row (an update), else
  ///     `nil`: they are read from the stored row.
  ///   - state: the projection's tables, written in place.
  ///   - layout: the projection's row table and indexes.
  /// - Throws: ``TableError/invalidKey(projection:table:length:)`` for a key LMDB cannot store,
  ///   what `newKey` or an index's key of the stored row throws, and the state's storage errors.
  @usableFromInline
  static func store(
    _ row: UnsafeRawBufferPointer, primaryKey: UnsafeRawBufferPointer,
    newKey: (Int, inout KeyBuilder) throws -> Void, oldEntries known: [[UInt8]]?,
    state: Lent<ProjectionWriter>,
    layout: Lent<TableLayout>
  ) throws {
    try layout.use { layout in
      try checkKey(primaryKey, table: layout.rowTable, projection: layout.projection)
      try layout.indexes.withUnsafeBufferPointer { indexes in
        try store(
          row, primaryKey: primaryKey, indexes: indexes, newKey: newKey, oldEntries: known, state: state,
          rowTable: layout.rowTable, layout: layout)
      }
    }
  }

  private static func store(
    _ row: UnsafeRawBufferPointer, primaryKey: UnsafeRawBufferPointer,
    indexes: UnsafeBufferPointer<IndexLayout>,
    newKey: (Int, inout KeyBuilder) throws -> Void, oldEntries known: [[UInt8]]?,
    state: Lent<ProjectionWriter>,
    rowTable: String, layout: TableLayout
  ) throws {
    let projection = layout.projection
    let fixedWidth = layout.primaryKeyWidth != nil
    if known == nil, try state.use({ try $0.insert(row, forKey: primaryKey, in: rowTable) }) {
      // A new key (the usual case): one lookup, and the index entries.
      for position in indexes.indices {
        try withEntryKey(primaryKey: primaryKey, table: indexes[position].name, projection: projection) {
          try newKey(position, &$0)
        } use: { entry in
          try putEntry(
            entry, index: indexes[position], row: row, primaryKey: primaryKey, fixedWidth: fixedWidth, state)
        }
      }
      return
    }
    // A replacement: the old entries' keys, before the old row's bytes are overwritten.
    var oldEntries = known ?? []
    if known == nil && !indexes.isEmpty {
      oldEntries =
        try state.use { state in
          try state.withValue(forKey: primaryKey, in: rowTable) { stored in
            try indexes.indices.map { position in
              try withEntryKey(primaryKey: primaryKey, table: indexes[position].name, projection: projection)
              {
                try indexes[position].keyOfStoredRow(stored, &$0)
              } use: {
                Array($0)
              }
            }
          }
        } ?? []
    }
    try state.use { try $0.put(row, forKey: primaryKey, in: rowTable) }
    for (position, oldEntry) in zip(indexes.indices, oldEntries) {
      try withEntryKey(primaryKey: primaryKey, table: indexes[position].name, projection: projection) {
        try newKey(position, &$0)
      } use: { entry in
        if entry.elementsEqual(oldEntry) {
          // The same key: only a stored copy of the row changes.
          if indexes[position].storesRows {
            try putEntry(
              entry, index: indexes[position], row: row, primaryKey: primaryKey, fixedWidth: fixedWidth, state
            )
          }
        } else {
          _ = try state.use { state in
            try oldEntry.withUnsafeBytes { try state.delete(forKey: $0, in: indexes[position].name) }
          }
          try putEntry(
            entry, index: indexes[position], row: row, primaryKey: primaryKey, fixedWidth: fixedWidth, state)
        }
      }
    }
  }

  /// Stores a row given as bytes, its index keys read from it by each index's fast path.
  @usableFromInline
  static func store(
    encoded row: UnsafeRawBufferPointer, primaryKey: UnsafeRawBufferPointer, state: Lent<ProjectionWriter>,
    layout: Lent<TableLayout>
  ) throws {
    try layout.use { layout in
      try checkKey(primaryKey, table: layout.rowTable, projection: layout.projection)
      try layout.indexes.withUnsafeBufferPointer { indexes in
        try store(
          row, primaryKey: primaryKey, indexes: indexes,
          newKey: { position, key in
            precondition(
              indexes[position].hasFastPath,
              "index '\(indexes[position].name)' has no keyOfStoredRow: a row given as bytes cannot be indexed"
            )
            try indexes[position].keyOfStoredRow(row, &key)
          }, oldEntries: nil, state: state, rowTable: layout.rowTable, layout: layout)
      }
    }
  }

  /// Deletes the row under `primaryKey` and its index entries.
  /// - Returns: whether there was a row.
  @usableFromInline
  static func delete(
    primaryKey: UnsafeRawBufferPointer, state: Lent<ProjectionWriter>, layout: Lent<TableLayout>
  ) throws -> Bool {
    try layout.use { layout in
      try checkKey(primaryKey, table: layout.rowTable, projection: layout.projection)
      return try layout.indexes.withUnsafeBufferPointer { indexes in
        try delete(
          primaryKey: primaryKey, indexes: indexes, state: state, rowTable: layout.rowTable,
          projection: layout.projection)
      }
    }
  }

  private static func delete(
    primaryKey: UnsafeRawBufferPointer, indexes: UnsafeBufferPointer<IndexLayout>,
    state: Lent<ProjectionWriter>,
    rowTable: String, projection: String
  ) throws -> Bool {
    if indexes.isEmpty { return try state.use { try $0.delete(forKey: primaryKey, in: rowTable) } }
    // The entries' keys are worked out while the stored row is lent, then removed with it. The
    // closures capture nothing that is reference counted.
    let stride = TableKey.maximumLength
    var overflow: Int?
    let found = try withUnsafeTemporaryAllocation(of: Int.self, capacity: indexes.count) { lengths in
      try withUnsafeTemporaryAllocation(byteCount: stride * indexes.count, alignment: 8) { keys -> Bool in
        let stored: Void? = try state.use { state in
          try state.withValue(forKey: primaryKey, in: rowTable) { stored in
            for position in indexes.indices {
              var key = KeyBuilder(UnsafeMutableRawBufferPointer(rebasing: keys[(position * stride)...]))
              try indexes[position].keyOfStoredRow(stored, &key)
              key.bytes(primaryKey)
              if key.overflowed { overflow = position }
              lengths[position] = key.count
            }
          }
        }
        guard stored != nil, overflow == nil else { return false }
        try state.use { state in
          try state.delete(forKey: primaryKey, in: rowTable)
          for position in indexes.indices {
            let start = position * stride
            try state.delete(
              forKey: UnsafeRawBufferPointer(rebasing: keys[start..<(start + lengths[position])]),
              in: indexes[position].name)
          }
        }
        return true
      }
    }
    if let overflow {
      throw TableError.invalidKey(
        projection: projection, table: indexes[overflow].name, length: TableKey.maximumLength + 1)
    }
    return found
  }

  /// The entry key `write` writes, then the primary key, as an array.
  @usableFromInline
  static func entryKey(
    primaryKey: UnsafeRawBufferPointer, table: String, projection: String,
    _ write: (inout KeyBuilder) throws -> Void
  ) throws -> [UInt8] {
    try withEntryKey(primaryKey: primaryKey, table: table, projection: projection, write) { Array($0) }
  }

  /// Calls `use` with the entry key that `write` writes, then the primary key.
  /// - Throws: ``TableError/invalidKey(projection:table:length:)`` for a key that is too long.
  static func withEntryKey<R>(
    primaryKey: UnsafeRawBufferPointer, table: @autoclosure () -> String,
    projection: @autoclosure () -> String,
    _ write: (inout KeyBuilder) throws -> Void, use: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R {
    // The closure captures nothing that is reference counted: an error's names are made outside.
    let result: R? = try withUnsafeTemporaryAllocation(byteCount: TableKey.maximumLength, alignment: 8) {
      buffer in
      var key = KeyBuilder(buffer)
      try write(&key)
      key.bytes(primaryKey)
      if key.overflowed { return nil }
      return try use(key.bytes)
    }
    guard let result else {
      throw TableError.invalidKey(
        projection: projection(), table: table(), length: TableKey.maximumLength + 1)
    }
    return result
  }

  /// Stores an entry of `index`: the row, an empty value (a fixed-width primary key is the key's
  /// end) or the primary key.
  private static func putEntry(
    _ entry: UnsafeRawBufferPointer, index: borrowing IndexLayout, row: UnsafeRawBufferPointer,
    primaryKey: UnsafeRawBufferPointer, fixedWidth: Bool, _ state: Lent<ProjectionWriter>
  ) throws {
    let value =
      index.storesRows ? row : fixedWidth ? UnsafeRawBufferPointer(rebasing: primaryKey[0..<0]) : primaryKey
    try state.use { try $0.put(value, forKey: entry, in: index.name) }
  }

  static func checkKey(_ key: UnsafeRawBufferPointer, table: String, projection: String) throws {
    guard !key.isEmpty, key.count <= TableKey.maximumLength else {
      throw TableError.invalidKey(projection: projection, table: table, length: key.count)
    }
  }

}
