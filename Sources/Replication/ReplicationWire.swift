import EventLog
import Foundation

/// What both transports send and receive in the same form: the `p_events` JSON array of a push,
/// and a pulled row checked field by field.
public enum ReplicationWire {
  /// The most payload bytes (JSON text) a pulled event may hold. The server bounds a payload at
  /// 4 MiB of `jsonb` (its binary size, which escapes and numbers can make smaller than the
  /// text), so this leaves room for the text of any payload it stores.
  public static let maximumPayloadBytes = 8 << 20

  /// The `p_events` argument of `eventlog_api.push`: a JSON array of
  /// `{"id", "seq", "stream", "type", "schemaVersion", "payload", "recordedAt", "metadata"}`,
  /// `recordedAt` in microseconds since 1970, `payload` the event's JSON object as it is, and
  /// `"device"` and `"deviceSeq"` (its recorded origin) when the event's provenance is known
  /// (servers before schema version 5 ignore them), and `"subjects"` (an array of UUIDs) when the
  /// event holds sealed values (servers before schema version 6 ignore it).
  ///
  /// Written byte by byte into one buffer (IDs in lower case, strings quoted by
  /// `JSONWriter`'s rule): building it with string appends and Foundation's formatters was a third of a
  /// push's client CPU time.
  public static func events(_ events: [OutgoingEvent]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(
      2 + events.reduce(0) { $0 + 220 + $1.payload.count + $1.stream.rawValue.utf8.count })
    out.append(UInt8(ascii: "["))
    for (index, event) in events.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      out.append(contentsOf: #"{"id":"#.utf8)
      JSONWriter.appendQuoted(event.id, to: &out)
      out.append(contentsOf: #","seq":"#.utf8)
      out.append(contentsOf: String(event.localSequence).utf8)
      out.append(contentsOf: #","stream":"#.utf8)
      JSONWriter.appendQuoted(event.stream.rawValue, to: &out)
      out.append(contentsOf: #","type":"#.utf8)
      JSONWriter.appendQuoted(event.type, to: &out)
      out.append(contentsOf: #","schemaVersion":"#.utf8)
      out.append(contentsOf: String(event.schemaVersion).utf8)
      out.append(contentsOf: #","payload":"#.utf8)
      out.append(contentsOf: event.payload)
      out.append(contentsOf: #","recordedAt":"#.utf8)
      out.append(contentsOf: String(event.recordedAt.microsecondsSince1970).utf8)
      if !event.subjects.isEmpty {
        out.append(contentsOf: #","subjects":["#.utf8)
        for (index, subject) in event.subjects.enumerated() {
          if index > 0 { out.append(UInt8(ascii: ",")) }
          JSONWriter.appendQuoted(subject, to: &out)
        }
        out.append(UInt8(ascii: "]"))
      }
      if let provenance = event.provenance {
        out.append(contentsOf: #","device":"#.utf8)
        JSONWriter.appendQuoted(provenance.device, to: &out)
        out.append(contentsOf: #","deviceSeq":"#.utf8)
        out.append(contentsOf: String(provenance.sequence).utf8)
      }
      out.append(contentsOf: #","metadata":{"origin":"#.utf8)
      JSONWriter.appendQuoted(event.metadata.origin, to: &out)
      if let id = event.metadata.correlationID {
        out.append(contentsOf: #","correlationID":"#.utf8)
        JSONWriter.appendQuoted(id, to: &out)
      }
      if let id = event.metadata.causationID {
        out.append(contentsOf: #","causationID":"#.utf8)
        JSONWriter.appendQuoted(id, to: &out)
      }
      out.append(contentsOf: "}}".utf8)
    }
    out.append(UInt8(ascii: "]"))
    return out
  }

  /// The fields of a pulled row, as text (`nil` for SQL `NULL`), whichever transport read them.
  public struct RowFields: Sendable {
    /// `event_position`.
    public var position: String?
    /// `event_id`.
    public var id: String?
    /// `origin_device`.
    public var originDevice: String?
    /// `origin_sequence`.
    public var originSequence: String?
    /// `stream`.
    public var stream: String?
    /// `type`.
    public var type: String?
    /// `schema_version`.
    public var schemaVersion: String?
    /// `payload`: the JSON object's text.
    public var payload: [UInt8]?
    /// `correlation_id`.
    public var correlationID: String?
    /// `causation_id`.
    public var causationID: String?
    /// `origin`.
    public var origin: String?
    /// `recorded_at_us`: microseconds since 1970.
    public var recordedAtMicroseconds: String?
    /// `pushed_by` (`pull_chained`): the device that pushed the event.
    public var pushedBy: String?
    /// `pushed_sequence` (`pull_chained`): its sequence in that device's log.
    public var pushedSequence: String?
    /// `metadata` (`pull_chained`): the metadata's JSON text, as the server renders it.
    public var metadata: [UInt8]?
    /// `chain` (`pull_chained`): the row's value in the server's chain, 64 hexadecimal digits.
    public var chain: String?
    /// `subjects` (`pull_subjects`): the event's data subjects, comma-separated UUIDs (empty for
    /// none); `nil` from a function that does not send them.
    public var subjects: String?
    /// Why the transport could not take the row (its answer would be over what one may hold),
    /// when it could not: the other fields are then missing.
    public var unavailable: String?

    /// Creates the fields.
    public init(
      position: String?, id: String?, originDevice: String?, originSequence: String?, stream: String?,
      type: String?, schemaVersion: String?, payload: [UInt8]?, correlationID: String?, causationID: String?,
      origin: String?, recordedAtMicroseconds: String?, pushedBy: String? = nil,
      pushedSequence: String? = nil,
      metadata: [UInt8]? = nil, chain: String? = nil, unavailable: String? = nil, subjects: String? = nil
    ) {
      self.subjects = subjects
      self.pushedBy = pushedBy
      self.pushedSequence = pushedSequence
      self.metadata = metadata
      self.chain = chain
      self.unavailable = unavailable
      self.position = position
      self.id = id
      self.originDevice = originDevice
      self.originSequence = originSequence
      self.stream = stream
      self.type = type
      self.schemaVersion = schemaVersion
      self.payload = payload
      self.correlationID = correlationID
      self.causationID = causationID
      self.origin = origin
      self.recordedAtMicroseconds = recordedAtMicroseconds
    }
  }

  /// The earliest and latest instants an event may be recorded at: years 1 to 9999, which ISO
  /// 8601 (and so `export`) can write.
  static let recordedAtRange: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

  /// A pulled row checked field by field: an event, or why it is not one. Never throws: a row
  /// that no device could have pushed (an operator's hand) is passed and recorded, not allowed
  /// to fail the pull for every device of the owner.
  /// - Throws: only when the row has no position at all, which breaks the protocol itself.
  public static func row(_ fields: RowFields, server: String) throws -> PulledRow {
    guard let position = fields.position.flatMap(UInt64.init), position > 0 else {
      throw ReplicationError.protocolViolation(server: server, reason: "a pulled row has no position")
    }
    let id = fields.id.flatMap(UUID.init(uuidString:))
    func malformed(_ reason: String) -> PulledRow { .malformed(position: position, id: id, reason: reason) }
    if let unavailable = fields.unavailable { return malformed(unavailable) }
    guard let id else { return malformed("the row has no valid event ID") }
    guard let originDevice = fields.originDevice.flatMap(UUID.init(uuidString:)) else {
      return malformed("the row has no valid origin device")
    }
    guard let originSequence = fields.originSequence.flatMap(UInt64.init), originSequence > 0 else {
      return malformed("the row has no valid origin sequence")
    }
    guard let streamName = fields.stream, StreamID(streamName).invalidReason == nil else {
      return malformed("the row's stream is not a valid stream ID")
    }
    let stream = StreamID(streamName)
    guard let type = fields.type, !type.isEmpty, type.utf8.count <= 255 else {
      return malformed("the row's type is empty or longer than 255 bytes")
    }
    guard let schemaVersion = fields.schemaVersion.flatMap(UInt16.init) else {
      return malformed("the row's schema version is not 0 to 65535")
    }
    guard let payload = fields.payload else {
      // A server of schema version 4 or later sends no payload it will not render: one whose JSON
      // text is over what a device takes, or out of proportion to it (a number like 1e131000).
      return malformed(
        "the server sent the row without its payload: its JSON text is over \(maximumPayloadBytes) bytes, "
          + "or holds a number whose text is out of proportion to it")
    }
    guard payload.first == UInt8(ascii: "{"), payload.count <= maximumPayloadBytes else {
      return malformed("the row's payload is not a JSON object of at most \(maximumPayloadBytes) bytes")
    }
    guard let microseconds = fields.recordedAtMicroseconds.flatMap(Int64.init),
      recordedAtRange.contains(microseconds)
    else {
      return malformed("the row's recorded time is not between the years 1 and 9999")
    }
    var subjects: [UUID] = []
    if let text = fields.subjects, !text.isEmpty {
      let parts = text.split(separator: ",", omittingEmptySubsequences: false)
      let parsed = parts.compactMap { UUID(uuidString: String($0)) }
      guard parsed.count == parts.count, parsed.count <= 255 else {
        return malformed("the row's data subjects are not at most 255 UUIDs")
      }
      subjects = NewEvent.ordered(parsed)
    }
    var origin = fields.origin ?? ""
    while origin.utf8.count > 1_000 { origin.removeLast() }
    return .event(
      ServerEvent(
        position: position, id: id, originDevice: originDevice, originSequence: originSequence,
        stream: stream,
        type: type, schemaVersion: schemaVersion, payload: payload,
        metadata: EventMetadata(
          correlationID: fields.correlationID.flatMap(UUID.init(uuidString:)),
          causationID: fields.causationID.flatMap(UUID.init(uuidString:)), origin: origin),
        recordedAt: Date(microsecondsSince1970: microseconds), subjects: subjects))
  }
}

extension ReplicationWire {
  /// The `p_keys` argument of `eventlog_api.push_keys`: a JSON array of
  /// `{"subject", "key", "createdAt"}`, `key` in Base64 and `createdAt` in microseconds since 1970.
  public static func keys(_ keys: [SubjectKey]) -> [UInt8] {
    var out: [UInt8] = [UInt8(ascii: "[")]
    out.reserveCapacity(2 + keys.count * 128)
    for (index, key) in keys.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      out.append(contentsOf: #"{"subject":"#.utf8)
      JSONWriter.appendQuoted(key.subject, to: &out)
      out.append(contentsOf: #","key":""#.utf8)
      out.append(contentsOf: Data(key.key).base64EncodedString().utf8)
      out.append(contentsOf: #"","createdAt":"#.utf8)
      out.append(contentsOf: String(key.createdAt.microsecondsSince1970).utf8)
      out.append(UInt8(ascii: "}"))
    }
    out.append(UInt8(ascii: "]"))
    return out
  }

  /// A key from the columns of `eventlog_api.pull_keys` as text, whichever transport read them.
  /// - Throws: ``ReplicationError/protocolViolation(server:reason:)`` for a column missing or
  ///   malformed (a key of other than 32 bytes).
  public static func serverKey(
    serial: String?, subject: String?, key: String?, createdAtMicroseconds: String?, server: String
  ) throws -> ServerSubjectKey {
    // PostgreSQL's Base64 breaks lines every 76 characters; a 32-byte key's 44 never are.
    guard let serial = serial.flatMap(UInt64.init), serial > 0,
      let subject = subject.flatMap(UUID.init(uuidString:)),
      let bytes = key.flatMap({ Data(base64Encoded: $0) }), bytes.count == 32,
      let microseconds = createdAtMicroseconds.flatMap(Int64.init), recordedAtRange.contains(microseconds)
    else {
      throw ReplicationError.protocolViolation(server: server, reason: "pull_keys answered a malformed row")
    }
    return ServerSubjectKey(
      serial: serial,
      key: SubjectKey(
        subject: subject, key: Array(bytes), createdAt: Date(microsecondsSince1970: microseconds)))
  }

  /// What the server did with a pushed key, from `eventlog_api.push_keys`'s `outcome`.
  /// - Throws: ``ReplicationError/protocolViolation(server:reason:)`` for an outcome the server
  ///   does not define.
  public static func keyOutcome(_ outcome: String?, server: String) throws -> KeyPushOutcome {
    guard let outcome = outcome.flatMap(KeyPushOutcome.init(rawValue:)) else {
      throw ReplicationError.protocolViolation(
        server: server, reason: "push_keys answered the outcome '\((outcome ?? "null").prefix(40))'")
    }
    return outcome
  }
}

extension ReplicationWire {
  /// An attested head from the columns of `eventlog_api.attested_heads` as text, whichever
  /// transport read them.
  /// - Throws: ``ReplicationError/protocolViolation(server:reason:)`` for a column missing or
  ///   malformed.
  public static func attestedHead(
    attestation: String?, sequence: String?, head: String?, keyHash: String?, serverPosition: String?,
    serverHead: String?, attestedAtMicroseconds: String?, server: String
  ) throws -> AttestedHead {
    guard let attestation = attestation.flatMap(UInt64.init),
      let sequence = sequence.flatMap(UInt64.init), sequence > 0,
      let head = head.flatMap(ChainValue.init(hex:)),
      let keyHash = keyHash.flatMap({ Hex.bytes($0) }), keyHash.count == 32,
      let serverPosition = serverPosition.flatMap(UInt64.init),
      let serverHead = serverHead.flatMap(ChainValue.init(hex:)),
      let microseconds = attestedAtMicroseconds.flatMap(Int64.init)
    else {
      throw ReplicationError.protocolViolation(
        server: server, reason: "attested_heads answered a malformed row")
    }
    return AttestedHead(
      attestation: attestation, sequence: sequence, head: head, keyHash: keyHash,
      serverPosition: serverPosition,
      serverHead: serverHead, attestedAt: Date(microsecondsSince1970: microseconds))
  }
}
