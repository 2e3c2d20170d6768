import Foundation

/// A restaurant of the remote catalog, as the app shows it.
public struct Restaurant: Identifiable, Hashable, Sendable {
  /// The remote catalog's ID of the restaurant.
  public let id: UUID
  /// The display name; never empty.
  public var name: String
  /// The kind of food.
  public var cuisine: Cuisine

  /// Creates a restaurant.
  public init(id: UUID, name: String, cuisine: Cuisine) {
    self.id = id
    self.name = name
    self.cuisine = cuisine
  }

  /// A restaurant for previews and tests.
  public static let sample = Restaurant(
    id: UUID(uuidString: "5B0E8B0C-6F43-4C3A-9E55-0C1C5B6F7A01")!, name: "Pasta Palace", cuisine: .italian)
}
