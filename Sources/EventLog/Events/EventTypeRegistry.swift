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
    let render: @Sendable (RecordedEvent) throws -> Data
    let decode: @Sendable (RecordedEvent) throws -> any EventPayload
    /// The payload decoded (upcast, or from JSON) and encoded in binary at the current schema
    /// version, with its type's layout as this process knows it.
    let binary: @Sendable (RecordedEvent) throws -> (bytes: [UInt8], layout: KnownLayout?)
    /// JSON of the current schema in binary, with its type's layout as this process knows it
    /// and the members of the JSON the type did not read (which the binary form drops).
    let binaryFromJSON: @Sendable (JSONNode) throws -> JSONConversion
    /// The Swift type.
    let type: any EventPayload.Type
    /// Its layout learned from the type (``PayloadLayout/init(probing:)``), `nil` when the type
    /// cannot be probed.
    let probedLayout: @Sendable () -> PayloadLayout?
  }

  private var entries: [String: Entry] = [:]

  /// Creates a registry of `types`.
  public init(_ types: [any EventPayload.Type] = []) {
    // The layer's own event types: every store applies an erasure, whatever its app.
    register(SubjectErased.self)
    for type in types { register(type) }
  }

  /// Adds `type`; a later registration of the same type name replaces an earlier one.
  public mutating func register<E: EventPayload>(_ type: E.Type) {
    entries[E.eventType] = Entry(
      schemaVersion: E.schemaVersion,
      render: { event in
        try PayloadJSONEncoder().encode(event.decode(E.self, throughRecordedLayouts: false))
      },
      decode: { event in try event.decode(E.self) },
      binary: { event in
        let value = try event.decode(E.self)
        let bytes = try BinaryEncoder().encode(value)
        return (bytes, TypeLayouts.shared.layout(of: value, encoded: bytes))
      },
      binaryFromJSON: { node in
        let (value, unread) = try PayloadJSONDecoder().decodeReadingAll(E.self, from: node)
        let bytes = try BinaryEncoder().encode(value)
        return JSONConversion(
          bytes: bytes, layout: TypeLayouts.shared.layout(of: value, encoded: bytes), unread: unread)
      },
      type: E.self,
      probedLayout: { try? PayloadLayout(probing: E.self) })
  }

  /// Each registered type at its current schema version, with its layout learned from the type
  /// (`nil` when it cannot be probed): what an open compares with the recorded layouts.
  package func probedLayouts() -> [(key: LayoutKey, type: any EventPayload.Type, layout: PayloadLayout?)] {
    entries.sorted { $0.key < $1.key }.map { name, entry in
      (LayoutKey(type: name, schemaVersion: entry.schemaVersion), entry.type, entry.probedLayout())
    }
  }

  /// Adds every type of `other`; a type registered in both keeps `other`'s registration.
  public mutating func merge(_ other: EventTypeRegistry) {
    entries.merge(other.entries) { _, theirs in theirs }
  }

  /// Whether this build can read `event`: ``EventVerdict/unreadable(reason:)`` for a type it does
  /// not register or a schema version newer than the registered type's,
  /// ``EventVerdict/invalid(reason:)`` for a payload that does not decode (through the upcaster
  /// for an older version), else ``EventVerdict/admitted``.
  ///
  /// A domain's ``EventAdmission`` starts here and adds its structural rules.
  public func readability(of event: RecordedEvent) -> EventVerdict {
    decoded(event).verdict
  }

  /// The payload of `event` decoded as its registered type, or the verdict that says why not.
  public func decoded(_ event: RecordedEvent) -> (payload: (any EventPayload)?, verdict: EventVerdict) {
    guard let entry = entries[event.type] else {
      return (nil, .unreadable(reason: "this build does not know the event type '\(event.type)'"))
    }
    guard event.schemaVersion <= entry.schemaVersion else {
      return (
        nil,
        .unreadable(
          reason:
            "'\(event.type)' schema version \(event.schemaVersion) is newer than this build's \(entry.schemaVersion)"
        )
      )
    }
    do {
      return (try entry.decode(event), .admitted)
    } catch {
      return (nil, .invalid(reason: "the '\(event.type)' payload does not decode: \(error)"))
    }
  }

  /// The registered type names, sorted.
  public var typeNames: [String] { entries.keys.sorted() }

  /// The schema version new events of `type` are written with, or `nil` when it is unknown.
  public func schemaVersion(of type: String) -> UInt16? { entries[type]?.schemaVersion }

  /// The payload of `event` as JSON, upcast to the current schema: keys sorted, no white space,
  /// UUIDs in lower case, dates in ISO 8601 with their exact fraction
  /// (`ISO8601.exactString(from:)`).
  ///
  /// The keys are the payload type's coding keys: for a synthesized `Codable` conformance its
  /// stored properties' names exactly as declared (`bookingID`). ``payload(fromJSON:type:)``
  /// reads UUIDs in either case.
  /// - Returns: `nil` when the event's type is not registered.
  /// - Throws: ``EventStoreError`` naming the event when the payload does not decode.
  public func json(of event: RecordedEvent) throws -> Data? {
    guard let entry = entries[event.type] else { return nil }
    return try entry.render(event)
  }

  /// Encodes a JSON payload (as ``json(of:)`` renders it) of `type` in the binary format, at the
  /// type's current schema version. A member the type does not read (a key it has no property
  /// for) is not in the binary form.
  /// - Throws: `StrictJSON.SyntaxError` for text that is not JSON, `DecodingError` for JSON that
  ///   does not fit, and ``EventStoreError/unsupportedSchemaVersion(type:version:supported:)`` for
  ///   an unknown type.
  public func payload(fromJSON data: Data, type: String) throws -> (schemaVersion: UInt16, bytes: [UInt8]) {
    guard let entry = entries[type] else {
      throw EventStoreError.unsupportedSchemaVersion(type: type, version: 0, supported: 0)
    }
    return (entry.schemaVersion, try entry.binaryFromJSON(JSONNode.parse(data)).bytes)
  }

  /// The payload of `event` (binary or JSON, of any schema version the type reads) decoded and
  /// encoded in binary at the registered schema version, with the layout of its type; `nil` when
  /// the type is not registered or its version is newer.
  /// - Throws: the decoding error when the payload does not decode.
  package func binaryPayload(
    of event: RecordedEvent
  ) throws -> (
    schemaVersion: UInt16, bytes: [UInt8], layout: KnownLayout?
  )? {
    guard let entry = entries[event.type], event.schemaVersion <= entry.schemaVersion else { return nil }
    let (bytes, layout) = try entry.binary(event)
    return (entry.schemaVersion, bytes, layout)
  }

  /// A JSON payload of `type` at `schemaVersion` in binary, with the layout of its type and the
  /// members of the JSON the type does not read; `nil` when the type is not registered at that
  /// schema version.
  /// - Throws: `DecodingError` (or the type's own error) for JSON that does not fit the type.
  func binaryPayload(from node: JSONNode, type: String, schemaVersion: UInt16) throws -> JSONConversion? {
    guard let entry = entries[type], entry.schemaVersion == schemaVersion else { return nil }
    return try entry.binaryFromJSON(node)
  }
}

/// A JSON payload in binary (``EventTypeRegistry``, a ``PayloadLayout``), and what of the JSON the
/// binary form does not hold.
struct JSONConversion {
  /// The binary payload.
  var bytes: [UInt8]
  /// The layout of its type as this process knows it, when a registered type converted it.
  var layout: KnownLayout?
  /// The paths of the JSON's members the type did not read (`table`, `items.2.note`), sorted:
  /// the binary form does not hold them. Empty when the binary form holds all of the JSON.
  var unread: [String] = []
}
