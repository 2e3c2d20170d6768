/// A ``TableProjection``'s rows as its handlers and its hook change them, inside the append's
/// transaction or in a replay: every put, replace and delete keeps every index in step.
///
/// Valid only during the `apply` call that made it, like the ``ProjectionWriter`` it wraps.
public struct TableWriter<Row: TableRow> {
  /// The projection's tables and schema, lent by the `apply` call that made the writer and not
  /// retained (``Lent``): the writer is valid only during that call, whose caller holds the state
  /// and whose projection holds the schema, and it is not `Sendable`.
  @usableFromInline let lentState: Lent<ProjectionWriter>
  @usableFromInline let lentSchema: Lent<TableSchema<Row>>

  @inlinable
  init(state: ProjectionWriter, schema: TableSchema<Row>) {
    lentState = Lent(state)
    lentSchema = Lent(schema)
  }

  /// The projection's tables, for a hook's work on its extra tables. Writing the row table or an
  /// index directly would leave them out of step: use the writer's methods for those.
  @inlinable public var state: ProjectionWriter { lentState.use { $0 } }

  /// Calls `body` with the projection's tables, lent without a retain: for a measured fast path
  /// in a hook that writes a row and its index entries itself, exactly as the engine would (the
  /// row under its primary key in the row table; in each index, the index's key then the primary
  /// key). Nothing checks that it does: a test should build the tables both ways and compare them.
  @inlinable
  public func withState<R>(_ body: (ProjectionWriter) throws -> R) rethrows -> R { try lentState.use(body) }

  /// Calls `body` with the state and the schema, lent without a retain.
  @inlinable
  func withParts<R>(_ body: (ProjectionWriter, TableSchema<Row>) throws -> R) rethrows -> R {
    try lentState.use { state in try lentSchema.use { schema in try body(state, schema) } }
  }

  /// The projection's name.
  @inlinable public var projection: String { lentSchema.use { $0.layout.projection } }

  // MARK: Rows

  /// The row under `key`, or `nil`.
  @inlinable
  public func row(forKey key: TableKey) throws -> Row? {
    try withParts { state, schema in
      try key.bytes.withUnsafeBytes { key in
        try state.withValue(forKey: key, in: schema.layout.rowTable) { try Row(storedBytes: $0) }
      }
    }
  }

  /// Stores `row` under its primary key, replacing the row stored there, and updates every index.
  @inlinable
  public func put(_ row: Row) throws {
    try withParts { state, schema in
      try TableKey.KeyBuilder.withKey({ schema.primaryKey.write(row, &$0) }) { primaryKey in
        try RowWriter.withRow({ try row.write(to: &$0) }) { bytes in
          try TableEngine.store(
            bytes, primaryKey: primaryKey, newKey: { schema.indexes[$0].key.write(row, &$1) },
            oldEntries: nil,
            state: lentState, layout: Lent(schema.layout))
        }
      }
    }
  }

  /// Changes the row under `key` with `change` (which must not change its primary key) and updates
  /// every index whose key changed.
  /// - Returns: whether there was a row.
  @inlinable @discardableResult
  public func update(forKey key: TableKey, _ change: (inout Row) throws -> Void) throws -> Bool {
    guard var row = try self.row(forKey: key) else { return false }
    let old = row
    try change(&row)
    let changed = row
    try withParts { state, schema in
      try key.bytes.withUnsafeBytes { primaryKey in
        let moved = TableKey.KeyBuilder.withKey({ schema.primaryKey.write(changed, &$0) }) {
          !$0.elementsEqual(primaryKey)
        }
        precondition(
          !moved, "an update of projection '\(schema.layout.projection)' changed a row's primary key")
        let oldEntries = try schema.indexes.indices.map { position in
          try TableEngine.entryKey(
            primaryKey: primaryKey, table: schema.indexes[position].name, projection: schema.layout.projection
          ) { schema.indexes[position].key.write(old, &$0) }
        }
        try RowWriter.withRow({ try changed.write(to: &$0) }) { bytes in
          try TableEngine.store(
            bytes, primaryKey: primaryKey, newKey: { schema.indexes[$0].key.write(changed, &$1) },
            oldEntries: oldEntries, state: lentState, layout: Lent(schema.layout))
        }
      }
    }
    return true
  }

  /// Deletes the row under `key` and its index entries.
  /// - Returns: whether there was a row.
  @inlinable @discardableResult
  public func delete(forKey key: TableKey) throws -> Bool {
    try key.bytes.withUnsafeBytes { try delete(primaryKey: $0) }
  }

  // MARK: Rows as bytes (fast paths)

  /// Stores a row given as its stored bytes (what ``TableRow/write(to:)`` writes) under
  /// `primaryKey`: for a hook that builds rows straight from payload bytes. Every index must have
  /// a `keyOfStoredRow` (``TableIndex/init(_:_:storesRows:keyOfStoredRow:)``).
  @inlinable
  public func put(encodedRow row: UnsafeRawBufferPointer, primaryKey: UnsafeRawBufferPointer) throws {
    try lentSchema.use { schema in
      try TableEngine.store(
        encoded: row, primaryKey: primaryKey, state: lentState, layout: Lent(schema.layout))
    }
  }

  /// Deletes the row under `primaryKey` (given as bytes) and its index entries.
  /// - Returns: whether there was a row.
  @inlinable @discardableResult
  public func delete(primaryKey: UnsafeRawBufferPointer) throws -> Bool {
    try lentSchema.use { schema in
      try TableEngine.delete(primaryKey: primaryKey, state: lentState, layout: Lent(schema.layout))
    }
  }
}

extension TableWriter {
  // MARK: The convergent rule (a table with updates)

  /// Records `event` among the stamps of the row under `key`, and says how it arrived: the
  /// row's first event, after its latest (apply it to the row as it is), or before it (fold
  /// the row again: ``refold(_:)``, which records it).
  @usableFromInline
  func arrival(of event: RecordedEvent, key: TableKey) throws -> RowArrival {
    try withParts { state, schema in
      try key.bytes.withUnsafeBytes {
        try RowStamps.arrival(of: event, key: $0, state: state, projection: schema.layout.projection)
      }
    }
  }

  /// ``arrival(of:key:)`` for the row `row` (a create's).
  @inlinable
  func arrival(of event: RecordedEvent, row: Row) throws -> RowArrival {
    try withParts { state, schema in
      try TableKey.KeyBuilder.withKey({ schema.primaryKey.write(row, &$0) }) {
        try RowStamps.arrival(of: event, key: $0, state: state, projection: schema.layout.projection)
      }
    }
  }

  /// Folds the row `event` acts on again, from its events in stamp order, `event` among them.
  @usableFromInline
  func refold(_ event: RecordedEvent) throws {
    try lentSchema.use { try $0.refold(event, writer: self) }
  }

  /// Works out the conflicts of the row `event` acts on again, from its events, `event` among
  /// them (applied to the row already): ``RowArrival/inOrderUnseen``.
  @usableFromInline
  func recordConflicts(_ event: RecordedEvent) throws {
    try lentSchema.use { try $0.recordConflicts(event, writer: self) }
  }
}

@available(*, unavailable)
extension TableWriter: Sendable {}
