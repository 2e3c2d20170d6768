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

  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered() == rhs.rendered() }

  /// A string, or `null` for `nil`.
  public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

  /// The compact rendering (no spaces, no newline).
  public func rendered() -> String {
    var output = ""
    render(into: &output)
    return output
  }

  private func render(into output: inout String) {
    switch self {
    case .null: output += "null"
    case .bool(let value): output += value ? "true" : "false"
    case .int(let value): output += String(value)
    case .uint(let value): output += String(value)
    case .string(let value): Self.quote(value, into: &output)
    case .raw(let value): output += value
    case .array(let values):
      output += "["
      for (index, value) in values.enumerated() {
        if index > 0 { output += "," }
        value.render(into: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { output += "," }
        Self.quote(key, into: &output)
        output += ":"
        value.render(into: &output)
      }
      output += "}"
    }
  }

  private static func quote(_ text: String, into output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case let c where c.value < 0x20:
        let hex = String(c.value, radix: 16)
        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }

  /// Parses JSON text into a Foundation object (for reading `import` lines).
  static func parseObject(_ line: Substring) throws -> [String: Any]? {
    try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any]
  }
}
