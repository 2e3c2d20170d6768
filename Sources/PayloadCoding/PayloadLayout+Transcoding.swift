import Foundation

/// Why a payload does not fit a layout, or has no JSON form.
package struct PayloadTranscodingError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Where (`notes`, `items.2.name`) and what.
  package var description: String
  package init(_ description: String) { self.description = description }
}

extension PayloadLayout {
  /// Whether the layout reads `payload` to its end: every optional that holds a value, and every
  /// array that has elements, has a known kind. (It checks the structure, not the values: a
  /// string's UTF-8 is checked when it is rendered.)
  /// - Complexity: O(n) in the payload's size; no allocation.
  package func describes(_ payload: [UInt8]) -> Bool {
    payload.withUnsafeBytes { describes($0) }
  }

  /// ``describes(_:)`` of bytes.
  package func describes(_ payload: UnsafeRawBufferPointer) -> Bool {
    var cursor = BinaryCursor(buffer: payload)
    do {
      try root.skip(&cursor)
      return cursor.offset == payload.count
    } catch {
      return false
    }
  }

  /// The payload as JSON, the text its type's registry renders (``PayloadJSONEncoder``).
  /// - Throws: ``PayloadTranscodingError`` when the bytes do not fit, or hold a value JSON cannot
  ///   carry back exactly (a float that is not finite, a date without exact text).
  package func json(ofPayload payload: [UInt8]) throws -> Data {
    try payload.withUnsafeBytes { bytes in
      var cursor = BinaryCursor(buffer: bytes)
      let node = try root.render(&cursor, path: "", nullContext: true)
      guard cursor.offset == bytes.count else {
        throw PayloadTranscodingError("\(bytes.count - cursor.offset) bytes are left after the payload")
      }
      return node.rendered
    }
  }

  /// The binary payload of JSON text that ``json(ofPayload:)`` renders.
  /// - Throws: ``PayloadTranscodingError`` naming the field that does not fit (a missing or extra
  ///   key, a value of the wrong kind or out of range), or `StrictJSON.SyntaxError`.
  package func payload(fromJSON json: Data) throws -> [UInt8] {
    try payload(from: JSONNode.parse(json))
  }

  /// The binary payload of a parsed JSON value.
  package func payload(from node: JSONNode) throws -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(128)
    try root.write(node, into: &output, path: "")
    return output
  }
}

extension PayloadLayout.Kind {
  private static func failure(_ path: String, _ reason: String) -> PayloadTranscodingError {
    PayloadTranscodingError(path.isEmpty ? reason : "'\(path)': \(reason)")
  }

  private static func join(_ path: String, _ name: String) -> String {
    path.isEmpty ? name : path + "." + name
  }

  // MARK: Skipping

  func skip(_ cursor: inout BinaryCursor) throws {
    switch self {
    case .unknown: throw PayloadTranscodingError("a value of an unknown kind")
    case .bool: _ = try cursor.readBool()
    case .int, .int8, .int16, .int32, .int64: try readSigned(&cursor)
    case .uint, .uint8, .uint16, .uint32, .uint64: try readUnsigned(&cursor)
    case .float: _ = try cursor.readFixed32("Float")
    case .double, .date: _ = try cursor.readFixed64("Double")
    case .string, .data, .bytes, .personal:
      let length = try cursor.readVarint("length")
      _ = try cursor.readFixedBytes(Int(clamping: length), "bytes")
    case .uuid: _ = try cursor.readFixedBytes(16, "UUID")
    case .optional(let inner):
      if try cursor.readPresence("Optional") { try inner.skip(&cursor) }
    case .array(let element):
      let count = try cursor.readElementCount()
      for _ in 0..<count { try element.skip(&cursor) }
    case .structure(let fields):
      for field in fields { try field.kind.skip(&cursor) }
    }
  }

  /// Reads a signed integer of this kind's width, failing when it does not fit.
  @discardableResult
  private func readSigned(_ cursor: inout BinaryCursor) throws -> Int64 {
    switch self {
    case .int8: Int64(try cursor.readSigned(Int8.self, "Int8"))
    case .int16: Int64(try cursor.readSigned(Int16.self, "Int16"))
    case .int32: Int64(try cursor.readSigned(Int32.self, "Int32"))
    default: try cursor.readSigned(Int64.self, "Int")
    }
  }

  /// Reads an unsigned integer of this kind's width, failing when it does not fit.
  @discardableResult
  private func readUnsigned(_ cursor: inout BinaryCursor) throws -> UInt64 {
    switch self {
    case .uint8: UInt64(try cursor.readUnsigned(UInt8.self, "UInt8"))
    case .uint16: UInt64(try cursor.readUnsigned(UInt16.self, "UInt16"))
    case .uint32: UInt64(try cursor.readUnsigned(UInt32.self, "UInt32"))
    default: try cursor.readUnsigned(UInt64.self, "UInt")
    }
  }

  // MARK: Binary to JSON

  /// The JSON of the value at the cursor. `nullContext` says whether a `nil` here is written as
  /// `null` (an array element, the payload itself, a field that says so) rather than left out;
  /// an optional of an optional cannot tell its two `nil`s apart there.
  func render(_ cursor: inout BinaryCursor, path: String, nullContext: Bool) throws -> JSONNode {
    do {
      switch self {
      case .unknown:
        throw Self.failure(path, "holds a value of a kind the layout does not know")
      case .bool: return JSONNode(.literal(try cursor.readBool() ? "true" : "false"))
      case .int, .int8, .int16, .int32, .int64: return JSONNode(.literal(String(try readSigned(&cursor))))
      case .uint, .uint8, .uint16, .uint32, .uint64:
        return JSONNode(.literal(String(try readUnsigned(&cursor))))
      case .float:
        let value = try cursor.readFloat()
        guard value.isFinite else { throw Self.failure(path, "\(value) is not a JSON number") }
        return JSONNode(.literal(value.description))
      case .double:
        let value = try cursor.readDouble()
        guard value.isFinite else { throw Self.failure(path, "\(value) is not a JSON number") }
        return JSONNode(.literal(value.description))
      case .string: return JSONNode(.string(try cursor.readString()))
      case .data: return JSONNode(.string(try cursor.readData().base64EncodedString()))
      case .bytes: return JSONNode(.array(try cursor.readByteArray().map { JSONNode(.literal(String($0))) }))
      case .personal:
        let range = try cursor.readByteArrayRange()
        let bytes = UnsafeRawBufferPointer(rebasing: cursor.buffer[range])
        if bytes.first == SealedValue.marker, let sealed = SealedValue(bytes: Array(bytes)) {
          return JSONNode(.string(Data(sealed.bytes).base64EncodedString()))
        }
        // Stored in clear, before sealing existed: the value's text.
        guard let text = UTF8Validation.string(bytes) else {
          throw Self.failure(path, "is neither a sealed value nor text (UTF-8) stored in clear")
        }
        return JSONNode(.string(text))
      case .uuid: return JSONNode(.string(try cursor.readUUID().lowercasedString))
      case .date:
        let date = try cursor.readDate()
        guard let text = ISO8601.exactString(from: date) else {
          throw Self.failure(path, "\(date.timeIntervalSinceReferenceDate): \(ISO8601.exactRule)")
        }
        return JSONNode(.string(text))
      case .optional(let inner):
        guard try cursor.readPresence("Optional") else { return JSONNode(.null) }
        if nullContext, case .optional = inner {
          throw Self.failure(path, "an optional of an optional has no JSON form that keeps both nils")
        }
        return try inner.render(&cursor, path: path, nullContext: nullContext)
      case .array(let element):
        let count = try cursor.readElementCount()
        var items: [JSONNode] = []
        items.reserveCapacity(count)
        for index in 0..<count {
          items.append(try element.render(&cursor, path: Self.join(path, String(index)), nullContext: true))
        }
        return JSONNode(.array(items))
      case .structure(let fields):
        var members: [String: JSONNode] = [:]
        members.reserveCapacity(fields.count)
        for field in fields {
          let fieldPath = Self.join(path, field.name)
          if case .optional(let inner) = field.kind, !field.nullWhenAbsent {
            // `encodeIfPresent`: the key is left out for nil.
            guard try cursor.readPresence("Optional") else { continue }
            members[field.name] = try inner.render(&cursor, path: fieldPath, nullContext: true)
          } else {
            members[field.name] = try field.kind.render(&cursor, path: fieldPath, nullContext: true)
          }
        }
        return JSONNode(.object(members))
      }
    } catch let failure as BinaryReadFailure {
      throw Self.failure(path, "\(failure)")
    }
  }

  // MARK: JSON to binary

  func write(_ node: JSONNode, into output: inout [UInt8], path: String) throws {
    func mismatch() -> PayloadTranscodingError {
      Self.failure(path, "expected \(expectation), found \(node.summary)")
    }
    switch self {
    case .unknown:
      throw Self.failure(path, "holds a value of a kind the layout does not know")
    case .bool:
      guard case .literal(let text) = node.value, text == "true" || text == "false" else { throw mismatch() }
      output.append(text == "true" ? 1 : 0)
    case .int, .int8, .int16, .int32, .int64:
      guard case .literal(let text) = node.value, JSONNode.isInteger(text), let value = Int64(text) else {
        throw mismatch()
      }
      guard fits(value) else { throw Self.failure(path, "\(text) is out of range for \(expectation)") }
      Self.writeUnsigned(UInt64(bitPattern: (value &<< 1) ^ (value >> 63)), into: &output)
    case .uint, .uint8, .uint16, .uint32, .uint64:
      guard case .literal(let text) = node.value, JSONNode.isInteger(text), let value = UInt64(text) else {
        throw mismatch()
      }
      guard fits(value) else { throw Self.failure(path, "\(text) is out of range for \(expectation)") }
      Self.writeUnsigned(value, into: &output)
    case .float:
      guard let text = node.number, let value = Float(text), value.isFinite
      else { throw mismatch() }
      withUnsafeBytes(of: value.bitPattern.littleEndian) { output += $0 }
    case .double:
      guard let text = node.number, let value = Double(text),
        value.isFinite
      else { throw mismatch() }
      withUnsafeBytes(of: value.bitPattern.littleEndian) { output += $0 }
    case .string:
      guard case .string(let text) = node.value else { throw mismatch() }
      Self.writeUnsigned(UInt64(text.utf8.count), into: &output)
      output += text.utf8
    case .data:
      guard case .string(let text) = node.value, let data = Data(base64Encoded: text) else {
        throw mismatch()
      }
      Self.writeUnsigned(UInt64(data.count), into: &output)
      output += data
    case .personal:
      // A string whose Base64 is a whole sealed value is one; any other is text stored in clear.
      guard case .string(let text) = node.value else { throw mismatch() }
      if let data = Data(base64Encoded: text), let sealed = SealedValue(bytes: Array(data)) {
        Self.writeUnsigned(UInt64(sealed.bytes.count), into: &output)
        output += sealed.bytes
      } else {
        Self.writeUnsigned(UInt64(text.utf8.count), into: &output)
        output += text.utf8
      }
    case .bytes:
      guard case .array(let items) = node.value else { throw mismatch() }
      Self.writeUnsigned(UInt64(items.count), into: &output)
      for (index, item) in items.enumerated() {
        guard case .literal(let text) = item.value, JSONNode.isInteger(text), let byte = UInt8(text) else {
          throw Self.failure(
            Self.join(path, String(index)), "expected a byte (0 to 255), found \(item.summary)")
        }
        output.append(byte)
      }
    case .uuid:
      guard case .string(let text) = node.value, let uuid = UUID(uuidString: text) else { throw mismatch() }
      withUnsafeBytes(of: uuid.uuid) { output += $0 }
    case .date:
      guard case .string(let text) = node.value, let date = ISO8601.date(from: text) else { throw mismatch() }
      withUnsafeBytes(of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { output += $0 }
    case .optional(let inner):
      if case .null = node.value {
        output.append(0)
      } else {
        output.append(1)
        try inner.write(node, into: &output, path: path)
      }
    case .array(let element):
      guard case .array(let items) = node.value else { throw mismatch() }
      guard let count = UInt32(exactly: items.count) else {
        throw Self.failure(path, "has too many elements")
      }
      withUnsafeBytes(of: count.littleEndian) { output += $0 }
      for (index, item) in items.enumerated() {
        try element.write(item, into: &output, path: Self.join(path, String(index)))
      }
    case .structure(let fields):
      guard case .object(let members) = node.value else { throw mismatch() }
      for field in fields {
        let fieldPath = Self.join(path, field.name)
        if let member = members[field.name] {
          try field.kind.write(member, into: &output, path: fieldPath)
        } else if case .optional = field.kind {
          output.append(0)
        } else {
          throw Self.failure(fieldPath, "is missing")
        }
      }
      if members.count > fields.count
        || members.keys.contains(where: { name in !fields.contains { $0.name == name } })
      {
        let extra = members.keys.filter { name in !fields.contains { $0.name == name } }.sorted()
        throw Self.failure(path, "has keys the layout does not know: \(extra.joined(separator: ", "))")
      }
    }
  }

  /// What a value of this kind looks like in JSON, for errors.
  private var expectation: String {
    switch self {
    case .unknown: "nothing"
    case .bool: "true or false"
    case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64:
      "an integer (\(scalarName ?? ""))"
    case .float, .double: "a number"
    case .string: "a string"
    case .data: "a Base64 string"
    case .personal: "a string (a sealed value's Base64, or text)"
    case .bytes: "an array of bytes"
    case .uuid: "a UUID string"
    case .date: "an ISO 8601 date string"
    case .optional(let inner): inner.expectation + " or null"
    case .array: "an array"
    case .structure: "an object"
    }
  }

  private func fits(_ value: Int64) -> Bool {
    switch self {
    case .int8: Int8(exactly: value) != nil
    case .int16: Int16(exactly: value) != nil
    case .int32: Int32(exactly: value) != nil
    default: true
    }
  }

  private func fits(_ value: UInt64) -> Bool {
    switch self {
    case .uint8: UInt8(exactly: value) != nil
    case .uint16: UInt16(exactly: value) != nil
    case .uint32: UInt32(exactly: value) != nil
    default: true
    }
  }

  private static func writeUnsigned(_ value: UInt64, into output: inout [UInt8]) {
    var remaining = value
    while remaining >= 0x80 {
      output.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
      remaining >>= 7
    }
    output.append(UInt8(truncatingIfNeeded: remaining))
  }
}
