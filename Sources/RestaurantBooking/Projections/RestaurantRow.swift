import Foundation

/// A restaurant as the `restaurants` projection stores it, in the ``RowWriter`` layout:
/// format 1, ID (16 bytes), name, cuisine.
///
/// Changing the layout is a new projection version.
struct RestaurantRow: Hashable, Sendable {
  static let format: UInt8 = 1

  var id: UUID
  var name: String
  var cuisine: String

  init(id: UUID, name: String, cuisine: String) {
    self.id = id
    self.name = name
    self.cuisine = cuisine
  }

  init(_ bytes: UnsafeRawBufferPointer) throws(RowError) {
    var reader = try RowReader(bytes, format: Self.format, row: "restaurant")
    id = try reader.uuid()
    name = try reader.string()
    cuisine = try reader.string()
  }

  init(_ bytes: [UInt8]) throws {
    self = try bytes.withUnsafeBytes { buffer throws(RowError) in try RestaurantRow(buffer) }
  }

  var bytes: [UInt8] {
    let size = 1 + 16 + RowWriter.size(of: name) + RowWriter.size(of: cuisine)
    return RowWriter.row(format: Self.format, size: size) { writer in
      writer.uuid(id)
      writer.string(name)
      writer.string(cuisine)
    }
  }

  var restaurant: Restaurant { Restaurant(id: id, name: name, cuisine: Cuisine(rawValue: cuisine)) }
}
