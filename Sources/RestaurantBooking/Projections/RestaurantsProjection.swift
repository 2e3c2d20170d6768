import EventLog
import Foundation

/// The restaurant catalog: restaurants by ID and in name order, and the catalog stream's version.
/// A `TableProjection` of `RestaurantRow`s.
///
/// Tables (keys in `TableKey`'s encodings):
/// - `by-id`: 16 ID bytes → the row.
/// - `by-name`: an index on the name, ignoring case, that stores the rows: lower-cased name +
///   `0x00` + ID → the row (read sequentially by ``RestaurantQueries/all(in:)``).
/// - `meta`: `catalog-version` → the version (8 bytes, big-endian) of `restaurant-catalog` after
///   the last catalog event folded, so a refresh reads the catalog and its version in one
///   snapshot. Kept by the projection's hook.
public struct RestaurantsProjection: Projection {
  /// The projection's name.
  public static let name = "restaurants"
  static let byID = "by-id"
  static let byName = "by-name"
  static let meta = "meta"
  static let catalogVersionKey = Array("catalog-version".utf8)

  /// The name index.
  static let nameIndex = TableIndex<RestaurantRow>(byName, .caseInsensitive(\.name), storesRows: true)

  static let table = TableProjection<RestaurantRow>(
    name: name, version: 1, rowTable: byID, primaryKey: .uuid(\.id), indexes: [nameIndex],
    extraTables: [meta],
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
    ],
    hook: catalogVersion)

  /// Keeps `meta/catalog-version` at the catalog stream's version; the handlers do the rest.
  @Sendable
  static func catalogVersion(
    _ event: RecordedEvent, _ table: TableWriter<RestaurantRow>
  ) throws
    -> TableProjection<RestaurantRow>.HookResult
  {
    let stream = event.stream.rawValue
    let catalog = RestaurantBookingStreams.catalog.rawValue
    // Nine events in ten are bookings: the lengths rule most streams out without reading them.
    if stream.utf8.count == catalog.utf8.count, stream == catalog {
      try table.state.put(ProjectionKeys.uint64(event.version), forKey: catalogVersionKey, in: meta)
    }
    return .applyHandlers
  }

  /// The table projection, held by every copy (reading the static for each event would retain it).
  private let projection = Self.table

  /// The projection's name, `restaurants`.
  public var name: String { Self.name }
  /// The version of the table projection: raising it rebuilds the tables on open.
  public var version: UInt32 { projection.version }
  /// The projection's tables: `by-id`, `by-name` and `meta`.
  public var tables: [String] { projection.tables }

  /// Creates the projection.
  public init() {}

  /// Folds one event into the tables through the table projection: its hook, then its handlers.
  /// - Parameters:
  ///   - event: the event to fold; events of other types change nothing.
  ///   - state: the projection's tables.
  /// - Throws: what the table projection throws; the append that carried the event then fails.
  public func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    try projection.apply(event, to: state)
  }
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
