import EventLog
import Foundation

/// Reads of the restaurant catalog, on a live snapshot or a replay alike, through the table
/// projection's reader:
///
/// ```swift
/// let live = try store.read { try RestaurantQueries.all(in: $0) }
/// let then = try RestaurantQueries.all(in: store.replay(through: 42))
/// ```
public enum RestaurantQueries {
  /// Every restaurant in `snapshot`, by name (case-insensitive) then ID.
  /// - Complexity: O(n), one sequential scan of the name index (it stores the rows).
  public static func all(in snapshot: EventStore.StoreSnapshot) throws -> [Restaurant] {
    try all(RestaurantsProjection.table.reader(in: snapshot))
  }

  /// Every restaurant a replay rebuilt, by name (case-insensitive) then ID.
  public static func all(in replay: EventStore.ReplayResult) throws -> [Restaurant] {
    try all(RestaurantsProjection.table.reader(in: replay))
  }

  /// Every restaurant in `snapshot`, by ID bytes (the order of PostgREST's `order=id.asc`): what a
  /// refresh diffs.
  /// - Complexity: O(n), one sequential scan of the rows.
  public static func allByID(in snapshot: EventStore.StoreSnapshot) throws -> [Restaurant] {
    let reader = try RestaurantsProjection.table.reader(in: snapshot)
    var result: [Restaurant] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach { row in
      result.append(row.restaurant)
      return true
    }
    return result
  }

  /// The restaurant `id` in `snapshot`, or `nil`.
  /// - Complexity: O(log n).
  public static func restaurant(id: UUID, in snapshot: EventStore.StoreSnapshot) throws -> Restaurant? {
    try RestaurantsProjection.table.reader(in: snapshot).row(forKey: .uuid(id))?.restaurant
  }

  /// The restaurant `id` in a replay, or `nil`.
  public static func restaurant(id: UUID, in replay: EventStore.ReplayResult) throws -> Restaurant? {
    try RestaurantsProjection.table.reader(in: replay).row(forKey: .uuid(id))?.restaurant
  }

  /// The number of restaurants in `snapshot`.
  /// - Complexity: O(1).
  public static func count(in snapshot: EventStore.StoreSnapshot) throws -> Int {
    try RestaurantsProjection.table.reader(in: snapshot).count()
  }

  /// The number of restaurants a replay rebuilt.
  public static func count(in replay: EventStore.ReplayResult) throws -> Int {
    try RestaurantsProjection.table.reader(in: replay).count()
  }

  /// The version of the `restaurant-catalog` stream a replay reflects (0 before any catalog
  /// event).
  public static func catalogVersion(in replay: EventStore.ReplayResult) throws -> UInt64 {
    let bytes = try replay.projection(RestaurantsProjection.name).value(
      forKey: RestaurantsProjection.catalogVersionKey, in: RestaurantsProjection.meta)
    return bytes.flatMap(ProjectionKeys.uint64(from:)) ?? 0
  }

  private static func all(_ reader: TableReader<RestaurantRow>) throws -> [Restaurant] {
    var result: [Restaurant] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach(in: RestaurantsProjection.nameIndex) { row in
      result.append(row.restaurant)
      return true
    }
    return result
  }
}
