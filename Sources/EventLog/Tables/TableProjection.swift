/// A projection that is a table of rows: a primary key, ordered indexes, and per event type a
/// create, update or delete of a row. The engine keeps every index in step on each put, replace
/// and delete, inside the append's transaction and in replay alike, and ``TableReader`` reads a
/// row by key, every row in an index's order, a range or a prefix of an index, and counts.
///
/// ```swift
/// let users = TableProjection<UserRow>(
///   name: "users", version: 1, primaryKey: .uuid(\.id),
///   indexes: [TableIndex("by-name", .caseInsensitive(\.name))],
///   handlers: [
///     .create(UserRegistered.self) { UserRow(id: $0.userID, name: $0.name, email: $0.email, createdAt: $0.createdAt) },
///     .update(UserRenamed.self, key: \.userID) { row, event in row.name = event.name },
///     .delete(UserDeleted.self, key: \.userID),
///   ])
/// let store = try EventStore(path: path, projections: [users])
/// let byName = try store.read { try users.reader(in: $0).rows(in: users.indexes[0]) }
/// ```
///
/// Tables: the rows under their primary keys in ``rowTable`` (`by-id` unless named otherwise),
/// one table per index (``TableIndex``), and any extra tables (`extraTables:`) the projection keeps beside them
/// through its ``Hook``. Raise ``version`` when the row's layout (other than by an optional field
/// added to a `Codable` row, which the open handles: `Docs/OnDiskFormat.md`, "Evolving a type"), a
/// key or a handler changes: the projection is rebuilt from the log on open.
///
/// Events the store skips (of a type or schema this build cannot read, or that break the domain's
/// rules: ``EventStore/SkippedEvent``) never reach a projection, this one included.
///
/// **Rows that converge.** In a table with at least one `.update` handler, each row is the fold
/// of its create, update and delete events in stamp order (recorded-at to the microsecond, then
/// event ID; ``EventStore`` stamps new events with a hybrid logical clock), whatever order they
/// reach the log in: an event older than the row's latest (pulled from another device) makes the
/// engine fold the row's events again, read back from the log. A delete leaves a tombstone: an
/// update stamped after it changes nothing, and one stamped before it is folded in before it. So
/// devices that hold the same events hold the same rows, and a replay builds what the live path
/// built. The engine keeps each row's stamps in one more table, ``stampsTable``, and the
/// conflicts the rule decided (a concurrent write overwritten or discarded: ``Conflict``) in
/// another, ``conflictsTable``. A table with only create and delete handlers pays nothing and
/// folds events as they come.
public struct TableProjection<Row: TableRow>: Projection {
  /// An optional first look at every event, before the handlers: a hand-written fast path that
  /// stores rows given as bytes (``TableWriter/put(encodedRow:primaryKey:)``,
  /// ``TableWriter/delete(primaryKey:)``), or work on the extra tables (`extraTables:`).
  public typealias Hook = @Sendable (RecordedEvent, TableWriter<Row>) throws -> HookResult

  /// Whether a ``Hook`` did the event's work.
  public enum HookResult: Sendable {
    /// The hook did all of it: the handlers do not run.
    case done
    /// The event's handler runs as well.
    case applyHandlers
  }

  /// The projection's name, which names its tables and checkpoint.
  public let name: String
  /// The version stored with the projection's checkpoint: a stored projection of another version
  /// is rebuilt from the log on open. It is the `version` given, and for a table with `.update`
  /// handlers, the revision of the table engine's convergent rule in the top byte besides
  /// (`0x0200_0001` for version 1), so that tables an engine without the rule (or an earlier
  /// revision of it) built are rebuilt.
  public let version: UInt32
  @usableFromInline let schema: TableSchema<Row>

  /// The revision of the table engine's convergent rule, which a table with updates stores in the
  /// top byte of its ``version``.
  /// Revision 2 records the rule's conflicts (``conflictsTable``).
  static var convergentRuleRevision: UInt32 { 2 }

  /// The table in which a table with updates keeps each row's stamps: `.stamps`.
  public static var stampsTable: String { RowStamps.table }

  /// The table in which a table with updates keeps the conflicts its convergent rule decided,
  /// under each row's primary key: `.conflicts` (read them with ``EventStore/conflicts(in:)``).
  public static var conflictsTable: String { RowConflicts.table }

  /// A table projection.
  /// - Parameters:
  ///   - name: the projection's name (`a-z`, `0-9`, `.`, `_`, `-`), which names its tables.
  ///   - version: raise it when the row's layout (other than by an optional field added), a key
  ///     or a handler changes (below 2^24: a table with updates stores the rule's revision in the
  ///     top byte).
  ///   - rowTable: the table of rows under their primary keys.
  ///   - primaryKey: how a row's primary key is made; at most one row per key.
  ///   - indexes: ordered indexes, each a function of the row.
  ///   - extraTables: more tables, which only the `hook` writes.
  ///   - handlers: what each event type does; other events are ignored.
  ///   - hook: an optional first look at each event (a fast path, or the extra tables).
  public init(
    name: String, version: UInt32, rowTable: String = "by-id", primaryKey: TableKey.Column<Row>,
    indexes: [TableIndex<Row>] = [], extraTables: [String] = [], handlers: [TableHandler<Row>],
    hook: Hook? = nil
  ) {
    self.name = name
    schema = TableSchema(
      projection: name, rowTable: rowTable, primaryKey: primaryKey, indexes: indexes,
      extraTables: extraTables,
      handlers: handlers, hook: hook)
    if schema.converges {
      precondition(version < 1 << 24, "table projection '\(name)': a version below 2^24, please")
      self.version = Self.convergentRuleRevision << 24 | version
    } else {
      self.version = version
    }
  }

  /// The row table, then one table per index, then the extra tables, then (for a table with
  /// updates) ``stampsTable`` and ``conflictsTable``.
  public var tables: [String] {
    [schema.rowTable] + schema.indexes.map(\.name) + schema.extraTables
      + (schema.converges ? [Self.stampsTable, Self.conflictsTable] : [])
  }

  /// The table of rows under their primary keys.
  public var rowTable: String { schema.rowTable }
  /// How a row's primary key is made.
  public var primaryKey: TableKey.Column<Row> { schema.primaryKey }
  /// The ordered indexes.
  public var indexes: [TableIndex<Row>] { schema.indexes }

  /// The index named `name`.
  public func index(_ name: String) -> TableIndex<Row>? { schema.indexes.first { $0.name == name } }

  /// Applies one event: the ``Hook`` first, when there is one, then the handler of the event's
  /// type; an event of a type without a handler changes nothing.
  /// - Parameters:
  ///   - event: the event to fold.
  ///   - state: the projection's tables.
  /// - Throws: what the hook or the handler throws, ``TableError`` among them; the append that
  ///   carried the event then fails and stores nothing.
  @inlinable
  public func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    let writer = TableWriter(state: state, schema: schema)
    if let hook = schema.hook, try hook(event, writer) == .done { return }
    let type = event.type
    let count = type.utf8.count
    try schema.handlers.withUnsafeBufferPointer { handlers in
      for position in handlers.indices
      where handlers[position].eventType.utf8.count == count && handlers[position].eventType == type {
        if schema.converges, let converge = handlers[position].converge {
          try converge(event, writer)
        } else {
          try handlers[position].apply(event, writer)
        }
        return
      }
    }
  }

  /// A reader of the rows in `view` (a view of this projection, live or replayed).
  @inlinable
  public func reader(_ view: ProjectionReader) -> TableReader<Row> { TableReader(view: view, schema: schema) }

  /// A reader of the live rows in `snapshot`.
  @inlinable
  public func reader(in snapshot: EventStore.StoreSnapshot) throws -> TableReader<Row> {
    reader(try snapshot.projection(name))
  }

  /// A reader of the rows a replay rebuilt.
  @inlinable
  public func reader(in replay: EventStore.ReplayResult) throws -> TableReader<Row> {
    reader(try replay.projection(name))
  }
}

/// Everything a ``TableProjection`` is made of, shared by its copies, writers and readers.
@usableFromInline
final class TableSchema<Row: TableRow>: Sendable {
  @usableFromInline let primaryKey: TableKey.Column<Row>
  @usableFromInline let indexes: [TableIndex<Row>]
  @usableFromInline let extraTables: [String]
  @usableFromInline let handlers: [TableHandler<Row>]
  @usableFromInline let hook: TableProjection<Row>.Hook?
  /// Whether the table has an update handler, and so folds rows by the convergent rule.
  @usableFromInline let converges: Bool
  /// The same, as the engine sees it: bytes.
  @usableFromInline let layout: TableLayout

  init(
    projection: String, rowTable: String, primaryKey: TableKey.Column<Row>, indexes: [TableIndex<Row>],
    extraTables: [String], handlers: [TableHandler<Row>], hook: TableProjection<Row>.Hook?
  ) {
    self.primaryKey = primaryKey
    self.indexes = indexes
    self.extraTables = extraTables
    self.handlers = handlers
    self.hook = hook
    converges = handlers.contains(where: \.isUpdate)
    layout = TableLayout(
      projection: projection, rowTable: rowTable, primaryKeyWidth: primaryKey.width,
      indexes: indexes.map { index in
        let column = index.key
        return IndexLayout(
          name: index.name, storesRows: index.storesRows,
          keyOfStoredRow: index.keyOfStoredRow ?? { stored, key in
            column.write(try Row(storedBytes: stored), &key)
          },
          hasFastPath: index.keyOfStoredRow != nil)
      })
  }

  @usableFromInline var projection: String { layout.projection }
  @usableFromInline var rowTable: String { layout.rowTable }

  /// The primary key of an index entry: its last bytes when the primary key has a fixed width
  /// (the entry's value is empty then), else the entry's value.
  @inlinable
  func primaryKey(
    ofEntry key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
  )
    -> UnsafeRawBufferPointer
  {
    guard let width = layout.primaryKeyWidth, key.count >= width else { return value }
    return UnsafeRawBufferPointer(rebasing: key[(key.count - width)...])
  }
}
