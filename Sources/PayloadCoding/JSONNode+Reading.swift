import Foundation

/// Reading a parsed ``JSONNode``: what the readers of the package's JSON texts (an `import` line,
/// a PostgREST body, ``PayloadJSONDecoder``, a ``PayloadLayout``) ask of a value. Each accessor
/// answers `nil` for a value of another kind, so that the caller names the field in its error.
extension JSONNode {
  /// The members of an object, or `nil`.
  package var members: [String: JSONNode]? {
    if case .object(let members) = value { return members }
    return nil
  }

  /// The elements of an array, or `nil`.
  package var items: [JSONNode]? {
    if case .array(let items) = value { return items }
    return nil
  }

  /// The member `key` of an object; `nil` when absent or when this is not an object.
  package subscript(key: String) -> JSONNode? { members?[key] }

  /// The text of a string, or `nil`.
  package var string: String? {
    if case .string(let text) = value { return text }
    return nil
  }

  /// Whether the value is `null`.
  package var isNull: Bool {
    if case .null = value { return true }
    return false
  }

  /// `true` or `false`, or `nil` for any other value.
  package var bool: Bool? {
    guard case .literal(let text) = value else { return nil }
    switch text {
    case "true": return true
    case "false": return false
    default: return nil
    }
  }

  /// The text of a number as written (`-1.5e3`), or `nil` for any other value.
  package var number: String? {
    guard case .literal(let text) = value, let first = text.utf8.first,
      first == UInt8(ascii: "-") || (48...57).contains(first)
    else { return nil }
    return text
  }

  /// The text of a number written as an integer (`-?(0|[1-9][0-9]*)`, no fraction or exponent),
  /// or `nil`.
  package var integerText: String? {
    guard let text = number, Self.isInteger(text) else { return nil }
    return text
  }

  /// The text of the value as it was written in `data`, the text it was parsed from; `nil` for a
  /// node built in memory.
  package func text(in data: Data) -> Data? {
    guard let range = sourceRange, range.upperBound <= data.count else { return nil }
    return data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]
  }

  /// What the value is, for errors: `a string`, `the number 3`.
  package var summary: String {
    switch value {
    case .null: "null"
    case .literal(let text): text == "true" || text == "false" ? text : "the number \(text)"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// An integer literal: `-?(0|[1-9][0-9]*)`.
  package static func isInteger(_ text: String) -> Bool {
    var digits = Substring(text).utf8
    if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
    guard let first = digits.first, (48...57).contains(first) else { return false }
    return digits.allSatisfy { (48...57).contains($0) } && (first != UInt8(ascii: "0") || digits.count == 1)
  }
}
