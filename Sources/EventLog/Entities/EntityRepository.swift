import Foundation

/// The repository of an ``Entity``'s common shape: create, change fields, delete, get, list by
/// an index, observe, and the conflicts of concurrent changes. A change reads the entity,
/// applies the app's closure, and appends the fields that changed at the version it read, trying
/// again (3 times in all) when another writer changed the entity meanwhile. A change and a delete
/// name the entity's latest event as their causation: what they had seen, so that the
/// convergent rule records a ``Conflict`` where one overwrites a change it had not seen. An app's own repository (what its view models depend on) wraps
/// it with the app's words and rules.
public struct EntityRepository<E: Entity>: Sendable {
  /// The store, opened with a schema that holds ``schema``'s.
  public let store: EventStore
  /// The entity's schema.
  public let schema: EntitySchema<E>

  /// The repository of `schema`'s entity in `store`.
  public init(store: EventStore, schema: EntitySchema<E>) {
    self.store = store
    self.schema = schema
  }

  /// Stores a new entity.
  /// - Returns: the entity.
  /// - Throws: ``EntityError/alreadyExists(entity:id:)`` when its ID is taken (even by a deleted
  ///   one), or the store's error.
  @discardableResult
  public func create(_ entity: E) async throws -> E {
    do {
      try await store.append(
        [try NewEvent(EntityCreated(entity: entity))], to: schema.stream(entity.id),
        expectedVersion: .noStream)
    } catch EventStoreError.wrongExpectedVersion {
      throw EntityError.alreadyExists(entity: E.entityName, id: entity.id)
    }
    return entity
  }

  /// Changes the entity `id`: `change` gets it as stored and changes its fields; the fields
  /// that changed are appended (nothing when none did).
  /// - Returns: the entity after the change.
  /// - Throws: ``EntityError/notFound(entity:id:)`` when there is no such entity (never created,
  ///   or deleted), ``EntityError/idChanged(entity:id:)`` when `change` changed the ID, what
  ///   `change` throws, or the store's error.
  @discardableResult
  public func change(id: UUID, _ change: (inout E) throws -> Void) async throws -> E {
    var result: E?
    try await store.append(to: schema.stream(id)) { _ in
      guard let (current, base) = try read(id: id) else {
        throw EntityError.notFound(entity: E.entityName, id: id)
      }
      var changed = current
      try change(&changed)
      guard changed.id == id else { throw EntityError.idChanged(entity: E.entityName, id: id) }
      result = changed
      let fields = try current.fieldsChanged(to: changed)
      return fields.isEmpty
        ? []
        : [
          try NewEvent(
            EntityChanged(entity: changed, fields: fields), metadata: EventMetadata(causationID: base))
        ]
    }
    guard let result else { throw EntityError.notFound(entity: E.entityName, id: id) }
    return result
  }

  /// Deletes the entity `id`.
  /// - Throws: ``EntityError/notFound(entity:id:)`` when there is no such entity, or the
  ///   store's error.
  public func delete(id: UUID) async throws {
    try await store.append(to: schema.stream(id)) { _ in
      guard let (_, base) = try read(id: id) else { throw EntityError.notFound(entity: E.entityName, id: id) }
      return [try NewEvent(EntityDeleted<E>(id: id), metadata: EventMetadata(causationID: base))]
    }
  }

  /// The entity `id` and its row's latest event (what a change or delete follows: its
  /// causation, which tells the convergent rule what the write had seen), or `nil`.
  private func read(id: UUID) throws -> (entity: E, base: UUID?)? {
    try store.read { snapshot in
      let reader = try schema.table.reader(in: snapshot)
      return try reader.row(forKey: .uuid(id)).map { ($0, try reader.latestEventID(forKey: .uuid(id))) }
    }
  }

  /// The entity `id`, or `nil` (never created, or deleted).
  /// - Complexity: O(log n).
  public func get(id: UUID) async throws -> E? {
    try store.read { try schema.table.reader(in: $0).row(forKey: .uuid(id)) }
  }

  /// Every entity, in `index`'s order (by ID without one); with a `prefix`, those whose key in
  /// `index` starts with it (`list(by: byZone, prefix: .text("terrace"))`).
  /// - Complexity: O(log n + k) for the k entities listed.
  public func list(by index: TableIndex<E>? = nil, prefix: TableKey? = nil) async throws -> [E] {
    try store.read { try schema.table.reader(in: $0).rows(in: index, prefix: prefix) }
  }

  /// The entity's conflicts (``Conflict``: a concurrent change the convergent rule overwrote or
  /// discarded), oldest first, now and after each commit that changes them
  /// (``EventStore/observe(_:)``).
  /// - Returns: the conflicts; the stream ends when the store closes, or with its error.
  public func conflicts() -> AsyncThrowingStream<[Conflict], any Error> {
    let table = schema.table.name
    return store.observe { try $0.conflicts(in: table) }
  }

  /// ``list(by:prefix:)`` now and after each commit that changes it (``EventStore/observe(_:)``).
  public func observeAll(by index: TableIndex<E>? = nil) -> AsyncThrowingStream<[E], any Error> {
    let table = schema.table
    return store.observe { try table.reader(in: $0).rows(in: index) }
  }
}

/// Why an ``EntityRepository`` refused a write.
public enum EntityError: Error, Equatable, CustomStringConvertible {
  /// No entity of this ID (never created, or deleted).
  case notFound(entity: String, id: UUID)
  /// An entity of this ID was created before.
  case alreadyExists(entity: String, id: UUID)
  /// A change changed the entity's ID.
  case idChanged(entity: String, id: UUID)

  /// Names the entity and its ID.
  public var description: String {
    switch self {
    case .notFound(let entity, let id): "no \(entity) \(id.lowercasedString)"
    case .alreadyExists(let entity, let id): "a \(entity) \(id.lowercasedString) was created already"
    case .idChanged(let entity, let id): "a change of \(entity) \(id.lowercasedString) must not change its id"
    }
  }
}
