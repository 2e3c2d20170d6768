import Foundation

/// What one event type does to a ``TableProjection``'s rows: create (or replace) a row, update
/// one, delete one, or anything else (``custom(_:_:)``).
///
/// ```swift
/// handlers: [
///   .create(UserRegistered.self) { UserRow(id: $0.userID, name: $0.name, email: $0.email, createdAt: $0.createdAt) },
///   .update(UserRenamed.self, key: \.userID) { row, event in row.name = event.name },
///   .delete(UserDeleted.self, key: \.userID),
/// ]
/// ```
///
/// The event is decoded as its type (through its upcaster for an older schema); the engine keeps
/// every index in step.
///
/// In a table with at least one `update` handler, the
/// create, update and delete handlers follow the table engine's convergent rule: each row is the
/// fold of its events in stamp order (recorded-at, then event ID), whatever order they arrived in,
/// and a delete leaves a tombstone that later updates cannot bring back. Their closures must
/// therefore be functions of the row and the event alone. Where the rule overwrites or discards
/// a concurrent write, the engine records a ``Conflict`` (``EventStore/conflicts(in:)``). ``custom(_:_:)`` handlers are applied as
/// they come, outside that rule.
public struct TableHandler<Row: TableRow>: Sendable {
  /// The stored type name of the events it handles.
  public let eventType: String
  @usableFromInline let apply: @Sendable (RecordedEvent, TableWriter<Row>) throws -> Void
  /// For a create, update or delete handler in a table with updates: `apply` by the convergent
  /// rule (the row's stamps first; an event older than the row's latest folds the row again).
  /// `nil` for a custom one.
  @usableFromInline let converge: (@Sendable (RecordedEvent, TableWriter<Row>) throws -> Void)?
  /// What the event does to one row, for a create, update or delete handler: what a refold folds.
  /// `nil` for a custom one.
  @usableFromInline let effect: (@Sendable (RecordedEvent) throws -> RowEffect<Row>)?
  /// Whether it is an update handler (a table that has one folds rows by the convergent rule).
  @usableFromInline let isUpdate: Bool

  @usableFromInline
  init(
    eventType: String, apply: @escaping @Sendable (RecordedEvent, TableWriter<Row>) throws -> Void,
    converge: (@Sendable (RecordedEvent, TableWriter<Row>) throws -> Void)? = nil,
    effect: (@Sendable (RecordedEvent) throws -> RowEffect<Row>)? = nil, isUpdate: Bool = false
  ) {
    self.eventType = eventType
    self.apply = apply
    self.converge = converge
    self.effect = effect
    self.isUpdate = isUpdate
  }

  /// A handler of `eventType` that does what `apply` does.
  @inlinable
  public static func custom(
    _ eventType: String, _ apply: @escaping @Sendable (RecordedEvent, TableWriter<Row>) throws -> Void
  ) -> TableHandler {
    TableHandler(eventType: eventType, apply: apply)
  }

  /// Stores the row `row` makes of the event; a row stored under the same primary key is replaced.
  @inlinable
  public static func create<E: EventPayload>(
    _ type: E.Type, _ row: @escaping @Sendable (E) throws -> Row
  ) -> TableHandler {
    TableHandler(
      eventType: E.eventType, apply: { event, table in try table.put(row(event.decode(E.self))) },
      converge: { event, table in
        let made = try row(event.decode(E.self))
        switch try table.arrival(of: event, row: made) {
        case .first, .inOrder: try table.put(made)
        case .inOrderUnseen:
          try table.put(made)
          try table.recordConflicts(event)
        case .late: try table.refold(event)
        }
      },
      effect: { event in .create(try row(event.decode(E.self))) })
  }

  /// Changes the row under `key` with `change`.
  ///
  /// A table with an update handler folds each row's events in stamp order (see the type's
  /// description): an update of a deleted row changes nothing, and `ifMissing` applies only to an
  /// update of a key the table has never seen an event for.
  /// - Parameters:
  ///   - type: the event type.
  ///   - key: the primary key of the row the event changes.
  ///   - ifMissing: what an event for a key without a row does (by default it fails the event: the
  ///     log and the projection disagree).
  ///   - change: changes the row (but not its primary key) as the event says; a function of the
  ///     row and the event alone.
  /// - Returns: the handler.
  @inlinable
  public static func update<E: EventPayload>(
    _ type: E.Type, key: @escaping @Sendable (E) -> TableKey, ifMissing: MissingRowPolicy<E> = .fail,
    _ change: @escaping @Sendable (inout Row, E) throws -> Void
  ) -> TableHandler {
    TableHandler(
      eventType: E.eventType,
      apply: { event, table in
        let decoded = try event.decode(E.self)
        let key = key(decoded)
        if try !table.update(forKey: key, { try change(&$0, decoded) }) {
          try ifMissing.handle(decoded, key: key, projection: table.projection)
        }
      },
      converge: { event, table in
        let decoded = try event.decode(E.self)
        let key = key(decoded)
        switch try table.arrival(of: event, key: key) {
        case .first:
          if try !table.update(forKey: key, { try change(&$0, decoded) }) {
            try ifMissing.handle(decoded, key: key, projection: table.projection)
          }
        case .inOrder: try table.update(forKey: key) { try change(&$0, decoded) }
        case .inOrderUnseen:
          try table.update(forKey: key) { try change(&$0, decoded) }
          try table.recordConflicts(event)
        case .late: try table.refold(event)
        }
      },
      effect: { event in
        let decoded = try event.decode(E.self)
        return .update(key(decoded)) { try change(&$0, decoded) }
      }, isUpdate: true)
  }

  /// Changes the row whose UUID primary key `key` gives with `change`.
  @inlinable
  public static func update<E: EventPayload>(
    _ type: E.Type, key: @escaping @Sendable (E) -> UUID, ifMissing: MissingRowPolicy<E> = .fail,
    _ change: @escaping @Sendable (inout Row, E) throws -> Void
  ) -> TableHandler {
    update(type, key: { TableKey.uuid(key($0)) }, ifMissing: ifMissing, change)
  }

  /// Deletes the row under `key`, if there is one.
  @inlinable
  public static func delete<E: EventPayload>(
    _ type: E.Type, key: @escaping @Sendable (E) -> TableKey
  ) -> TableHandler {
    TableHandler(
      eventType: E.eventType,
      apply: { event, table in _ = try table.delete(forKey: key(event.decode(E.self))) },
      converge: { event, table in
        let key = key(try event.decode(E.self))
        switch try table.arrival(of: event, key: key) {
        case .first, .inOrder: try table.delete(forKey: key)
        case .inOrderUnseen:
          try table.delete(forKey: key)
          try table.recordConflicts(event)
        case .late: try table.refold(event)
        }
      },
      effect: { event in .delete(key(try event.decode(E.self))) })
  }

  /// Deletes the row whose UUID primary key `key` gives, if there is one.
  @inlinable
  public static func delete<E: EventPayload>(
    _ type: E.Type, key: @escaping @Sendable (E) -> UUID
  ) -> TableHandler {
    delete(type, key: { TableKey.uuid(key($0)) })
  }
}

/// What a create, update or delete handler does to one row: what the convergent rule folds.
@usableFromInline
enum RowEffect<Row: TableRow> {
  /// Stores the row under its primary key, replacing any.
  case create(Row)
  /// Changes the row under the key, if there is one.
  case update(TableKey, change: (inout Row) throws -> Void)
  /// Deletes the row under the key, if there is one.
  case delete(TableKey)
}

/// What an update for a key without a row does.
public enum MissingRowPolicy<E>: Sendable {
  /// Fails the event with ``TableError/missingRow(projection:key:)``.
  case fail
  /// Fails the event with the error made of it.
  case failWith(@Sendable (E) -> any Error)
  /// Does nothing.
  case ignore

  @usableFromInline
  func handle(_ event: E, key: TableKey, projection: String) throws {
    switch self {
    case .fail: throw TableError.missingRow(projection: projection, key: key)
    case .failWith(let error): throw error(event)
    case .ignore: break
    }
  }
}

/// What a ``TableProjection``'s table engine refuses.
public enum TableError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// An update for a key that has no row.
  case missingRow(projection: String, key: TableKey)
  /// A key that LMDB cannot store: empty, or longer than ``TableKey/maximumLength`` bytes.
  case invalidKey(projection: String, table: String, length: Int)
  /// An index entry whose row is not stored (a damaged projection; `verify` reports it too).
  case danglingIndexEntry(projection: String, index: String, key: TableKey)

  /// The refusal in one sentence, with the projection and the table or key concerned.
  public var description: String {
    switch self {
    case .missingRow(let projection, let key):
      "projection '\(projection)' has no row for key \(key)"
    case .invalidKey(let projection, let table, let length):
      "projection '\(projection)' table '\(table)': a key of \(length) bytes cannot be stored (1 to \(TableKey.maximumLength))"
    case .danglingIndexEntry(let projection, let index, let key):
      "projection '\(projection)' index '\(index)' names a row that is not stored (entry \(key))"
    }
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}
