import EventLog
import Foundation
import Replication

/// The `log --json` / `export` shape of an event, one line each:
/// `{"seq","id","stream","version","type","schemaVersion","recordedAt","payload","metadata"}`,
/// its provenance `"device"` and `"deviceSeq"` (the device that first recorded it, and its
/// sequence there) when the record says, `"subjects"` (the data subjects whose sealed values the
/// payload holds, UUIDs in the record's order) when it lists any, `"storedStream"` when the stream is shown otherwise than
/// it is stored (its stored bytes, as they are), `"payloadEncoding": "json"` on the line of an
/// event whose payload is stored as JSON (so that `import` stores it so again, without judging it
/// again), `"layout"` on the line of an event whose append recorded a layout revision, and
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
/// (``EventTypeRegistry/json(of:)``) and those inside stream names (``AppSchema/StreamNames``),
/// but for `"storedStream"`, which is a stream's stored bytes as they are.
enum EventJSON {
  static func line(
    _ event: RecordedEvent, payloads: PayloadTranscoder, streams: AppSchema.StreamNames,
    skipped: EventStore.SkippedEvent? = nil, previousChain: ChainValue? = nil,
    replica: ReplicaProvenance? = nil
  ) throws -> String {
    value(
      event, payloads: payloads, streams: streams, skipped: skipped, previousChain: previousChain,
      replica: replica
    ).rendered()
  }

  /// The line of `event` as a value.
  /// - Parameters:
  ///   - event: the event.
  ///   - payloads: what renders its payload.
  ///   - streams: how its stream is shown.
  ///   - skipped: how the projections skip it, if they do.
  ///   - previousChain: the chain value of the record before it, when that record is not on the
  ///     line before (an export's first line, or after a gap).
  ///   - replica: what replication knows of it (its server position, the owner), when asked.
  /// - Returns: the line's JSON object.
  static func value(
    _ event: RecordedEvent, payloads: PayloadTranscoder, streams: AppSchema.StreamNames,
    skipped: EventStore.SkippedEvent? = nil, previousChain: ChainValue? = nil,
    replica: ReplicaProvenance? = nil
  ) -> JSONValue {
    let payload = payloads.json(of: event)
    let displayedStream = streams.displayed(event.stream)
    var members: [(String, JSONValue)] = [
      ("seq", .uint(event.sequence)),
      ("id", .string(event.id.lowercasedString)),
      ("stream", .string(displayedStream)),
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
    if let provenance = event.provenance {
      members.append(("device", .string(provenance.device.lowercasedString)))
      members.append(("deviceSeq", .uint(provenance.sequence)))
    }
    // The provenance's origin, as the contract names it (the metadata's, repeated beside the device).
    members.append(("origin", .string(event.metadata.origin)))
    // The data subjects whose sealed values the payload holds: the record lists them, and its
    // chain value covers them.
    if !event.subjects.isEmpty {
      members.append(("subjects", .array(event.subjects.map { .string($0.lowercasedString) })))
    }
    // The stream as stored, when the app shows it otherwise (the example stores a booking's UUID
    // in upper case), so that a build without the app's stream names imports the very record; or
    // when the name shown reads back as another stream (a booking's stream stored with its UUID
    // in lower case, which another device pushed).
    if displayedStream != event.stream.rawValue || streams.stored(displayedStream) != event.stream {
      members.append(("storedStream", .string(event.stream.rawValue)))
    }
    // Stored as JSON (it came so, and this build's types did not read all of it): `import`
    // stores it so again, as it is, without judging it again.
    if payload.form == .stored { members.append(("payloadEncoding", .string("json"))) }
    // The record's value in the chain, and the value before it where the line before does not
    // say it: each line can be checked against its record (`ExportManifest`).
    if let previousChain { members.append(("previousChain", .string(previousChain.hex))) }
    if let chain = event.chain { members.append(("chain", .string(chain.hex))) }
    // Where it is on the server, and whose log that is, when replication knows.
    if let position = replica?.position(event.sequence) {
      members.append(("serverPosition", .uint(position)))
    }
    if let owner = replica?.owner { members.append(("owner", .string(owner))) }
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
  static func name(of kind: EventStore.SkippedEvent.Kind) -> String {
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
  /// a type this build does not know become binary again (`PayloadTranscoder`). A payload the line
  /// marks `"payloadEncoding": "json"` is kept as JSON as it is; one that neither the types nor a
  /// layout read, all of it, is kept as JSON too (``PayloadEncoding/json``), as a pull keeps it:
  /// the store judges it (a payload that does not fit its type is skipped as unreadable), and
  /// no payload that is a JSON object fails the line.
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
  ) throws -> ParsedLine {
    func fail(_ message: String) -> CommandFailure { CommandFailure("line \(number): \(message)") }
    let text = Data(line.utf8)
    let object: [String: JSONNode]
    do {
      guard let members = try JSONNode.parse(text).members else { throw fail("not a JSON object") }
      object = members
    } catch let error as StrictJSON.SyntaxError {
      throw CommandFailure(
        "line \(number), column \(error.column) (byte offset \(offset + error.offset)): not valid JSON: \(error.reason)"
      )
    }
    func string(_ name: String) throws -> String {
      guard let value = object[name] else { throw fail("missing field '\(name)'") }
      guard let text = value.string else { throw fail("field '\(name)' has the wrong type") }
      return text
    }
    func unsigned(_ name: String) throws -> UInt64 {
      guard let digits = object[name]?.integerText, let value = UInt64(digits), value >= 1 else {
        throw fail("field '\(name)' must be a positive integer")
      }
      return value
    }
    let sequence = try unsigned("seq")
    let version = try unsigned("version")
    guard let id = UUID(uuidString: try string("id")) else {
      throw fail("field 'id' is not a UUID")
    }
    // The stream as stored when the line says (its exact bytes), else as this build reads the name
    // shown. The two differ only in how the app shows a stored name (the case of a UUID's letters).
    let shown = try string("stream")
    var stream = streams.stored(shown)
    if let stored = object["storedStream"] {
      guard let name = stored.string,
        name.lowercased() == shown.lowercased() || streams.displayed(StreamID(name)) == shown
      else {
        throw fail("field 'stream' is not the stream of field 'storedStream'")
      }
      stream = StreamID(name)
    }
    let type = try string("type")
    func chainValue(_ name: String) throws -> ChainValue? {
      guard let value = object[name] else { return nil }
      guard let text = value.string, let chain = ChainValue(hex: text) else {
        throw fail("field '\(name)' is not 64 hexadecimal digits")
      }
      return chain
    }
    let chain = try chainValue("chain")
    let previousChain = try chainValue("previousChain")
    var serverPosition: UInt64?
    if object["serverPosition"] != nil { serverPosition = try unsigned("serverPosition") }
    var owner: String?
    if object["owner"] != nil { owner = try string("owner") }
    var provenance: RecordedEvent.Provenance?
    if object["device"] != nil || object["deviceSeq"] != nil {
      guard let device = UUID(uuidString: try string("device")) else {
        throw fail("field 'device' is not a UUID")
      }
      provenance = RecordedEvent.Provenance(device: device, sequence: try unsigned("deviceSeq"))
    }
    var subjects: [UUID] = []
    if let value = object["subjects"] {
      guard let items = value.items, items.count <= 255 else {
        throw fail("field 'subjects' must be an array of at most 255 UUIDs")
      }
      for item in items {
        guard let text = item.string, let subject = UUID(uuidString: text) else {
          throw fail("field 'subjects' must be an array of at most 255 UUIDs")
        }
        subjects.append(subject)
      }
    }
    guard let recordedAt = ISO8601.date(from: try string("recordedAt")) else {
      throw fail("field 'recordedAt' is not an ISO 8601 date")
    }
    guard let metadataNode = object["metadata"] else { throw fail("missing field 'metadata'") }
    guard let metadataObject = metadataNode.members else { throw fail("field 'metadata' has the wrong type") }
    func optionalUUID(_ name: String) throws -> UUID? {
      guard let value = metadataObject[name], !value.isNull else { return nil }
      guard let text = value.string, let uuid = UUID(uuidString: text) else {
        throw fail("field 'metadata.\(name)' is not a UUID")
      }
      return uuid
    }
    let metadata = EventMetadata(
      correlationID: try optionalUUID("correlationId"), causationID: try optionalUUID("causationId"),
      origin: metadataObject["origin"]?.string ?? "")
    var skipped: (kind: EventStore.SkippedEvent.Kind, reason: String)?
    if let value = object["skipped"] {
      let kinds: [String: EventStore.SkippedEvent.Kind] = [
        "unreadable": .unreadable, "invalid": .invalid, "refused": .refused,
      ]
      guard let note = value.members, note.count == 2, let name = note["kind"]?.string,
        let kind = kinds[name], let reason = note["reason"]?.string
      else {
        throw fail(#"field 'skipped' must be {"kind": "unreadable"|"invalid"|"refused", "reason": text}"#)
      }
      skipped = (kind, reason)
    }
    guard let payloadNode = object["payload"] else { throw fail("missing field 'payload'") }
    guard let payloadObject = payloadNode.members else { throw fail("field 'payload' has the wrong type") }
    // Stored as JSON where it was exported (`"payloadEncoding": "json"`): stored so here, as it
    // is, whatever it holds (a `$binary` key included), without judging it again.
    let storedAsJSON = object["payloadEncoding"] != nil
    if let encoding = object["payloadEncoding"], encoding.string != "json" {
      throw fail(#"field 'payloadEncoding' must be "json""#)
    }
    // An export before format 4 has no "schemaVersion": a `$binary` payload carries its own, and
    // JSON payloads are of the registered type's current version.
    let schemaVersion: UInt16
    if let number = object["schemaVersion"] {
      guard let digits = number.integerText, let value = UInt16(digits) else {
        throw fail("field 'schemaVersion' must be an integer from 0 to 65535")
      }
      schemaVersion = value
    } else if storedAsJSON {
      throw fail("field 'schemaVersion' is missing beside 'payloadEncoding'")
    } else if payloadObject["$binary"] != nil {
      guard let digits = payloadObject["$schemaVersion"]?.integerText, let value = UInt16(digits) else {
        throw fail("field 'payload' has a $binary without a $schemaVersion, and the line no 'schemaVersion'")
      }
      schemaVersion = value
    } else if let current = payloads.eventTypes.schemaVersion(of: type) {
      schemaVersion = current
    } else {
      throw fail("unknown event type '\(type)' with a JSON payload and no 'schemaVersion'")
    }
    if let layout = object["layout"] {
      // The layout's text as written: a recorded layout keeps the text it was exported with.
      guard let layoutText = layout.text(in: text) else { throw fail("field 'layout' cannot be read") }
      do {
        payloads.add(
          try RecordedLayout(
            type: type, schemaVersion: schemaVersion, sequence: sequence, exportedJSON: Data(layoutText)))
      } catch {
        throw fail("field 'layout': \(error)")
      }
    }
    if storedAsJSON {
      let event = NewEvent(
        id: id, type: type, schemaVersion: schemaVersion, payload: Array(payloadNode.rendered),
        payloadEncoding: .json, metadata: metadata, recordedAt: recordedAt, subjects: subjects)
      return ParsedLine(
        sequence: sequence, stream: stream, version: version, event: event, skipped: skipped,
        provenance: provenance, chain: chain, previousChain: previousChain, serverPosition: serverPosition,
        owner: owner)
    }
    // As a pull stores it: in binary when the types or a layout read all of it (a `$binary`
    // object's bytes as they are), else kept as JSON, which the store then skips as unreadable.
    var event = payloads.storedEvent(
      id: id, type: type, schemaVersion: schemaVersion, payload: payloadNode, metadata: metadata,
      recordedAt: recordedAt)
    event.subjects = NewEvent.ordered(subjects)
    return ParsedLine(
      sequence: sequence, stream: stream, version: version, event: event, skipped: skipped,
      provenance: provenance, chain: chain, previousChain: previousChain, serverPosition: serverPosition,
      owner: owner)
  }
}

/// An event line of an export, read back (``EventJSON/parse(_:number:offset:payloads:streams:)``).
struct ParsedLine {
  /// The sequence, stream and version it claims.
  var sequence: UInt64
  var stream: StreamID
  var version: UInt64
  /// The event to store.
  var event: NewEvent
  /// How the log it comes from skipped it, if it did.
  var skipped: (kind: EventStore.SkippedEvent.Kind, reason: String)?
  /// The device that first recorded it and its sequence there, when the line says.
  var provenance: RecordedEvent.Provenance?
  /// The chain value of its record, and of the record before it when the line says.
  var chain: ChainValue?
  var previousChain: ChainValue?
  /// Where the server held it, and whose log that was, when the exporting device knew.
  var serverPosition: UInt64?
  var owner: String?

  /// The chain value of the record this line describes, as the log it came from stored it
  /// after `previous`.
  func recomputedChain(after previous: ChainValue) -> ChainValue {
    RecordCodec.chainValue(
      of: RecordCodec.Fields(
        sequence: sequence, version: version,
        recordedAtMicroseconds: (event.recordedAt ?? Date(timeIntervalSince1970: 0)).microsecondsSince1970,
        event: event, stream: stream, provenance: provenance, subjects: event.subjects,
        previousChain: previous))
  }
}

/// What replication knows of the events a command prints: each one's server position (a pulled
/// event's, or one this device pushed and the server acknowledged) and the owner this device
/// replicates as.
struct ReplicaProvenance {
  let replica: LocalReplica
  let owner: String?

  init(_ store: EventStore) throws {
    replica = LocalReplica(store: store)
    owner = try replica.owner()
  }

  /// The server position of the local event `sequence`, when known.
  func position(_ sequence: UInt64) -> UInt64? { (try? replica.position(ofLocalSequence: sequence)) ?? nil }
}
