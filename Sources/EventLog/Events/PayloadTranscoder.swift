import Foundation

/// A payload rendered as JSON (`PayloadTranscoder.json(of:)`), and what rendered it.
package struct PayloadJSON: Sendable, Hashable {
  /// What rendered the JSON.
  public enum Form: Sendable, Hashable {
    /// The event type's own `Codable` conformance (this build registers it).
    case registered
    /// A recorded layout (`RecordedLayout`): the same text the type would render.
    case layout
    /// The payload is stored as JSON (``PayloadEncoding/json``): its text as stored.
    case stored
    /// Nothing could render it: `{"$binary": "<Base64>", "$schemaVersion": n}`, which `import`
    /// restores unchanged.
    case binary
  }

  /// The JSON text: keys sorted, no white space, UUIDs in lower case, dates in ISO 8601 UTC with
  /// their exact fraction (`ISO8601.exactString(from:)`).
  public var json: Data
  /// The schema version whose shape the JSON has: the event's, except when this build's type
  /// upcast an older payload it has no layout for (then the type's current version).
  public var schemaVersion: UInt16
  /// What rendered it.
  public var form: Form

  /// A rendered payload.
  public init(json: Data, schemaVersion: UInt16, form: Form) {
    self.json = json
    self.schemaVersion = schemaVersion
    self.form = form
  }
}

/// Why a JSON payload does not become an event.
package struct PayloadConversionError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
  /// What is wrong, naming the field, after "the payload": `does not fit BookingCreated: missing
  /// field 'date'`, `is not JSON: …`.
  public var reason: String
  /// `the payload <reason>`.
  public var description: String { "the payload \(reason)" }
  /// The description.
  public var errorDescription: String? { description }
}

/// Converts payloads between their binary form and JSON for any event, with this build's event
/// types and the layouts an environment recorded (``EventStore/payloadTranscoder()``) or an
/// export carried: what `log --json`, `show`, `export` and `import` use, and replication to and
/// from a server that stores JSON.
///
/// - Binary to JSON (``json(of:)``): the registered type when its schema version is the event's,
///   else the latest recorded layout of the event's type and schema version, else the registered
///   type upcasting an older payload; only when none applies, `{"$binary": …}`. The type and the
///   layout render the same bytes.
/// - JSON to binary (``event(id:type:schemaVersion:payloadJSON:metadata:recordedAt:)``): a
///   `{"$binary": …}` object's bytes as they are, else the registered type at that schema
///   version, else the layout, when it reads every member of the JSON; else the event keeps its
///   payload as JSON (``PayloadEncoding/json``), so that no member is lost (a key another app's
///   type has and this build's does not). Binary to JSON to binary gives the same bytes.
package struct PayloadTranscoder: Sendable {
  /// The event types this build knows.
  public let eventTypes: EventTypeRegistry
  /// Every revision, by type and schema version, in revision order.
  private var revisions: [LayoutKey: [RecordedLayout]] = [:]
  /// The revisions by the sequence of the event that recorded them.
  private var bySequence: [UInt64: [RecordedLayout]] = [:]
  /// Whether an event converted by a registered type carries the layout this process learned of
  /// the type, to be recorded by the store that ingests it (the default), or only a layout given
  /// here: an import sets it to `false`, so that the environment it fills records exactly the
  /// layouts its file carries, and exports the same lines.
  public var infersLayouts = true

  /// A transcoder over `eventTypes` and `layouts`.
  public init(eventTypes: EventTypeRegistry = EventTypeRegistry(), layouts: [RecordedLayout] = []) {
    self.eventTypes = eventTypes
    for layout in layouts { add(layout) }
  }

  /// Adds a layout revision (an export's, or one recorded since).
  public mutating func add(_ layout: RecordedLayout) {
    let key = LayoutKey(type: layout.type, schemaVersion: layout.schemaVersion)
    var list = revisions[key] ?? []
    list.removeAll { $0.revision == layout.revision }
    list.append(layout)
    list.sort { $0.revision < $1.revision }
    revisions[key] = list
    bySequence[layout.sequence, default: []].removeAll { $0 == layout }
    bySequence[layout.sequence, default: []].append(layout)
  }

  /// The layout revisions recorded by the append of the event at `sequence` (an export writes them
  /// on that event's line).
  public func layouts(recordedAt sequence: UInt64) -> [RecordedLayout] { bySequence[sequence] ?? [] }

  /// The latest revision of the layout of `type` at `schemaVersion`, or `nil`.
  public func latestLayout(type: String, schemaVersion: UInt16) -> RecordedLayout? {
    revisions[LayoutKey(type: type, schemaVersion: schemaVersion)]?.last
  }

  /// The payload of `event` as JSON, and what rendered it (see the type's discussion).
  public func json(of event: RecordedEvent) -> PayloadJSON {
    Self.json(
      of: event, eventTypes: eventTypes,
      layouts: (revisions[LayoutKey(type: event.type, schemaVersion: event.schemaVersion)] ?? []).reversed()
        .map(\.layout))
  }

  /// The event to store for a payload that comes as JSON (an import's line, a server's row):
  /// binary when this build's type at `schemaVersion` or a layout of it reads the JSON, every
  /// member of it (the binary form holds only what the type reads), else with the JSON as its
  /// payload (canonical: keys sorted, no white space).
  /// - Parameters:
  ///   - id: the event's ID.
  ///   - type: its type name.
  ///   - schemaVersion: the schema version whose shape the JSON has.
  ///   - payloadJSON: the payload's JSON text.
  ///   - metadata: correlation, causation and origin.
  ///   - recordedAt: when it was first recorded.
  /// - Returns: the event.
  /// - Throws: `PayloadConversionError` when the text is not JSON, or when the registered type
  ///   or the layout does not read it (a missing field, a value of the wrong kind): the JSON
  ///   contradicts what this build knows of the type. A caller that stores such an event anyway
  ///   uses ``NewEvent/init(id:type:schemaVersion:jsonPayload:metadata:recordedAt:)``.
  public func event(
    id: UUID, type: String, schemaVersion: UInt16, payloadJSON: Data, metadata: EventMetadata,
    recordedAt: Date?
  ) throws -> NewEvent {
    try event(
      id: id, type: type, schemaVersion: schemaVersion, payload: Self.parse(payloadJSON), metadata: metadata,
      recordedAt: recordedAt)
  }

  /// The event to store for a payload already parsed (an `import` line's member), as
  /// ``event(id:type:schemaVersion:payloadJSON:metadata:recordedAt:)``.
  package func event(
    id: UUID, type: String, schemaVersion: UInt16, payload node: JSONNode, metadata: EventMetadata,
    recordedAt: Date?
  ) throws -> NewEvent {
    if let bytes = try Self.binaryObject(node, schemaVersion: schemaVersion) {
      return NewEvent(
        id: id, type: type, schemaVersion: schemaVersion, payload: bytes, metadata: metadata,
        recordedAt: recordedAt)
    }
    let layout = latestLayout(type: type, schemaVersion: schemaVersion)
    // In binary only when the binary form holds all of the JSON: a member the type does not
    // read (another app's key) would be lost, and the copy would differ from its source.
    if let converted = try Self.binary(
      from: node, type: type, schemaVersion: schemaVersion, eventTypes: eventTypes, layout: layout),
      converted.unread.isEmpty
    {
      var event = NewEvent(
        id: id, type: type, schemaVersion: schemaVersion, payload: converted.bytes, metadata: metadata,
        recordedAt: recordedAt)
      event.layout = layout.map { KnownLayout($0.layout) } ?? (infersLayouts ? converted.layout : nil)
      return event
    }
    return NewEvent(
      id: id, type: type, schemaVersion: schemaVersion, payload: Array(node.rendered), payloadEncoding: .json,
      metadata: metadata, recordedAt: recordedAt)
  }

  /// The event to store for a parsed payload that comes from elsewhere (a server's row, an
  /// `import` line that does not say how its payload is stored), as a pull stores it:
  /// ``event(id:type:schemaVersion:payload:metadata:recordedAt:)``'s when that converts it, else
  /// (the JSON contradicts what this build knows of the type: a field of the wrong kind, a
  /// missing one, an invalid `$binary` object) the payload kept as JSON as it came, which the
  /// projections skip as unreadable until a build reads it. So the log holds every event of its
  /// source, and nothing that comes as a JSON object fails the whole pull or import.
  package func storedEvent(
    id: UUID, type: String, schemaVersion: UInt16, payload node: JSONNode, metadata: EventMetadata,
    recordedAt: Date?
  ) -> NewEvent {
    do {
      return try event(
        id: id, type: type, schemaVersion: schemaVersion, payload: node, metadata: metadata,
        recordedAt: recordedAt)
    } catch {
      return NewEvent(
        id: id, type: type, schemaVersion: schemaVersion, payload: Array(node.rendered),
        payloadEncoding: .json, metadata: metadata, recordedAt: recordedAt)
    }
  }

  // MARK: - Shared with the store

  /// The JSON of `event` with `eventTypes` and the `layouts` of its type and version, latest
  /// first: the registered type renders a payload in its own layout; one stored in another (an
  /// earlier revision's, or a newer build's) renders by the revision that describes it, so that
  /// no field is dropped.
  static func json(
    of event: RecordedEvent, eventTypes: EventTypeRegistry, layouts: [PayloadLayout]
  ) -> PayloadJSON {
    if event.payloadEncoding == .json {
      return PayloadJSON(json: Data(event.payload), schemaVersion: event.schemaVersion, form: .stored)
    }
    let current = eventTypes.schemaVersion(of: event.type)
    if current == event.schemaVersion, let json = try? eventTypes.json(of: event) {
      return PayloadJSON(json: json, schemaVersion: event.schemaVersion, form: .registered)
    }
    for layout in layouts {
      if let json = try? layout.json(ofPayload: event.payload) {
        return PayloadJSON(json: json, schemaVersion: event.schemaVersion, form: .layout)
      }
    }
    if let current, current > event.schemaVersion, let json = try? eventTypes.json(of: event) {
      return PayloadJSON(json: json, schemaVersion: current, form: .registered)
    }
    return PayloadJSON(json: binaryJSON(of: event), schemaVersion: event.schemaVersion, form: .binary)
  }

  /// `{"$binary":"<Base64>","$schemaVersion":n}` of `event`'s stored bytes
  /// (``PayloadJSON/Form/binary``).
  package static func binaryJSON(of event: RecordedEvent) -> Data {
    JSONNode(
      .object([
        "$binary": JSONNode(.string(Data(event.payload).base64EncodedString())),
        "$schemaVersion": JSONNode(.literal(String(event.schemaVersion))),
      ])
    ).rendered
  }

  /// The stored bytes of a payload rendered as `{"$binary": "<Base64>", "$schemaVersion": n}`
  /// (`PayloadJSON.Form.binary`; the `$schemaVersion` key may be left out), or `nil` for any
  /// other JSON.
  /// - Throws: `PayloadConversionError` for such an object whose Base64 does not decode or whose
  ///   schema version is not `schemaVersion`.
  static func binaryObject(_ node: JSONNode, schemaVersion: UInt16) throws -> [UInt8]? {
    guard let fields = node.members, let binary = fields["$binary"] else { return nil }
    guard case .string(let text) = binary.value, let bytes = Data(base64Encoded: text),
      fields.count == 1 || (fields.count == 2 && fields["$schemaVersion"] != nil)
    else {
      throw PayloadConversionError(reason: "has an invalid $binary object")
    }
    if let version = fields["$schemaVersion"] {
      guard case .literal(let number) = version.value, UInt16(number) == schemaVersion else {
        throw PayloadConversionError(reason: "has a $schemaVersion other than the event's \(schemaVersion)")
      }
    }
    return [UInt8](bytes)
  }

  /// A JSON payload in binary, by the registered type at `schemaVersion` or else by `layout`;
  /// `nil` when neither knows it.
  /// - Throws: `PayloadConversionError` when the text is not JSON or the one that knows it does
  ///   not read it.
  static func binary(
    fromJSON json: Data, type: String, schemaVersion: UInt16, eventTypes: EventTypeRegistry,
    layout: RecordedLayout?
  ) throws -> JSONConversion? {
    try binary(
      from: parse(json), type: type, schemaVersion: schemaVersion, eventTypes: eventTypes, layout: layout)
  }

  /// A JSON payload's text parsed.
  /// - Throws: `PayloadConversionError` when the text is not JSON.
  static func parse(_ json: Data) throws -> JSONNode {
    do {
      return try JSONNode.parse(json)
    } catch {
      throw PayloadConversionError(reason: "is not JSON: \(error)")
    }
  }

  /// A parsed JSON payload in binary, as ``binary(fromJSON:type:schemaVersion:eventTypes:layout:)``.
  static func binary(
    from node: JSONNode, type: String, schemaVersion: UInt16, eventTypes: EventTypeRegistry,
    layout: RecordedLayout?
  ) throws -> JSONConversion? {
    do {
      if let converted = try eventTypes.binaryPayload(from: node, type: type, schemaVersion: schemaVersion) {
        // A type that gained an optional field since `layout` (an import's line before the
        // revision that added it) writes bytes the source never held: the layout writes the
        // source's, when it reads the JSON.
        if let layout, !layout.layout.describes(converted.bytes),
          let bytes = try? layout.layout.payload(from: node)
        {
          return JSONConversion(bytes: bytes, layout: KnownLayout(layout.layout))
        }
        return converted
      }
    } catch {
      throw PayloadConversionError(reason: "does not fit \(type): \(Self.describe(error))")
    }
    guard let layout else { return nil }
    do {
      // A layout refuses a key it does not know: its binary form holds all of the JSON.
      return JSONConversion(bytes: try layout.layout.payload(from: node))
    } catch {
      throw PayloadConversionError(
        reason: "does not fit the recorded layout of \(type) (schema \(schemaVersion)): \(error)")
    }
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

extension NewEvent {
  /// An event whose payload is kept as JSON (``PayloadEncoding/json``): one that arrived with a
  /// type and schema version this store cannot encode in binary. The JSON is stored in its
  /// canonical form (keys sorted, no white space), the export's.
  ///
  /// Prefer `PayloadTranscoder.event(id:type:schemaVersion:payloadJSON:metadata:recordedAt:)`,
  /// which stores the payload in binary whenever it can.
  /// - Parameters:
  ///   - id: the event's ID.
  ///   - type: its type name.
  ///   - schemaVersion: the schema version whose shape the JSON has.
  ///   - jsonPayload: the payload's JSON text.
  ///   - metadata: correlation, causation and origin.
  ///   - recordedAt: when it was first recorded.
  /// - Throws: `PayloadConversionError` when the text is not JSON (RFC 8259, `StrictJSON`).
  public init(
    id: UUID, type: String, schemaVersion: UInt16, jsonPayload: Data, metadata: EventMetadata,
    recordedAt: Date? = nil
  ) throws {
    let node = try PayloadTranscoder.parse(jsonPayload)
    self.init(
      id: id, type: type, schemaVersion: schemaVersion, payload: Array(node.rendered), payloadEncoding: .json,
      metadata: metadata, recordedAt: recordedAt)
  }
}
