import EventLog
import Foundation

/// The restaurant catalog: restaurants by ID and in name order, a `TableProjection` of
/// ``RestaurantRow``s (``table``), read through its reader, live or replayed alike:
///
/// ```swift
/// let live = try store.read {
///   try RestaurantsProjection.table.reader(in: $0).rows(in: RestaurantsProjection.byName, as: Restaurant.init)
/// }
/// let then = try RestaurantsProjection.table.reader(in: store.replay(through: 42))
///   .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
/// ```
///
/// Tables (keys in `TableKey`'s encodings):
/// - `by-id`: 16 ID bytes → the row (`rows()`: by ID bytes, the order of PostgREST's
///   `order=id.asc`, which a refresh diffs).
/// - `by-name` (``byName``): an index on the name, ignoring case, that stores the rows:
///   lower-cased name + `0x00` + ID → the row, so that `rows(in: byName)` is one sequential scan.
///
/// The catalog's version is its stream's (`snapshot.version(of: RestaurantBookingStreams.catalog)`),
/// which a refresh reads in the same snapshot as the rows. Version 1 also kept it in a `meta`
/// table, which nothing read; version 2 has no such table, and a store of version 1 is rebuilt on
/// open, like any projection of another version (its `meta` table is left as it was, unread).
public enum RestaurantsProjection {
  /// The projection's name.
  static let name = "restaurants"

  /// The restaurants by name, ignoring case, then by ID: an index that stores the rows.
  public static let byName = TableIndex<RestaurantRow>("by-name", .caseInsensitive(\.name), storesRows: true)

  /// The projection: what `AppSchema.restaurantBooking` folds, and what reads go through
  /// (`table.reader(in:)`).
  public static let table = TableProjection<RestaurantRow>(
    name: name, version: 2, primaryKey: .uuid(\.id), indexes: [byName],
    handlers: [
      .create(RestaurantAdded.self) {
        RestaurantRow(id: $0.restaurantID, name: $0.name, cuisine: $0.cuisine)
      },
      .update(
        RestaurantUpdated.self, key: \.restaurantID,
        ifMissing: .failWith { RestaurantProjectionError.unknownRestaurant($0.restaurantID) }
      ) { row, updated in
        if let name = updated.name { row.name = name.new }
        if let cuisine = updated.cuisine { row.cuisine = cuisine.new }
      },
      .delete(RestaurantRemoved.self, key: \.restaurantID),
    ])
}

/// An event the restaurant projection cannot fold (only a damaged or hand-made log has one).
enum RestaurantProjectionError: Error, CustomStringConvertible {
  case unknownRestaurant(UUID)

  var description: String {
    switch self {
    case .unknownRestaurant(let id):
      "it updates restaurant \(id.lowercasedString), which is not in the catalog"
    }
  }
}
