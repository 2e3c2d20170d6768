import EventLog
import Foundation

/// How the text of an option or a positional argument becomes its typed value.
///
/// A declaration names its type once (`type: .sequence`); the parser converts with it and a
/// value that does not convert is a usage error naming the option:
/// `invalid value 'nope' for '--from': expected an integer (1…18446744073709551615)`.
public struct ArgumentType<Value: Sendable>: Sendable {
  /// The value of `text`, or why it is not one.
  public let convert: @Sendable (_ text: String) -> Result<Value, ArgumentValueError>

  /// A type whose values `convert` makes.
  public init(_ convert: @escaping @Sendable (_ text: String) -> Result<Value, ArgumentValueError>) {
    self.convert = convert
  }

  /// A type whose values `parse` makes; text it returns `nil` for fails with `expected …`.
  public static func parsing(
    expected: String, _ parse: @escaping @Sendable (String) -> Value?
  ) -> ArgumentType {
    ArgumentType { text in
      parse(text).map { .success($0) } ?? .failure(ArgumentValueError("expected \(expected)"))
    }
  }

  /// The same text as `Value?`: for options that may be left out.
  public var optional: ArgumentType<Value?> {
    let convert = self.convert
    return ArgumentType<Value?> { text in convert(text).map { Optional($0) } }
  }
}

/// Why a text is not a value of an ``ArgumentType``.
public struct ArgumentValueError: Error, Sendable {
  /// What was expected, or what is wrong: `expected an integer (1…20)`.
  public var reason: String
  /// Whether the message may repeat the text given (not for a URL that may hold a password, or a
  /// stream ID that may hold control characters and be hundreds of bytes long).
  public var showsValue = true

  /// Creates the error.
  /// - Parameters:
  ///   - reason: what was expected, or what is wrong.
  ///   - showsValue: whether the message may repeat the text given.
  public init(_ reason: String, showsValue: Bool = true) {
    self.reason = reason
    self.showsValue = showsValue
  }
}

extension ArgumentType where Value == String {
  /// Any text.
  public static var text: ArgumentType { ArgumentType { .success($0) } }

  /// Any text but the empty one.
  public static func nonEmpty(_ what: String) -> ArgumentType {
    ArgumentType { $0.isEmpty ? .failure(ArgumentValueError("expected \(what)")) : .success($0) }
  }

  /// Any text with a character that is not white space.
  ///
  /// A blank text (empty, or spaces and newlines only) fails with `expected <what>, not a blank
  /// text`, without repeating it: `invalid value for '--reason': expected the reason …`.
  /// - Parameter what: what the text is, for the message: `the reason for the erasure`.
  /// - Returns: the type, whose values are the texts given, as given.
  public static func nonBlank(_ what: String) -> ArgumentType {
    ArgumentType { text in
      guard text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return .success(text) }
      return .failure(ArgumentValueError("expected \(what), not a blank text", showsValue: false))
    }
  }
}

extension ArgumentType where Value: FixedWidthInteger & Sendable {
  /// A decimal integer, within `range` when one is given.
  public static func integer(in range: ClosedRange<Value>? = nil) -> ArgumentType {
    let bounds = range.map { " (\($0.lowerBound)…\($0.upperBound))" } ?? ""
    return .parsing(expected: "an integer\(bounds)") { text in
      Value(text).flatMap { value in range.map { $0.contains(value) } ?? true ? value : nil }
    }
  }
}

extension ArgumentType where Value == UInt64 {
  /// An event's sequence number: a positive integer.
  public static var sequence: ArgumentType { .integer(in: 1...UInt64.max) }
}

extension ArgumentType where Value == UUID {
  /// A UUID, in either case.
  public static var uuid: ArgumentType { .parsing(expected: "a UUID") { UUID(uuidString: $0) } }
}

extension ArgumentType where Value == Date {
  /// An ISO 8601 date-time.
  public static var iso8601: ArgumentType {
    .parsing(expected: "an ISO 8601 date-time such as 2026-12-24T19:30:00Z") { ISO8601.date(from: $0) }
  }
}

extension ArgumentType where Value == StreamID {
  /// A stream ID that can exist (not empty, at most 400 bytes, no NUL); the text is not repeated.
  public static var streamID: ArgumentType {
    ArgumentType { text in
      let stream = StreamID(text)
      if let reason = stream.invalidReason { return .failure(ArgumentValueError(reason, showsValue: false)) }
      return .success(stream)
    }
  }
}
