import Foundation

/// Decodes a `Decodable` payload from the JSON ``PayloadJSONEncoder`` writes, by the same rules
/// read back: UUIDs in either case, dates in ISO 8601 (`ISO8601.date(from:)`), `Data` in Base64,
/// URLs as their text, integers written as integers (`-?(0|[1-9][0-9]*)`, in the type's range),
/// floating-point numbers as any JSON number the type holds finitely.
///
/// The text is read by the package's one reader (``JSONNode/parse(_:)``, after `StrictJSON`), so a
/// payload read from an `import` line, a JSON payload stored as it came, and a layout's JSON
/// meet the same rules. Errors are `DecodingError`s whose coding path names the field (what
/// `PayloadTranscoder.describe(_:)` reports).
package struct PayloadJSONDecoder {
  /// A decoder.
  package init() {}

  /// The value of `type` that the JSON text `data` holds.
  /// - Throws: `StrictJSON.SyntaxError` for text that is not JSON, `DecodingError` for JSON that
  ///   does not fit `type`, or the type's own error.
  package func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    try decode(type, from: JSONNode.parse(data))
  }

  /// The value of `type` that a parsed JSON value holds.
  /// - Throws: `DecodingError` for JSON that does not fit `type`, or the type's own error.
  func decode<T: Decodable>(_ type: T.Type, from node: JSONNode) throws -> T {
    try JSONTreeDecoder(node: node, codingPath: [], reads: nil).decodeValue(type)
  }

  /// The value of `type` that a parsed JSON value holds, and the members of the JSON that
  /// `type`'s `init(from:)` did not read: an object's key it never asked for (at any depth), an
  /// array's element it left. A value made from JSON with such members drops them, since the
  /// binary coder writes only what the type holds.
  /// - Returns: the value, and the paths of the members not read (`table`, `items.2.note`), sorted.
  /// - Throws: `DecodingError` for JSON that does not fit `type`, or the type's own error.
  /// - Complexity: O(n) in the members of the JSON.
  package func decodeReadingAll<T: Decodable>(
    _ type: T.Type, from node: JSONNode
  ) throws -> (value: T, unread: [String]) {
    let reads = JSONReads()
    let value = try JSONTreeDecoder(node: node, codingPath: [], reads: reads).decodeValue(type)
    var unread: [String] = []
    reads.collectUnread(under: node, path: "", into: &unread)
    return (value, unread.sorted())
  }
}

/// The nodes a decoding handed to the type (``PayloadJSONDecoder/decodeReadingAll(_:from:)``).
private final class JSONReads {
  // Not Sendable: one decoding, on one thread, owns it.
  private var read = Set<ObjectIdentifier>()

  /// Notes that the type read `node` (a member's or an element's value).
  func note(_ node: JSONNode) { read.insert(ObjectIdentifier(node)) }

  /// Appends the paths of the members and elements under `node` (itself read) that were not.
  func collectUnread(under node: JSONNode, path: String, into unread: inout [String]) {
    func visit(_ child: JSONNode, _ name: String) {
      let childPath = path.isEmpty ? name : path + "." + name
      if read.contains(ObjectIdentifier(child)) {
        collectUnread(under: child, path: childPath, into: &unread)
      } else {
        unread.append(childPath)
      }
    }
    switch node.value {
    case .object(let members): for (key, child) in members { visit(child, key) }
    case .array(let items): for (index, child) in items.enumerated() { visit(child, String(index)) }
    case .null, .literal, .string: break
    }
  }
}

/// The `Decoder` behind ``PayloadJSONDecoder``: one per value, over its node.
private struct JSONTreeDecoder: Decoder {
  let node: JSONNode
  let codingPath: [any CodingKey]
  /// Where the nodes handed to the type are noted, when the caller asks which were not.
  let reads: JSONReads?
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// `type` from the node, reading the types whose own `init(from:)` is not the JSON written
  /// (see `PayloadJSONEncoder.encodeValue`) by the encoder's rule.
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if T.self == UUID.self, let value = try uuid() as? T { return value }
    if T.self == Date.self, let value = try date() as? T { return value }
    if T.self == Data.self, let value = try data() as? T { return value }
    if T.self == URL.self, let value = try url() as? T { return value }
    if T.self == Decimal.self, let value = try decimal() as? T { return value }
    return try T(from: self)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard let members = node.members else { throw mismatch([String: Any].self, expected: "an object") }
    return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, members: members))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard let items = node.items else { throw mismatch([Any].self, expected: "an array") }
    return UnkeyedContainer(decoder: self, items: items)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    SingleValueContainer(decoder: self)
  }

  /// The decoder of `child` at `key`.
  func child(_ child: JSONNode, at key: any CodingKey) -> JSONTreeDecoder {
    reads?.note(child)
    return JSONTreeDecoder(node: child, codingPath: codingPath + [key], reads: reads)
  }

  // MARK: Scalars

  func bool() throws -> Bool {
    guard let value = node.bool else { throw mismatch(Bool.self, expected: "true or false") }
    return value
  }

  func string() throws -> String {
    guard let text = node.string else { throw mismatch(String.self, expected: "a string") }
    return text
  }

  func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    guard let text = node.integerText else { throw mismatch(type, expected: "an integer") }
    guard let value = T(text) else { throw corrupted("\(text) does not fit in \(type)") }
    return value
  }

  func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type) throws -> T {
    guard let text = node.number else { throw mismatch(type, expected: "a number") }
    guard let value = T(text), value.isFinite else { throw corrupted("\(text) does not fit in \(type)") }
    return value
  }

  private func uuid() throws -> UUID {
    let text = try string()
    guard let uuid = UUID(uuidString: text) else { throw corrupted("'\(text.prefix(80))' is not a UUID") }
    return uuid
  }

  private func date() throws -> Date {
    let text = try string()
    guard let date = ISO8601.date(from: text) else {
      throw corrupted("'\(text.prefix(80))' is not an ISO 8601 date")
    }
    return date
  }

  private func data() throws -> Data {
    let text = try string()
    guard let data = Data(base64Encoded: text) else { throw corrupted("the string is not Base64") }
    return data
  }

  private func url() throws -> URL {
    let text = try string()
    guard let url = URL(string: text) else { throw corrupted("'\(text.prefix(80))' is not a URL") }
    return url
  }

  private func decimal() throws -> Decimal {
    guard let text = node.number, let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    else { throw mismatch(Decimal.self, expected: "a number") }
    return value
  }

  // MARK: Errors

  /// `null` where a value was expected is `valueNotFound`, anything else `typeMismatch`.
  func mismatch(_ type: Any.Type, expected: String) -> DecodingError {
    let context = DecodingError.Context(
      codingPath: codingPath, debugDescription: "expected \(expected), found \(node.summary)")
    return node.isNull ? .valueNotFound(type, context) : .typeMismatch(type, context)
  }

  func corrupted(_ reason: String) -> DecodingError {
    .dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: reason))
  }

  // MARK: Containers

  struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONTreeDecoder
    let members: [String: JSONNode]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func child(_ key: Key) throws -> JSONTreeDecoder {
      guard let node = members[key.stringValue] else {
        throw DecodingError.keyNotFound(
          key,
          DecodingError.Context(codingPath: codingPath, debugDescription: "no member '\(key.stringValue)'"))
      }
      return decoder.child(node, at: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).node.isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).floatingPoint(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).floatingPoint(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).integer(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      try child(key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
      keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
      try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
      try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
      decoder.child(members["super"] ?? JSONNode(.null), at: SuperCodingKey())
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
      decoder.child(members[key.stringValue] ?? JSONNode(.null), at: key)
    }
  }

  struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: JSONTreeDecoder
    let items: [JSONNode]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }
    var currentIndex = 0

    init(decoder: JSONTreeDecoder, items: [JSONNode]) {
      self.decoder = decoder
      self.items = items
    }

    /// The decoder of the next element; moves past it.
    mutating func next(_ type: Any.Type) throws -> JSONTreeDecoder {
      let key = IndexCodingKey(intValue: currentIndex)
      guard !isAtEnd else {
        throw DecodingError.valueNotFound(
          type,
          DecodingError.Context(
            codingPath: codingPath + [key], debugDescription: "the array has \(items.count) elements"))
      }
      defer { currentIndex += 1 }
      return decoder.child(items[currentIndex], at: key)
    }

    mutating func decodeNil() throws -> Bool {
      guard !isAtEnd, items[currentIndex].isNull else { return false }
      decoder.reads?.note(items[currentIndex])
      currentIndex += 1
      return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).bool() }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).floatingPoint(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).floatingPoint(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
      try next([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
      try next([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
  }

  struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: JSONTreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.node.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.floatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.floatingPoint(type) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
  }
}
