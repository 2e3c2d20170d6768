import EventLog
import Foundation

/// The `log --json` / `export` shape of an event, one line each:
/// `{"seq","id","stream","version","type","schemaVersion","recordedAt","payload","metadata"}`,
/// `"layout"` on the line of an event whose append recorded a layout revision, and
/// `"skipped": {"kind", "reason"}` on the line of an event the projections skip as invalid or
/// refused (so that `import` restores it skipped: what a pull kept, a backup keeps).
///
/// The payload is rendered by a `PayloadTranscoder` (keys sorted): by the event type registry
/// when this build knows the type, else by the layout the environment recorded, with the same
/// bytes; an event neither knows is rendered as `{"$binary": base64, "$schemaVersion": n}` so
/// that `import` can restore it unchanged. The layout revisions travel with the export (on the
/// line of the event that recorded each), so that `import` into an empty environment by a build
/// without the types stores the same binary records (`Docs/OnDiskFormat.md`).
///
/// Every UUID is written in lower case: the event's ID, the metadata's, those inside the payload
/// (``EventTypeRegistry/json(of:)``) and those inside stream names (``AppSchema/StreamNames``).
enum EventJSON {
  static func line(
    _ event: RecordedEvent, payloads: PayloadTranscoder, streams: AppSchema.StreamNames,
    skipped: SkippedEvent? = nil
  ) throws -> String {
    value(event, payloads: payloads, streams: streams, skipped: skipped).rendered()
  }

  static func value(
    _ event: RecordedEvent, payloads: PayloadTranscoder, streams: AppSchema.StreamNames,
    skipped: SkippedEvent? = nil
  ) -> JSONValue {
    let payload = payloads.json(of: event)
    var members: [(String, JSONValue)] = [
      ("seq", .uint(event.sequence)),
      ("id", .string(event.id.lowercasedString)),
      ("stream", .string(streams.displayed(event.stream))),
      ("version", .uint(event.version)),
      ("type", .string(event.type)),
      ("schemaVersion", .uint(UInt64(payload.schemaVersion))),
      ("recordedAt", .string(ISO8601.string(from: event.recordedAt))),
      ("payload", .raw(String(decoding: payload.json, as: UTF8.self))),
      (
        "metadata",
        .object([
          ("correlationId", .optional(event.metadata.correlationID?.lowercasedString)),
          ("causationId", .optional(event.metadata.causationID?.lowercasedString)),
          ("origin", .string(event.metadata.origin)),
        ])
      ),
    ]
    for layout in payloads.layouts(recordedAt: event.sequence)
    where layout.type == event.type && layout.schemaVersion == event.schemaVersion {
      members.append(("layout", .raw(String(decoding: layout.exportedJSON, as: UTF8.self))))
    }
    // Only what an import could not judge again: an unreadable event is judged by the build that
    // imports it (it may read it), so marking it would make an export by another build differ.
    if let skipped, skipped.kind != .unreadable {
      members.append(
        (
          "skipped",
          .object([("kind", .string(Self.name(of: skipped.kind))), ("reason", .string(skipped.reason))])
        ))
    }
    return .object(members)
  }

  /// The name of a skip's kind in output: `unreadable`, `invalid` or `refused`.
  static func name(of kind: SkippedEvent.Kind) -> String {
    switch kind {
    case .unreadable: "unreadable"
    case .invalid: "invalid"
    case .refused: "refused"
    }
  }

  /// A one-line summary of the payload for tables: its JSON, shortened.
  static func summary(_ event: RecordedEvent, payloads: PayloadTranscoder, width: Int = 80) -> String {
    let payload = payloads.json(of: event)
    let text =
      payload.form == .binary
      ? "(\(event.payload.count) bytes of an unknown type)" : String(decoding: payload.json, as: UTF8.self)
    return text.count > width ? String(text.prefix(width - 1)) + "…" : text
  }

  /// Parses one exported line back into the event to append and the sequence, stream and
  /// version it claims.
  ///
  /// UUIDs are read in either case, and a stream's name as ``AppSchema/StreamNames/stored`` reads it. A
  /// line's `"layout"` is added to `payloads` before its payload is read, so that the payloads of
  /// a type this build does not know become binary again (`PayloadTranscoder`); one that
  /// neither the types nor a layout read is kept as JSON (``PayloadEncoding/json``).
  /// - Parameters:
  ///   - line: the line, without its newline.
  ///   - number: the line's number in its file, from 1, for errors.
  ///   - offset: the byte offset of the line in its file, for errors.
  ///   - payloads: the event types, and the layouts of the lines before, which turn a JSON
  ///     payload back into its stored bytes.
  ///   - streams: how a stream's name as exported reads back as a stored stream.
  /// - Returns: the sequence, stream and version the line claims, and the event to append.
  /// - Throws: ``CommandFailure`` naming the line number and the field; for text that is not
  ///   JSON (RFC 8259, `StrictJSON`), also the column and the byte offset in the file.
  static func parse(
    _ line: Substring, number: Int, offset: Int = 0, payloads: inout PayloadTranscoder,
    streams: AppSchema.StreamNames
  ) throws -> (
    sequence: UInt64, stream: StreamID, version: UInt64, event: NewEvent,
    skipped: (kind: SkippedEvent.Kind, reason: String)?
  ) {
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
    var skipped: (kind: SkippedEvent.Kind, reason: String)?
    if let value = object["skipped"] {
      let kinds: [String: SkippedEvent.Kind] = [
        "unreadable": .unreadable, "invalid": .invalid, "refused": .refused,
      ]
      guard let note = value as? [String: Any], note.count == 2, let name = note["kind"] as? String,
        let kind = kinds[name], let reason = note["reason"] as? String
      else {
        throw fail(#"field 'skipped' must be {"kind": "unreadable"|"invalid"|"refused", "reason": text}"#)
      }
      skipped = (kind, reason)
    }
    let payloadObject = try field("payload", [String: Any].self)
    if let binary = payloadObject["$binary"] as? String {
      guard let data = Data(base64Encoded: binary), let number = payloadObject["$schemaVersion"] as? Int,
        let schema = UInt16(exactly: number)
      else {
        throw fail("field 'payload' has an invalid $binary or $schemaVersion")
      }
      let event = NewEvent(
        id: id, type: type, schemaVersion: schema, payload: [UInt8](data), metadata: metadata,
        recordedAt: recordedAt)
      return (sequence, stream, version, event, skipped)
    }
    // An export before format 4 has no "schemaVersion": its JSON payloads are of the registered
    // type's current version.
    let schemaVersion: UInt16
    if let number = object["schemaVersion"] {
      guard let number = number as? NSNumber, let value = UInt16(exactly: number.doubleValue),
        number.stringValue == String(value)
      else { throw fail("field 'schemaVersion' must be an integer from 0 to 65535") }
      schemaVersion = value
    } else if let current = payloads.eventTypes.schemaVersion(of: type) {
      schemaVersion = current
    } else {
      throw fail("unknown event type '\(type)' with a JSON payload and no 'schemaVersion'")
    }
    if object["layout"] != nil {
      guard let text = JSONValue.topLevelValue(ofKey: "layout", in: line) else {
        throw fail("field 'layout' cannot be read")
      }
      do {
        payloads.add(
          try RecordedLayout(
            type: type, schemaVersion: schemaVersion, sequence: sequence, exportedJSON: Data(text.utf8)))
      } catch {
        throw fail("field 'layout': \(error)")
      }
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
      let event = try payloads.event(
        id: id, type: type, schemaVersion: schemaVersion, payloadJSON: json, metadata: metadata,
        recordedAt: recordedAt)
      return (sequence, stream, version, event, skipped)
    } catch let error as PayloadConversionError {
      throw fail("field 'payload' \(error.reason)")
    } catch {
      throw fail("field 'payload' cannot be read: \(error)")
    }
  }
}
