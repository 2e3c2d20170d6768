import Foundation

/// One row of a fetched catalog snapshot, validated: the input of ``RestaurantDiff``.
///
/// A domain value, not a DTO: sources decode their own wire formats into it.
public struct RemoteRestaurant: Hashable, Sendable {
  /// The remote ID.
  public var id: UUID
  /// The name; sources reject empty ones.
  public var name: String
  /// The cuisine as sent.
  public var cuisine: String

  /// Creates a row.
  public init(id: UUID, name: String, cuisine: String) {
    self.id = id
    self.name = name
    self.cuisine = cuisine
  }
}

extension Restaurant {
  /// The restaurant a fetched row describes.
  public init(_ row: RemoteRestaurant) {
    self.init(id: row.id, name: row.name, cuisine: Cuisine(rawValue: row.cuisine))
  }
}
