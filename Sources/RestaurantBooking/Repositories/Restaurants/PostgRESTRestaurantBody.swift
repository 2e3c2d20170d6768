import EventLog
import Foundation

/// Decodes one PostgREST response body of restaurant rows (`[{"id", "name", "cuisine"}]`, extra
/// keys ignored) into validated ``RemoteRestaurant`` values. Shared by the Supabase client and the
/// file source; its DTO stays in this file.
enum PostgRESTRestaurantBody {
  /// Decodes and validates `data`.
  ///
  /// - Parameters:
  ///   - data: the body.
  ///   - offset: the index in the snapshot of the body's first row (the page's offset).
  ///   - seen: the IDs of the snapshot so far and their row indexes; updated.
  /// - Returns: the body's restaurants, in its order.
  /// - Throws: ``RestaurantSyncError/malformedPage(offset:reason:)``,
  ///   ``RestaurantSyncError/invalidRow(index:id:field:reason:)`` or
  ///   ``RestaurantSyncError/duplicateID(_:index:firstIndex:)``.
  /// - Complexity: O(n) for n rows.
  static func decode(
    _ data: Data, offset: Int, seen: inout [UUID: Int]
  ) throws(RestaurantSyncError) -> [RemoteRestaurant] {
    // The package's one JSON reader, strict (RFC 8259, `StrictJSON`): a trailing comma, a bad
    // number or escape in an ignored key, a duplicate key or invalid UTF-8 is a malformed page.
    let node: JSONNode
    do {
      node = try JSONNode.parse(data)
    } catch {
      throw .malformedPage(offset: offset, reason: "not valid JSON: \(error)")
    }
    guard let items = node.items else {
      throw .malformedPage(offset: offset, reason: "the body is not a JSON array (it is \(node.summary))")
    }
    let rows = items.map(RowDTO.init)
    var result: [RemoteRestaurant] = []
    result.reserveCapacity(rows.count)
    for (position, row) in rows.enumerated() {
      let index = offset + position
      let restaurant = try row.validated(index: index)
      if let first = seen.updateValue(index, forKey: restaurant.id) {
        throw .duplicateID(restaurant.id, index: index, firstIndex: first)
      }
      result.append(restaurant)
    }
    return result
  }
}

/// One row as PostgREST sends it: each field as found, so that validation can name what is wrong.
private struct RowDTO {
  enum Field {
    case missing
    case null
    case string(String)
    case wrongType(String)
  }

  var isObject = true
  var id = Field.missing
  var name = Field.missing
  var cuisine = Field.missing

  init(_ node: JSONNode) {
    guard let members = node.members else {
      isObject = false
      return
    }
    id = Self.field(members["id"])
    name = Self.field(members["name"])
    cuisine = Self.field(members["cuisine"])
  }

  private static func field(_ node: JSONNode?) -> Field {
    guard let node else { return .missing }
    switch node.value {
    case .string(let text): return .string(text)
    case .null: return .null
    case .literal: return .wrongType(node.bool != nil ? "a boolean" : "a number")
    case .array: return .wrongType("an array")
    case .object: return .wrongType("an object")
    }
  }

  func validated(index: Int) throws(RestaurantSyncError) -> RemoteRestaurant {
    guard isObject else {
      throw .invalidRow(index: index, id: nil, field: "(row)", reason: "is not a JSON object")
    }
    let idText = try Self.string(id, "id", index: index, id: nil)
    guard let uuid = UUID(uuidString: idText) else {
      throw .invalidRow(index: index, id: nil, field: "id", reason: "'\(idText.prefix(80))' is not a UUID")
    }
    let shownID = uuid.lowercasedString
    let name = try Self.string(name, "name", index: index, id: shownID)
    guard !name.allSatisfy(\.isWhitespace) else {
      throw .invalidRow(index: index, id: shownID, field: "name", reason: "is empty")
    }
    let cuisine = try Self.string(cuisine, "cuisine", index: index, id: shownID)
    return RemoteRestaurant(id: uuid, name: name, cuisine: cuisine)
  }

  private static func string(
    _ field: Field, _ name: String, index: Int, id: String?
  ) throws(RestaurantSyncError) -> String {
    switch field {
    case .string(let text): return text
    case .missing: throw .invalidRow(index: index, id: id, field: name, reason: "is missing")
    case .null: throw .invalidRow(index: index, id: id, field: name, reason: "is null, not a string")
    case .wrongType(let type):
      throw .invalidRow(index: index, id: id, field: name, reason: "is \(type), not a string")
    }
  }
}
