import Foundation

/// Renders an `Encodable` payload as the JSON of audit output and exports: keys sorted (bytewise,
/// by their UTF-8), no white space, UUIDs in lower case, dates in ISO 8601 UTC with the exact
/// fraction (`ISO8601.exactString(from:)`), `Data` in Base64, slashes not escaped.
///
/// A payload laid out by a recorded ``PayloadLayout`` renders to the same bytes
/// (``JSONNode/render(into:)`` writes both).
///
/// The keys are the payload type's coding keys, which for a synthesized `Codable` conformance are
/// its stored properties' names exactly as declared (`bookingID`, `restaurantName`): that is the
/// one rule for the key spelling inside payloads. `JSONEncoder` cannot write a UUID in lower case
/// (it writes `uuidString`), hence this encoder; ``PayloadJSONDecoder`` reads either case back.
package struct PayloadJSONEncoder {
  /// An encoder.
  package init() {}

  /// The JSON text of `value`.
  /// - Throws: `EncodingError.invalidValue` for a number that is not finite, or a date without
  ///   exact ISO 8601 text.
  package func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONTreeEncoder(codingPath: [])
    try encoder.encodeValue(value)
    var output: [UInt8] = []
    output.reserveCapacity(256)
    encoder.node.render(into: &output)
    return Data(output)
  }
}

/// The `Encoder` behind ``PayloadJSONEncoder``: each value encodes into its own node.
private final class JSONTreeEncoder: Encoder, PersonalValueShowing {
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  var node = JSONNode(.null)

  init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

  /// The node of `value`, intercepting the types whose own `encode(to:)` is not the JSON wanted.
  func encodeValue<T: Encodable>(_ value: T) throws {
    switch value {
    case let uuid as UUID: node.value = .string(uuid.lowercasedString)
    case let date as Date:
      guard let text = ISO8601.exactString(from: date) else {
        throw EncodingError.invalidValue(
          date,
          EncodingError.Context(
            codingPath: codingPath,
            debugDescription:
              "\(date.timeIntervalSinceReferenceDate) has no exact ISO 8601 text (\(ISO8601.exactRule))"
          ))
      }
      node.value = .string(text)
    case let data as Data: node.value = .string(data.base64EncodedString())
    case let url as URL: node.value = .string(url.absoluteString)
    case let decimal as Decimal: node.value = .literal(decimal.description)
    default: try value.encode(to: self)
    }
  }

  /// A child encoder at `key`.
  func child(_ key: any CodingKey) -> JSONTreeEncoder { JSONTreeEncoder(codingPath: codingPath + [key]) }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    if case .object = node.value {} else { node.value = .object([:]) }
    return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    if case .array = node.value {} else { node.value = .array([]) }
    return UnkeyedContainer(encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoder: self) }

  /// The literal of a number, refusing what JSON cannot hold.
  func number<N: FloatingPoint & LosslessStringConvertible>(_ value: N) throws -> JSONNode.Value {
    guard value.isFinite else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) is not a JSON number"))
    }
    return .literal(value.description)
  }

  struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONTreeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: JSONNode, for key: Key) {
      guard case .object(var members) = encoder.node.value else { return }
      members[key.stringValue] = value
      encoder.node.value = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { set(JSONNode(.null), for: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: String, forKey key: Key) throws { set(JSONNode(.string(value)), for: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
      set(JSONNode(try encoder.number(value)), for: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
      set(JSONNode(try encoder.number(value)), for: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
      set(JSONNode(.literal("\(value)")), for: key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
      let child = encoder.child(key)
      try child.encodeValue(value)
      set(child.node, for: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
      let child = encoder.child(key)
      set(child.node, for: key)
      return child.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      let child = encoder.child(key)
      set(child.node, for: key)
      return child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
      guard let key = Key(stringValue: "super") else { return encoder.child(SuperCodingKey()) }
      return superEncoder(forKey: key)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
      let child = encoder.child(key)
      set(child.node, for: key)
      return child
    }
  }

  struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONTreeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int {
      guard case .array(let items) = encoder.node.value else { return 0 }
      return items.count
    }

    private func append(_ node: JSONNode) {
      guard case .array(var items) = encoder.node.value else { return }
      items.append(node)
      encoder.node.value = .array(items)
    }

    private var nextKey: any CodingKey { IndexCodingKey(intValue: count) }

    mutating func encodeNil() throws { append(JSONNode(.null)) }
    mutating func encode(_ value: Bool) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: String) throws { append(JSONNode(.string(value))) }
    mutating func encode(_ value: Double) throws { append(JSONNode(try encoder.number(value))) }
    mutating func encode(_ value: Float) throws { append(JSONNode(try encoder.number(value))) }
    mutating func encode(_ value: Int) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: Int8) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: Int16) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: Int32) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: Int64) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: UInt) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: UInt8) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: UInt16) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: UInt32) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode(_ value: UInt64) throws { append(JSONNode(.literal("\(value)"))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
      let child = encoder.child(nextKey)
      try child.encodeValue(value)
      append(child.node)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
      let child = encoder.child(nextKey)
      append(child.node)
      return child.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
      let child = encoder.child(nextKey)
      append(child.node)
      return child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
      let child = encoder.child(nextKey)
      append(child.node)
      return child
    }
  }

  struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONTreeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node.value = .null }
    mutating func encode(_ value: Bool) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: String) throws { encoder.node.value = .string(value) }
    mutating func encode(_ value: Double) throws { encoder.node.value = try encoder.number(value) }
    mutating func encode(_ value: Float) throws { encoder.node.value = try encoder.number(value) }
    mutating func encode(_ value: Int) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: Int8) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: Int16) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: Int32) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: Int64) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: UInt) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: UInt8) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: UInt16) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: UInt32) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode(_ value: UInt64) throws { encoder.node.value = .literal("\(value)") }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
  }
}
