import EventLog
import Foundation

/// A restaurant appeared in the remote catalog. Stream: `restaurant-catalog`.
public struct RestaurantAdded: EventPayload, Hashable {
  /// The stored type name, `RestaurantAdded`.
  public static let eventType = "RestaurantAdded"
  /// The remote ID.
  public var restaurantID: UUID
  /// The name.
  public var name: String
  /// The cuisine as the remote spells it.
  public var cuisine: String

  /// Creates the event.
  public init(restaurantID: UUID, name: String, cuisine: String) {
    self.restaurantID = restaurantID
    self.name = name
    self.cuisine = cuisine
  }
}

extension RestaurantAdded {
  /// Reads the fields in declaration order, the bytes `Codable` writes (the replay fast path).
  public init(binary reader: inout BinaryReader) throws {
    self.init(restaurantID: try reader.uuid(), name: try reader.string(), cuisine: try reader.string())
  }
}
