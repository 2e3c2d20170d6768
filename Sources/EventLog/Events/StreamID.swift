/// The identity of an event stream: the events of one aggregate, such as one booking.
///
/// A stream ID is 1 to 400 bytes of UTF-8 without NUL; ``EventStore`` rejects others when
/// appending. Conventionally `category-id`, for example `booking-6F9619FF-…`.
public struct StreamID: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// The stream ID's text.
  public let rawValue: String

  /// The longest stream ID in UTF-8 bytes (LMDB keys are at most 511 bytes).
  public static let maximumLength = 400

  /// Creates a stream ID. Validity is checked when it is used in an append.
  public init(_ rawValue: String) { self.rawValue = rawValue }

  /// Creates a stream ID from a literal: `let stream: StreamID = "booking-42"`.
  public init(stringLiteral value: String) { self.rawValue = value }

  /// The stream ID's text, ``rawValue``.
  public var description: String { rawValue }

  /// Orders stream IDs by their text, as `String` compares it.
  public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }

  /// Why the ID cannot be stored (empty, too long, a NUL), or `nil` when it can.
  public var invalidReason: String? {
    let count = rawValue.utf8.count
    if count == 0 { return "a stream ID must not be empty" }
    if count > Self.maximumLength {
      return "a stream ID must be at most \(Self.maximumLength) UTF-8 bytes, not \(count)"
    }
    if rawValue.utf8.contains(0) { return "a stream ID must not contain NUL" }
    return nil
  }
}
