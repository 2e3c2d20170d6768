import Foundation

extension TableProjection {
  /// A row's fields as its `Encodable` conformance names them, rendered as payloads are
  /// (the package's payload JSON encoder); a row type that is not `Encodable` shows its bytes in hex. The
  /// indexes and the stamps leave their tables out (the rows show what they hold); the extra
  /// tables show their bytes.
  public func shownFields(ofEntryIn table: String, value: [UInt8]) throws -> [ShownField]? {
    guard table == rowTable else {
      if schema.extraTables.contains(table) {
        return [ShownField(name: "bytes", json: Self.quotedHex(value))]
      }
      return nil
    }
    let row = try value.withUnsafeBytes { try Row(storedBytes: $0) }
    guard let encodable = row as? any Encodable else {
      return [ShownField(name: "bytes", json: Self.quotedHex(value))]
    }
    let node = try JSONNode.parse(try PayloadJSONEncoder().encode(encodable))
    guard case .object(let members) = node.value else {
      return [ShownField(name: "value", json: String(decoding: node.rendered, as: UTF8.self))]
    }
    return members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap { name in
      members[name].map { ShownField(name: name, json: String(decoding: $0.rendered, as: UTF8.self)) }
    }
  }

  private static func quotedHex(_ bytes: [UInt8]) -> String { "\"\(Hex.string(bytes))\"" }
}
