import EventLog
import Foundation

/// A restaurant's name or cuisine changed in the remote catalog. Stream: `restaurant-catalog`.
///
/// Only what changed is set, with its old and new value.
public struct RestaurantUpdated: EventPayload, Hashable {
  /// The stored type name, `RestaurantUpdated`.
  public static let eventType = "RestaurantUpdated"

  /// The old and new value of one field.
  public struct Change: Codable, Sendable, Hashable {
    /// The value before.
    public var old: String
    /// The value after.
    public var new: String

    /// Creates a change.
    public init(old: String, new: String) {
      self.old = old
      self.new = new
    }
  }

  /// The remote ID.
  public var restaurantID: UUID
  /// The name's change, or `nil` when the name stayed.
  public var name: Change?
  /// The cuisine's change, or `nil` when the cuisine stayed.
  public var cuisine: Change?

  /// Creates the event.
  public init(restaurantID: UUID, name: Change?, cuisine: Change?) {
    self.restaurantID = restaurantID
    self.name = name
    self.cuisine = cuisine
  }
}

extension RestaurantUpdated {
  /// Reads the fields in declaration order, the bytes `Codable` writes (the replay fast path).
  public init(binary reader: inout BinaryReader) throws {
    func change(_ reader: inout BinaryReader) throws -> Change {
      Change(old: try reader.string(), new: try reader.string())
    }
    self.init(
      restaurantID: try reader.uuid(), name: try reader.optional(change), cuisine: try reader.optional(change)
    )
  }
}
