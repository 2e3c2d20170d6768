import EventLog
import Foundation

/// The `log --json` / `export` shape of an event, one line each:
/// `{"seq","id","stream","version","type","recordedAt","payload","metadata"}`.
///
/// The payload is rendered by the event type registry (keys sorted); an event of a type the
/// registry does not know is rendered as `{"$binary": base64, "$schemaVersion": n}` so that
/// `import` can restore it unchanged.
///
/// Every UUID is written in lower case: the event's ID, the metadata's, those inside the payload
/// (``EventTypeRegistry/json(of:)``) and those inside stream names (``StreamNames``).
enum EventJSON {
  static func line(_ event: RecordedEvent, registry: EventTypeRegistry, streams: StreamNames) throws -> String
  {
    value(event, registry: registry, streams: streams).rendered()
  }

  static func value(_ event: RecordedEvent, registry: EventTypeRegistry, streams: StreamNames) -> JSONValue {
    let payload: JSONValue
    if let json = try? registry.json(of: event) {
      payload = .raw(String(decoding: json, as: UTF8.self))
    } else {
      payload = .object([
        ("$binary", .string(Data(event.payload).base64EncodedString())),
        ("$schemaVersion", .uint(UInt64(event.schemaVersion))),
      ])
    }
    return .object([
      ("seq", .uint(event.sequence)),
      ("id", .string(event.id.lowercasedString)),
      ("stream", .string(streams.displayed(event.stream))),
      ("version", .uint(event.version)),
      ("type", .string(event.type)),
      ("recordedAt", .string(ISO8601.string(from: event.recordedAt))),
      ("payload", payload),
      (
        "metadata",
        .object([
          ("correlationId", .optional(event.metadata.correlationID?.lowercasedString)),
          ("causationId", .optional(event.metadata.causationID?.lowercasedString)),
          ("origin", .string(event.metadata.origin)),
        ])
      ),
    ])
  }

  /// A one-line summary of the payload for tables: its JSON, shortened.
  static func summary(_ event: RecordedEvent, registry: EventTypeRegistry, width: Int = 80) -> String {
    let text: String
    if let json = try? registry.json(of: event) {
      text = String(decoding: json, as: UTF8.self)
    } else {
      text = "(\(event.payload.count) bytes of an unknown type)"
    }
    return text.count > width ? String(text.prefix(width - 1)) + "…" : text
  }

  /// Parses one exported line back into the event to append and the sequence, stream and
  /// version it claims.
  ///
  /// UUIDs are read in either case, and a stream's name as ``StreamNames/stored`` reads it.
  /// - Parameters:
  ///   - line: the line, without its newline.
  ///   - number: the line's number in its file, from 1, for errors.
  ///   - offset: the byte offset of the line in its file, for errors.
  ///   - registry: the event types, which turn a JSON payload back into its stored bytes.
  ///   - streams: how a stream's name as exported reads back as a stored stream.
  /// - Returns: the sequence, stream and version the line claims, and the event to append.
  /// - Throws: ``CommandFailure`` naming the line number and the field; for text that is not
  ///   JSON (RFC 8259, `StrictJSON`), also the column and the byte offset in the file.
  static func parse(
    _ line: Substring, number: Int, offset: Int = 0, registry: EventTypeRegistry, streams: StreamNames
  ) throws -> (sequence: UInt64, stream: StreamID, version: UInt64, event: NewEvent) {
    func fail(_ message: String) -> CommandFailure { CommandFailure("line \(number): \(message)") }
    do {
      try StrictJSON.validate(line)
    } catch {
      throw CommandFailure(
        "line \(number), column \(error.column) (byte offset \(offset + error.offset)): not valid JSON: \(error.reason)"
      )
    }
    let object: [String: Any]
    do {
      guard let parsed = try JSONValue.parseObject(line) else { throw fail("not a JSON object") }
      object = parsed
    } catch let failure as CommandFailure {
      throw failure
    } catch {
      throw fail("invalid JSON")
    }
    func field<T>(_ name: String, _ type: T.Type) throws -> T {
      guard let value = object[name] else { throw fail("missing field '\(name)'") }
      guard let typed = value as? T else { throw fail("field '\(name)' has the wrong type") }
      return typed
    }
    func unsigned(_ name: String) throws -> UInt64 {
      guard let number = object[name] as? NSNumber, let value = UInt64(exactly: number.doubleValue),
        value >= 1, number.stringValue == String(value)
      else {
        throw fail("field '\(name)' must be a positive integer")
      }
      return value
    }
    let sequence = try unsigned("seq")
    let version = try unsigned("version")
    guard let id = UUID(uuidString: try field("id", String.self)) else {
      throw fail("field 'id' is not a UUID")
    }
    let stream = streams.stored(try field("stream", String.self))
    let type = try field("type", String.self)
    guard let recordedAt = ISO8601.date(from: try field("recordedAt", String.self)) else {
      throw fail("field 'recordedAt' is not an ISO 8601 date")
    }
    let metadataObject = try field("metadata", [String: Any].self)
    func optionalUUID(_ name: String) throws -> UUID? {
      guard let value = metadataObject[name], !(value is NSNull) else { return nil }
      guard let text = value as? String, let uuid = UUID(uuidString: text) else {
        throw fail("field 'metadata.\(name)' is not a UUID")
      }
      return uuid
    }
    let metadata = EventMetadata(
      correlationID: try optionalUUID("correlationId"), causationID: try optionalUUID("causationId"),
      origin: metadataObject["origin"] as? String ?? "")
    let payloadObject = try field("payload", [String: Any].self)
    let schemaVersion: UInt16
    let bytes: [UInt8]
    if let binary = payloadObject["$binary"] as? String {
      guard let data = Data(base64Encoded: binary), let version = payloadObject["$schemaVersion"] as? Int,
        let schema = UInt16(exactly: version)
      else {
        throw fail("field 'payload' has an invalid $binary or $schemaVersion")
      }
      schemaVersion = schema
      bytes = [UInt8](data)
    } else {
      guard registry.schemaVersion(of: type) != nil else {
        throw fail("unknown event type '\(type)' with a JSON payload")
      }
      do {
        // The payload's own text when it can be found; re-serialising the parsed object took
        // 40% of an import.
        let json =
          if let text = JSONValue.topLevelValue(ofKey: "payload", in: line) {
            Data(text.utf8)
          } else {
            try JSONSerialization.data(withJSONObject: payloadObject)
          }
        (schemaVersion, bytes) = try registry.payload(fromJSON: json, type: type)
      } catch {
        throw fail("field 'payload' does not fit \(type): \(Self.describe(error))")
      }
    }
    let event = NewEvent(
      id: id, type: type, schemaVersion: schemaVersion, payload: bytes, metadata: metadata,
      recordedAt: recordedAt)
    return (sequence, stream, version, event)
  }

  /// A decoding error in one line, naming the field.
  static func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    func path(_ context: DecodingError.Context) -> String {
      context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
    switch error {
    case .keyNotFound(let key, let context):
      let prefix = path(context)
      return "missing field '\(prefix.isEmpty ? key.stringValue : prefix + "." + key.stringValue)'"
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
      return "field '\(path(context))' has the wrong type"
    case .dataCorrupted(let context):
      return "field '\(path(context))': \(context.debugDescription)"
    @unknown default:
      return "\(error)"
    }
  }
}
