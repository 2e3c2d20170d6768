import EventLog
import Foundation

/// A JSON value that renders its object keys in the order given, so that output (and `export`)
/// is byte-for-byte reproducible.
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case int(Int64)
  case uint(UInt64)
  case string(String)
  case array([JSONValue])
  case object([(String, JSONValue)])
  /// Already rendered JSON (a payload from the event type registry), embedded as is.
  case raw(String)

  /// Whether the two render to the same text (so `.int(1)` equals `.uint(1)` and `.raw("1")`).
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered() == rhs.rendered() }

  /// A string, or `null` for `nil`.
  public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

  /// The compact rendering (no spaces, no newline), strings quoted by the package's one rule
  /// (`JSONWriter` in `EventLog`).
  public func rendered() -> String {
    var output: [UInt8] = []
    render(into: &output)
    return String(decoding: output, as: UTF8.self)
  }

  private func render(into output: inout [UInt8]) {
    switch self {
    case .null: output += "null".utf8
    case .bool(let value): output += (value ? "true" : "false").utf8
    case .int(let value): output += String(value).utf8
    case .uint(let value): output += String(value).utf8
    case .string(let value): JSONWriter.appendQuoted(value, to: &output)
    case .raw(let value): output += value.utf8
    case .array(let values):
      output.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        value.render(into: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        JSONWriter.appendQuoted(key, to: &output)
        output.append(UInt8(ascii: ":"))
        value.render(into: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  /// The text of the value of `key` in the top level of the JSON object `text`, as written.
  ///
  /// `text` must be valid JSON (parse it first); this only finds where values begin and end.
  /// - Returns: `nil` when the key is absent, appears more than once, or is written with escapes
  ///   (the caller then falls back to the parsed object).
  /// - Complexity: O(n) in the length of `text`.
  static func topLevelValue(ofKey key: String, in text: Substring) -> Substring? {
    let bytes = text.utf8
    var index = bytes.startIndex
    let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    func isStructural(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","),
        UInt8(ascii: ":"):
        true
      default: false
      }
    }
    func skipWhitespace() {
      while index < bytes.endIndex, isWhitespace(bytes[index]) {
        index = bytes.index(after: index)
      }
    }
    func skipString() {  // at the opening quote; stops after the closing one
      index = bytes.index(after: index)
      while index < bytes.endIndex, bytes[index] != quote {
        if bytes[index] == backslash { index = bytes.index(after: index) }
        if index < bytes.endIndex { index = bytes.index(after: index) }
      }
      if index < bytes.endIndex { index = bytes.index(after: index) }
    }
    func skipValue() {
      guard index < bytes.endIndex else { return }
      switch bytes[index] {
      case quote:
        skipString()
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        var depth = 0
        while index < bytes.endIndex {
          switch bytes[index] {
          case quote:
            skipString()
            continue
          case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 {
              index = bytes.index(after: index)
              return
            }
          default:
            break
          }
          index = bytes.index(after: index)
        }
      default:  // a number, true, false or null
        while index < bytes.endIndex, !isWhitespace(bytes[index]), !isStructural(bytes[index]) {
          index = bytes.index(after: index)
        }
      }
    }
    skipWhitespace()
    guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "{") else { return nil }
    index = bytes.index(after: index)
    var found: Substring?
    var occurrences = 0
    while true {
      skipWhitespace()
      guard index < bytes.endIndex, bytes[index] == quote else { break }
      let keyStart = bytes.index(after: index)
      skipString()
      let keyText = bytes[keyStart..<bytes.index(before: index)]
      skipWhitespace()
      guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ":") else { return nil }
      index = bytes.index(after: index)
      skipWhitespace()
      let valueStart = index
      skipValue()
      if keyText.contains(backslash) { return nil }
      if keyText.elementsEqual(key.utf8) {
        occurrences += 1
        found = Substring(bytes[valueStart..<index])
      }
      skipWhitespace()
      guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ",") else { break }
      index = bytes.index(after: index)
    }
    return occurrences == 1 ? found : nil
  }

  /// Parses JSON text into a Foundation object (for reading `import` lines).
  static func parseObject(_ line: Substring) throws -> [String: Any]? {
    try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any]
  }
}
