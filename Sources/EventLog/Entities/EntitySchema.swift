import Foundation

/// What the store keeps of an ``Entity``: its table (rows by ID, and the app's indexes), its
/// three event types, its streams, and the ``AppSchema`` that holds them.
///
/// ```swift
/// enum DiningTables {
///   static let byLabel = TableIndex<DiningTable>("by-label", .caseInsensitive(\.label))
///   static let schema = EntitySchema<DiningTable>(indexes: [byLabel])
/// }
/// let store = try EventStore(path: path, schema: DiningTables.schema.appSchema)
/// ```
public struct EntitySchema<E: Entity>: Sendable {
  /// The table: rows under their IDs (`by-id`), one table per index, and the stamps of the
  /// convergent rule.
  public let table: TableProjection<E>
  /// Whether other devices share the entity's streams (`remote init` adds their prefix to those
  /// the server accepts).
  public let isReplicated: Bool

  /// The entity's schema.
  /// - Parameters:
  ///   - version: raise it when an index changes or a field's meaning does: the table is rebuilt
  ///     from the log on open.
  ///   - indexes: ordered indexes over the rows.
  ///   - replicated: whether the entity's streams are shared between devices.
  public init(version: UInt32 = 1, indexes: [TableIndex<E>] = [], replicated: Bool = true) {
    isReplicated = replicated
    table = TableProjection(
      name: E.kebabName, version: version, primaryKey: .uuid(\.id), indexes: indexes,
      handlers: [
        .create(EntityCreated<E>.self) { $0.entity },
        .update(EntityChanged<E>.self, key: \.entity.id) { row, event in
          row = try row.taking(event.fields, from: event.entity)
        },
        .delete(EntityDeleted<E>.self, key: \.id),
      ])
  }

  /// The entity's event types.
  public var eventTypes: [any EventPayload.Type] {
    [EntityCreated<E>.self, EntityChanged<E>.self, EntityDeleted<E>.self]
  }

  /// The stream of the entity `id`: `<kebab name>-<id in lower case>`.
  public func stream(_ id: UUID) -> StreamID { StreamID("\(E.kebabName)-\(id.lowercasedString)") }

  /// A schema of this entity alone, named as its projection; compose several with
  /// `AppSchema(name:composing:)`.
  public var appSchema: AppSchema {
    AppSchema(
      name: E.kebabName, eventTypes: eventTypes, projections: [table],
      replicatedStreams: AppSchema.StreamSelection(prefixes: isReplicated ? ["\(E.kebabName)-"] : []))
  }
}
