import EventLog
import Foundation

/// A restaurant is no longer in the remote catalog. Stream: `restaurant-catalog`.
///
/// Carries the restaurant's last values for the audit trail. Bookings of the restaurant stay.
public struct RestaurantRemoved: EventPayload, Hashable {
  /// The stored type name, `RestaurantRemoved`.
  public static let eventType = "RestaurantRemoved"
  /// The remote ID.
  public var restaurantID: UUID
  /// The last name.
  public var name: String
  /// The last cuisine.
  public var cuisine: String

  /// Creates the event.
  public init(restaurantID: UUID, name: String, cuisine: String) {
    self.restaurantID = restaurantID
    self.name = name
    self.cuisine = cuisine
  }
}

extension RestaurantRemoved {
  /// Reads the fields in declaration order, the bytes `Codable` writes (the replay fast path).
  public init(binary reader: inout BinaryReader) throws {
    self.init(restaurantID: try reader.uuid(), name: try reader.string(), cuisine: try reader.string())
  }
}
