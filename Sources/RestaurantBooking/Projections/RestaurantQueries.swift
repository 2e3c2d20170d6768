import EventLog
import Foundation

/// Reads of the `restaurants` projection, on a live snapshot or a replay alike:
///
/// ```swift
/// let live = try store.read { try RestaurantQueries.all(in: $0.projection(RestaurantQueries.projection)) }
/// let then = try RestaurantQueries.all(in: store.replay(through: 42).projection(RestaurantQueries.projection))
/// ```
public enum RestaurantQueries {
  /// The name of the projection to pass a view of.
  public static let projection = RestaurantsProjection.name

  /// Every restaurant, by name (case-insensitive) then ID.
  /// - Complexity: O(n), one sequential scan of the name-order table.
  public static func all(in view: ProjectionView) throws -> [Restaurant] {
    var result: [Restaurant] = []
    result.reserveCapacity(try view.count(in: RestaurantsProjection.byName))
    try view.forEach(in: RestaurantsProjection.byName) { _, value in
      result.append(try RestaurantRow(value).restaurant)
      return true
    }
    return result
  }

  /// Every restaurant, by ID bytes (the order of PostgREST's `order=id.asc`): what a refresh diffs.
  /// - Complexity: O(n), one sequential scan of the ID table.
  public static func allByID(in view: ProjectionView) throws -> [Restaurant] {
    var result: [Restaurant] = []
    result.reserveCapacity(try view.count(in: RestaurantsProjection.byID))
    try view.forEach(in: RestaurantsProjection.byID) { _, value in
      result.append(try RestaurantRow(value).restaurant)
      return true
    }
    return result
  }

  /// The restaurant `id`, or `nil`.
  /// - Complexity: O(log n).
  public static func restaurant(id: UUID, in view: ProjectionView) throws -> Restaurant? {
    try view.value(forKey: ProjectionKeys.id(id), in: RestaurantsProjection.byID).map(RestaurantRow.init)?
      .restaurant
  }

  /// The number of restaurants.
  /// - Complexity: O(1).
  public static func count(in view: ProjectionView) throws -> Int {
    try view.count(in: RestaurantsProjection.byID)
  }

  /// The version of the `restaurant-catalog` stream the view reflects (0 before any catalog event).
  public static func catalogVersion(in view: ProjectionView) throws -> UInt64 {
    let bytes = try view.value(
      forKey: RestaurantsProjection.catalogVersionKey, in: RestaurantsProjection.meta)
    return bytes.flatMap(ProjectionKeys.uint64(from:)) ?? 0
  }
}
