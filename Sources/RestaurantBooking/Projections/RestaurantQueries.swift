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
  /// - Complexity: O(n), one sequential scan of the name index (it stores the rows).
  public static func all(in view: ProjectionReader) throws -> [Restaurant] {
    let reader = RestaurantsProjection.table.reader(view)
    var result: [Restaurant] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach(in: RestaurantsProjection.nameIndex) { row in
      result.append(row.restaurant)
      return true
    }
    return result
  }

  /// Every restaurant, by ID bytes (the order of PostgREST's `order=id.asc`): what a refresh diffs.
  /// - Complexity: O(n), one sequential scan of the rows.
  public static func allByID(in view: ProjectionReader) throws -> [Restaurant] {
    let reader = RestaurantsProjection.table.reader(view)
    var result: [Restaurant] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach { row in
      result.append(row.restaurant)
      return true
    }
    return result
  }

  /// The restaurant `id`, or `nil`.
  /// - Complexity: O(log n).
  public static func restaurant(id: UUID, in view: ProjectionReader) throws -> Restaurant? {
    try RestaurantsProjection.table.reader(view).row(forKey: .uuid(id))?.restaurant
  }

  /// The number of restaurants.
  /// - Complexity: O(1).
  public static func count(in view: ProjectionReader) throws -> Int {
    try RestaurantsProjection.table.reader(view).count()
  }

  /// The version of the `restaurant-catalog` stream the view reflects (0 before any catalog event).
  public static func catalogVersion(in view: ProjectionReader) throws -> UInt64 {
    let bytes = try view.value(
      forKey: RestaurantsProjection.catalogVersionKey, in: RestaurantsProjection.meta)
    return bytes.flatMap(ProjectionKeys.uint64(from:)) ?? 0
  }
}
