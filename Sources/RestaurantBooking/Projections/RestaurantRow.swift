import EventLog
import Foundation

/// A restaurant as the `restaurants` projection stores it (`TableRow`, in `RowWriter`'s
/// layout): format 1, ID (16 bytes), name, cuisine. A reader turns it into a ``Restaurant``
/// (`Restaurant.init(_:)`):
///
/// ```swift
/// let all = try store.read {
///   try RestaurantsProjection.table.reader(in: $0).rows(in: RestaurantsProjection.byName, as: Restaurant.init)
/// }
/// ```
///
/// Changing the layout is a new projection version.
public struct RestaurantRow: TableRow, Hashable, Encodable {
  static let format: UInt8 = 1
  /// `restaurant`, in errors about a stored row.
  public static let rowName = "restaurant"

  var id: UUID
  var name: String
  var cuisine: String

  init(id: UUID, name: String, cuisine: String) {
    self.id = id
    self.name = name
    self.cuisine = cuisine
  }

  /// Reads a row that ``write(to:)`` wrote.
  /// - Throws: `RowError` for bytes that are not such a row.
  public init(from reader: inout RowReader) throws(RowError) {
    try reader.format(Self.format)
    id = try reader.uuid()
    name = try reader.string()
    cuisine = try reader.string()
  }

  /// Writes the row's fields.
  public func write(to writer: inout RowWriter) {
    writer.byte(Self.format)
    writer.uuid(id)
    writer.string(name)
    writer.string(cuisine)
  }
}

extension Restaurant {
  /// The restaurant a row of the `restaurants` table holds.
  public init(_ row: RestaurantRow) {
    self.init(id: row.id, name: row.name, cuisine: Cuisine(rawValue: row.cuisine))
  }
}
