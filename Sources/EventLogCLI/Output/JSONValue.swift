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
}
