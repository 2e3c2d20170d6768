import EventLog
import Foundation

/// The restaurant catalog: restaurants by ID and in name order, and the catalog stream's version.
///
/// Tables (keys in ``ProjectionKeys``):
/// - `by-id`: 16 ID bytes → the row (``RestaurantRow``'s compact layout).
/// - `by-name`: lower-cased name + `0x00` + ID → ``RestaurantRow`` (read sequentially by
///   ``RestaurantQueries/all(in:)``).
/// - `meta`: `catalog-version` → the version (8 bytes, big-endian) of `restaurant-catalog` after
///   the last catalog event folded, so a refresh reads the catalog and its version in one snapshot.
public struct RestaurantsProjection: Projection {
  /// The projection's name.
  public static let name = "restaurants"
  static let byID = "by-id"
  static let byName = "by-name"
  static let meta = "meta"
  static let catalogVersionKey = Array("catalog-version".utf8)

  public var name: String { Self.name }
  public var version: UInt32 { 1 }
  public var tables: [String] { [Self.byID, Self.byName, Self.meta] }

  /// Creates the projection.
  public init() {}

  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    // Nine events in ten are bookings: `same` rules most types out on their lengths alone.
    let type = event.type
    if same(type, RestaurantAdded.eventType) {
      let added = try event.decode(RestaurantAdded.self)
      let key = ProjectionKeys.id(added.restaurantID)
      let old = try state.withValue(forKey: key, in: Self.byID) { try RestaurantRow($0) }
      let row = RestaurantRow(id: added.restaurantID, name: added.name, cuisine: added.cuisine)
      try put(row, replacing: old, key: key, in: state)
    } else if same(type, RestaurantUpdated.eventType) {
      let updated = try event.decode(RestaurantUpdated.self)
      let key = ProjectionKeys.id(updated.restaurantID)
      guard let old = try state.withValue(forKey: key, in: Self.byID, { try RestaurantRow($0) }) else {
        throw RestaurantProjectionError.unknownRestaurant(updated.restaurantID, sequence: event.sequence)
      }
      var row = old
      if let name = updated.name { row.name = name.new }
      if let cuisine = updated.cuisine { row.cuisine = cuisine.new }
      try put(row, replacing: old, key: key, in: state)
    } else if same(type, RestaurantRemoved.eventType) {
      let removed = try event.decode(RestaurantRemoved.self)
      let key = ProjectionKeys.id(removed.restaurantID)
      if let row = try state.withValue(forKey: key, in: Self.byID, { try RestaurantRow($0) }) {
        try state.delete(forKey: key, in: Self.byID)
        try state.delete(forKey: ProjectionKeys.name(row.name, id: row.id), in: Self.byName)
      }
    }
    if same(event.stream.rawValue, RestaurantBookingStreams.catalog.rawValue) {
      try withUnsafeBytes(of: event.version.bigEndian) { version in
        try Self.catalogVersionKey.withUnsafeBytes { try state.put(version, forKey: $0, in: Self.meta) }
      }
    }
  }

  /// `a == b`, comparing the UTF-8 lengths (known without reading the text) first. Exact when `b`
  /// is ASCII without `K`, `;` or `` ` `` (the only ASCII characters with a non-ASCII canonical
  /// equivalent), as every type name and stream ID compared here is.
  @inline(__always)
  private func same(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && a == b }

  /// Stores `row` under `key` (its ID key) in both tables, dropping the name-order key of the
  /// row it replaces (`old`, read from `by-id`) when that key changed.
  private func put(
    _ row: RestaurantRow, replacing old: RestaurantRow?, key: [UInt8], in state: ProjectionState
  )
    throws
  {
    let nameKey = ProjectionKeys.name(row.name, id: row.id)
    // Equal names give equal keys: the old key is only worked out when the name changed.
    if let old, old.name != row.name {
      let oldNameKey = ProjectionKeys.name(old.name, id: old.id)
      if oldNameKey != nameKey { try state.delete(forKey: oldNameKey, in: Self.byName) }
    }
    let bytes = row.bytes
    try state.put(bytes, forKey: key, in: Self.byID)
    try state.put(bytes, forKey: nameKey, in: Self.byName)
  }
}

/// An event the restaurant projection cannot fold (only a damaged or hand-made log has one).
enum RestaurantProjectionError: Error, CustomStringConvertible {
  case unknownRestaurant(UUID, sequence: UInt64)

  var description: String {
    switch self {
    case .unknownRestaurant(let id, let sequence):
      "event \(sequence) updates restaurant \(id.lowercasedString), which is not in the catalog"
    }
  }
}
