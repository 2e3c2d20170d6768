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
    // RFC 8259 first: JSONDecoder lets through trailing commas, bad numbers and escapes in
    // ignored keys, duplicate keys, and reports invalid UTF-8 as a mistyped field.
    do {
      try StrictJSON.validate(data)
    } catch {
      throw .malformedPage(offset: offset, reason: "not valid JSON: \(error)")
    }
    let rows: [RowDTO]
    do {
      rows = try JSONDecoder().decode([RowDTO].self, from: data)
    } catch {
      throw .malformedPage(offset: offset, reason: describe(error))
    }
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

  private static func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    switch error {
    case .dataCorrupted(let context):
      var text = context.debugDescription
      if let underlying = context.underlyingError as NSError? {
        let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        if !detail.isEmpty { text += " (\(detail))" }
      }
      return text
    case .typeMismatch(_, let context):
      return context.codingPath.isEmpty ? "the body is not a JSON array" : context.debugDescription
    case .keyNotFound(_, let context), .valueNotFound(_, let context):
      return context.debugDescription
    @unknown default:
      return "\(error)"
    }
  }
}

/// One row as PostgREST sends it: each field as found, so that validation can name what is wrong.
private struct RowDTO: Decodable {
  enum Field {
    case missing
    case null
    case string(String)
    case wrongType(String)
  }

  enum CodingKeys: String, CodingKey {
    case id, name, cuisine
  }

  var isObject = true
  var id = Field.missing
  var name = Field.missing
  var cuisine = Field.missing

  init(from decoder: any Decoder) throws {
    guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
      isObject = false
      return
    }
    id = Self.field(.id, in: container)
    name = Self.field(.name, in: container)
    cuisine = Self.field(.cuisine, in: container)
  }

  private static func field(_ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>) -> Field {
    guard container.contains(key) else { return .missing }
    if let text = try? container.decode(String.self, forKey: key) { return .string(text) }
    if (try? container.decodeNil(forKey: key)) == true { return .null }
    if (try? container.decode(Bool.self, forKey: key)) != nil { return .wrongType("a boolean") }
    if (try? container.decode(Double.self, forKey: key)) != nil { return .wrongType("a number") }
    if (try? container.nestedUnkeyedContainer(forKey: key)) != nil { return .wrongType("an array") }
    return .wrongType("an object")
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
