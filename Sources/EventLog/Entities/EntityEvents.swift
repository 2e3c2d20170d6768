import Foundation

/// An entity created: the first event of its stream, with every field.
public struct EntityCreated<E: Entity>: EventPayload {
  /// `<entityName>Created`.
  public static var eventType: String { E.entityName + "Created" }
  /// The entity as created.
  public var entity: E

  /// The event of `entity`'s creation.
  public init(entity: E) { self.entity = entity }
}

/// Fields of an entity changed: the entity after the change, and the names of the fields that
/// changed. Folding it takes only those fields, so that two devices' changes of different fields
/// both hold, and of one field the later one (``TableProjection``'s convergent rule).
public struct EntityChanged<E: Entity>: EventPayload {
  /// `<entityName>Changed`.
  public static var eventType: String { E.entityName + "Changed" }
  /// The entity after the change.
  public var entity: E
  /// The names of the fields that changed (as `Codable` names them), sorted.
  public var fields: [String]

  /// The event of a change of `fields`, `entity` holding their new values.
  public init(entity: E, fields: [String]) {
    self.entity = entity
    self.fields = fields
  }
}

/// An entity deleted: the last event of its stream.
public struct EntityDeleted<E: Entity>: EventPayload {
  /// `<entityName>Deleted`.
  public static var eventType: String { E.entityName + "Deleted" }
  /// The entity's ID.
  public var id: UUID

  /// The event of the deletion of the entity `id`.
  public init(id: UUID) { self.id = id }
}
