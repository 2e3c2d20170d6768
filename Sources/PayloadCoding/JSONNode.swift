import Foundation

/// A JSON value in the form payloads are rendered in: what ``PayloadJSONEncoder`` builds from a
/// payload's type, what a ``PayloadLayout`` builds from a payload's bytes, and what a JSON
/// payload parses into. One renderer writes all of them, so the text is the same whichever made
/// the tree: keys sorted bytewise by their UTF-8, no white space, strings quoted by
/// ``JSONWriter``'s rule.
///
/// Numbers, `true` and `false` are kept as their literal text, so parsing then rendering keeps
/// every digit of a number (a `UInt64` beyond 2⁵³, the shortest digits of a `Double`).
///
/// ``parse(_:)`` is the package's one JSON reader: every JSON text the package reads (an
/// `import` line, a payload, a recorded layout, a PostgREST body) is validated by `StrictJSON` and
/// parsed here, then read through the accessors of `JSONNode+Reading.swift` or decoded into a
/// `Decodable` type by ``PayloadJSONDecoder``.
package final class JSONNode {
  package enum Value {
    case null
    /// A number, a `true` or a `false`, written as it is.
    case literal(String)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])
  }

  package var value: Value
  /// Where the value was written in the text it was parsed from (byte offsets); `nil` for a
  /// node built in memory.
  package var sourceRange: Range<Int>?

  package init(_ value: Value) { self.value = value }

  init(_ value: Value, sourceRange: Range<Int>) {
    self.value = value
    self.sourceRange = sourceRange
  }

  /// The rendered text.
  package var rendered: Data {
    var output: [UInt8] = []
    output.reserveCapacity(256)
    render(into: &output)
    return Data(output)
  }

  func render(into output: inout [UInt8]) {
    switch value {
    case .null: output += "null".utf8
    case .literal(let text): output += text.utf8
    case .string(let text): JSONWriter.appendQuoted(text, to: &output)
    case .array(let items):
      output.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        item.render(into: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated()
      {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        JSONWriter.appendQuoted(key, to: &output)
        output.append(UInt8(ascii: ":"))
        members[key]?.render(into: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  // MARK: - Parsing

  /// Parses one JSON text, first validated by `StrictJSON` (RFC 8259, no duplicate keys, at
  /// most `StrictJSON.maximumDepth` deep). Each node keeps the byte range it was written at
  /// (``sourceRange``), so that a part of the text can be kept as written.
  /// - Throws: `StrictJSON.SyntaxError` for text that is not valid JSON.
  /// - Complexity: O(n) in the length of the text.
  package static func parse(_ data: Data) throws(StrictJSON.SyntaxError) -> JSONNode {
    try StrictJSON.validate(data)
    return data.withUnsafeBytes { raw in
      var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
      return parser.value()
    }
  }

  /// A reader of text that `StrictJSON` accepted, so it meets no error. It recurses once per
  /// level of nesting, which validation bounds (`StrictJSON.maximumDepth`).
  private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func skipWhitespace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x09, 0x0A, 0x0D: index += 1
        default: return
        }
      }
    }

    mutating func value() -> JSONNode {
      skipWhitespace()
      let start = index
      switch bytes[index] {
      case UInt8(ascii: "{"):
        index += 1
        var members: [String: JSONNode] = [:]
        skipWhitespace()
        if bytes[index] == UInt8(ascii: "}") {
          index += 1
          return JSONNode(.object(members), sourceRange: start..<index)
        }
        while true {
          skipWhitespace()
          let key = string()
          skipWhitespace()
          index += 1  // ':'
          members[key] = value()
          skipWhitespace()
          let separator = bytes[index]
          index += 1
          if separator == UInt8(ascii: "}") { return JSONNode(.object(members), sourceRange: start..<index) }
        }
      case UInt8(ascii: "["):
        index += 1
        var items: [JSONNode] = []
        skipWhitespace()
        if bytes[index] == UInt8(ascii: "]") {
          index += 1
          return JSONNode(.array(items), sourceRange: start..<index)
        }
        while true {
          items.append(value())
          skipWhitespace()
          let separator = bytes[index]
          index += 1
          if separator == UInt8(ascii: "]") { return JSONNode(.array(items), sourceRange: start..<index) }
        }
      case UInt8(ascii: "\""):
        let text = string()
        return JSONNode(.string(text), sourceRange: start..<index)
      case UInt8(ascii: "n"):
        index += 4
        return JSONNode(.null, sourceRange: start..<index)
      default:
        // A number, `true` or `false`: up to the next delimiter.
        while index < bytes.count {
          switch bytes[index] {
          case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D: break
          default:
            index += 1
            continue
          }
          break
        }
        return JSONNode(
          .literal(String(decoding: bytes[start..<index], as: UTF8.self)), sourceRange: start..<index)
      }
    }

    /// A string at its opening quote, unescaped; runs without escapes are copied whole.
    mutating func string() -> String {
      index += 1
      let start = index
      while bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
      if bytes[index] == UInt8(ascii: "\"") {
        defer { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
      }
      var utf8 = Array(bytes[start..<index])
      while bytes[index] != UInt8(ascii: "\"") {
        guard bytes[index] == UInt8(ascii: "\\") else {
          let run = index
          while bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
          utf8 += bytes[run..<index]
          continue
        }
        index += 1
        let escaped = bytes[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = hex4()
          if (0xD800...0xDBFF).contains(scalar) {
            index += 2  // "\u" of the low surrogate, which validation guaranteed
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4() - 0xDC00)
          }
          if let value = Unicode.Scalar(scalar) { utf8 += Array(String(Character(value)).utf8) }
        default: utf8.append(escaped)  // '"', '\', '/'
        }
      }
      index += 1
      return String(decoding: utf8, as: UTF8.self)
    }

    mutating func hex4() -> UInt32 {
      var value: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index] | 0x20
        value = value << 4 | UInt32(byte >= UInt8(ascii: "a") ? byte - UInt8(ascii: "a") + 10 : byte - 48)
        index += 1
      }
      return value
    }
  }
}
