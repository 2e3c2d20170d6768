import Foundation

/// The event types an application knows, by stored type name: renders any stored event's
/// payload as JSON for audit, and turns such JSON back into a binary payload (for imports).
///
/// ```swift
/// let registry = EventTypeRegistry([BookingCreated.self, BookingDeleted.self])
/// let json = try registry.json(of: event)      // {"bookingID":"…", …}
/// ```
public struct EventTypeRegistry: Sendable {
  private struct Entry: Sendable {
    let schemaVersion: UInt16
    let render: @Sendable (RecordedEvent, JSONEncoder) throws -> Data
    let parse: @Sendable (Data, JSONDecoder) throws -> [UInt8]
  }

  private var entries: [String: Entry] = [:]

  /// Creates a registry of `types`.
  public init(_ types: [any EventPayload.Type] = []) {
    for type in types { register(type) }
  }

  /// Adds `type`; a later registration of the same type name replaces an earlier one.
  public mutating func register<E: EventPayload>(_ type: E.Type) {
    entries[E.eventType] = Entry(
      schemaVersion: E.schemaVersion,
      render: { event, encoder in try encoder.encode(event.decode(E.self)) },
      parse: { data, decoder in try BinaryEncoder().encode(decoder.decode(E.self, from: data)) })
  }

  /// The registered type names, sorted.
  public var typeNames: [String] { entries.keys.sorted() }

  /// The schema version new events of `type` are written with, or `nil` when it is unknown.
  public func schemaVersion(of type: String) -> UInt16? { entries[type]?.schemaVersion }

  /// The payload of `event` as JSON (keys sorted, dates ISO 8601), upcast to the current schema.
  /// - Returns: `nil` when the event's type is not registered.
  /// - Throws: ``EventStoreError`` naming the event when the payload does not decode.
  public func json(of event: RecordedEvent) throws -> Data? {
    guard let entry = entries[event.type] else { return nil }
    return try entry.render(event, Self.encoder)
  }

  /// Encodes a JSON payload (as ``json(of:)`` renders it) of `type` in the binary format, at the
  /// type's current schema version.
  /// - Throws: ``EventStoreError/invalidEvent(id:reason:)``-style errors are the caller's; this
  ///   throws `DecodingError` for JSON that does not fit, and an error for an unknown type.
  public func payload(fromJSON data: Data, type: String) throws -> (schemaVersion: UInt16, bytes: [UInt8]) {
    guard let entry = entries[type] else {
      throw EventStoreError.unsupportedSchemaVersion(type: type, version: 0, supported: 0)
    }
    return (entry.schemaVersion, try entry.parse(data, Self.decoder))
  }

  static let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(ISO8601.string(from: date))
    }
    return encoder
  }()

  static let decoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
      let container = try decoder.singleValueContainer()
      let text = try container.decode(String.self)
      guard let date = ISO8601.date(from: text) else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "'\(text)' is not an ISO 8601 date")
      }
      return date
    }
    return decoder
  }()
}

/// ISO 8601 dates in UTC with fractional seconds (`2026-11-30T12:00:00.123456Z`), and parsing of
/// the same with or without fractions.
public enum ISO8601 {
  /// Formats `date` in UTC with microseconds, dropping trailing zero fractions.
  public static func string(from date: Date) -> String {
    var seconds = date.timeIntervalSince1970
    var micros = Int64((seconds * 1_000_000).rounded())
    seconds = Double(micros.floorDiv(1_000_000))
    micros = micros - Int64(seconds) * 1_000_000
    let base = Date(timeIntervalSince1970: seconds)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: base)
    func pad(_ value: Int?, _ width: Int) -> String { String(value ?? 0).leftPadded(to: width) }
    var text =
      "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))"
    if micros != 0 {
      var fraction = String(micros).leftPadded(to: 6)
      while fraction.hasSuffix("0") { fraction.removeLast() }
      text += "." + fraction
    }
    return text + "Z"
  }

  /// Parses an ISO 8601 date-time with a `Z` or `±hh:mm` offset, with or without fractional seconds.
  public static func date(from text: String) -> Date? {
    let withFraction = ISO8601DateFormatter()
    withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = withFraction.date(from: text) {
      // The formatter keeps milliseconds only: add the rest of the fraction back.
      return refine(date, text)
    }
    let plain = ISO8601DateFormatter()
    plain.formatOptions = [.withInternetDateTime]
    return plain.date(from: text)
  }

  private static func refine(_ date: Date, _ text: String) -> Date {
    guard let dot = text.firstIndex(of: ".") else { return date }
    let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
    guard digits.count > 3,
      let micros = Int(digits.prefix(6).padding(toLength: 6, withPad: "0", startingAt: 0))
    else { return date }
    let whole = (date.timeIntervalSince1970).rounded(.down)
    return Date(timeIntervalSince1970: whole + Double(micros) / 1_000_000)
  }
}

extension Int64 {
  fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }
}
