import EventLog
import Foundation

/// A restaurant as the `restaurants` projection stores it (``TableRow``, in ``RowWriter``'s
/// layout): format 1, ID (16 bytes), name, cuisine.
///
/// Changing the layout is a new projection version.
struct RestaurantRow: TableRow, Hashable {
  static let format: UInt8 = 1
  static let rowName = "restaurant"

  var id: UUID
  var name: String
  var cuisine: String

  init(id: UUID, name: String, cuisine: String) {
    self.id = id
    self.name = name
    self.cuisine = cuisine
  }

  init(from reader: inout RowReader) throws(RowError) {
    try reader.format(Self.format)
    id = try reader.uuid()
    name = try reader.string()
    cuisine = try reader.string()
  }

  func write(to writer: inout RowWriter) {
    writer.byte(Self.format)
    writer.uuid(id)
    writer.string(name)
    writer.string(cuisine)
  }

  var restaurant: Restaurant { Restaurant(id: id, name: name, cuisine: Cuisine(rawValue: cuisine)) }
}
