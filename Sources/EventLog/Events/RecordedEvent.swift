import Foundation

/// An event as stored in the log.
public struct RecordedEvent: Sendable, Hashable, Identifiable {
  /// The global position: gap-free, from 1.
  public var sequence: UInt64
  /// The event's ID.
  public var id: UUID
  /// The stream it belongs to.
  public var stream: StreamID
  /// Its position in the stream, from 1.
  public var version: UInt64
  /// The stored type name.
  public var type: String
  /// The schema version its payload was written with.
  public var schemaVersion: UInt16
  /// When it was appended, to the microsecond.
  public var recordedAt: Date
  /// Correlation, causation and origin.
  public var metadata: EventMetadata
  /// The encoded payload: `BinaryEncoder`'s bytes, or JSON text when ``payloadEncoding`` is
  /// ``PayloadEncoding/json``. Code that reads the bytes itself (a ``BinaryReader`` fast path)
  /// reads binary payloads only; ``decode(_:)`` reads both. The projections are only ever handed
  /// binary payloads: the store converts a JSON payload (with its event types or a recorded
  /// layout) before it folds it, and skips one it cannot convert.
  public var payload: [UInt8]
  /// How ``payload`` is encoded.
  public var payloadEncoding: PayloadEncoding
  /// The device that first recorded the event and its sequence there: this environment's device
  /// for an event appended here, the pushing device for one pulled or imported. `nil` when the
  /// record does not say (an event stored before environment format 5 by another device, or
  /// imported without it).
  public var provenance: Provenance?
  /// The record's value in the log's hash chain; `nil` for a record stored before environment
  /// format 5 (read-only, before its upgrade).
  public var chain: ChainValue?
  /// The data subjects whose ``Personal`` values the payload holds sealed (ascending by their
  /// bytes); empty for an event that holds none.
  public var subjects: [UUID]

  /// Where an event was first recorded: a device and that device's sequence number.
  public struct Provenance: Sendable, Hashable {
    /// The device (its environment's ``EventStore/deviceID``).
    public var device: UUID
    /// The event's sequence number in that device's log.
    public var sequence: UInt64

    /// The event recorded by `device` as its event `sequence`.
    public init(device: UUID, sequence: UInt64) {
      self.device = device
      self.sequence = sequence
    }
  }

  /// Creates a recorded event (the store creates them; tests may too).
  /// - Parameters:
  ///   - sequence: the global position.
  ///   - id: the event's ID.
  ///   - stream: its stream.
  ///   - version: its position in the stream.
  ///   - type: the stored type name.
  ///   - schemaVersion: the payload's schema version.
  ///   - recordedAt: when it was appended.
  ///   - metadata: correlation, causation and origin.
  ///   - payload: the encoded payload.
  ///   - payloadEncoding: how `payload` is encoded.
  public init(
    sequence: UInt64, id: UUID, stream: StreamID, version: UInt64, type: String, schemaVersion: UInt16,
    recordedAt: Date, metadata: EventMetadata, payload: [UInt8], payloadEncoding: PayloadEncoding = .binary
  ) {
    self.payloadEncoding = payloadEncoding
    self.subjects = []
    self.sequence = sequence
    self.id = id
    self.stream = stream
    self.version = version
    self.type = type
    self.schemaVersion = schemaVersion
    self.recordedAt = recordedAt
    self.metadata = metadata
    self.payload = payload
  }

  /// Creates a recorded event with every field at once (the record decoder's: one value built,
  /// none copied and changed after).
  package init(
    sequence: UInt64, id: UUID, stream: StreamID, version: UInt64, type: String, schemaVersion: UInt16,
    recordedAt: Date, metadata: EventMetadata, payload: [UInt8], payloadEncoding: PayloadEncoding,
    provenance: Provenance?, chain: ChainValue?, subjects: [UUID] = []
  ) {
    self.subjects = subjects
    self.sequence = sequence
    self.id = id
    self.stream = stream
    self.version = version
    self.type = type
    self.schemaVersion = schemaVersion
    self.recordedAt = recordedAt
    self.metadata = metadata
    self.payload = payload
    self.payloadEncoding = payloadEncoding
    self.provenance = provenance
    self.chain = chain
  }

  /// Decodes the payload as `E`, through `E`'s upcaster when it was written with an older schema.
  /// A payload of `E`'s schema version stored in an earlier layout that its environment recorded
  /// (an optional field added since, without a new version) reads that field as `nil`.
  /// - Throws: ``EventStoreError`` naming this event's sequence number when the type differs, the
  ///   schema is newer than `E` knows, or the bytes do not decode.
  public func decode<E: EventPayload>(_ type: E.Type) throws -> E {
    try decode(E.self, throughRecordedLayouts: true)
  }

  /// ``decode(_:)``; without `throughRecordedLayouts`, a payload of `E`'s schema version must be
  /// in `E`'s own layout (what renders JSON for an export, which must not drop a field a newer
  /// build added).
  package func decode<E: EventPayload>(_ type: E.Type, throughRecordedLayouts: Bool) throws -> E {
    guard self.type == E.eventType else {
      throw EventStoreError.eventTypeMismatch(sequence: sequence, expected: E.eventType, actual: self.type)
    }
    do {
      if payloadEncoding == .json {
        return try decodeJSON(E.self)
      }
      if schemaVersion == E.schemaVersion {
        return try payload.withUnsafeBytes { bytes in
          do {
            var reader = BinaryReader(bytes)
            let value = try E(binary: &reader)
            try reader.finish()
            return value
          } catch {
            // Stored in an earlier (or a newer build's) layout of this schema version.
            guard throughRecordedLayouts,
              let rewritten = LayoutEvolutions.shared.transcoded(bytes, to: E.self)
            else { throw error }
            return try rewritten.withUnsafeBytes { rewritten in
              var reader = BinaryReader(rewritten)
              let value = try E(binary: &reader)
              try reader.finish()
              return value
            }
          }
        }
      }
      if schemaVersion < E.schemaVersion {
        return try E.upcast(from: schemaVersion, payload: EncodedPayload(bytes: payload))
      }
      throw EventStoreError.unsupportedSchemaVersion(
        type: self.type, version: schemaVersion, supported: E.schemaVersion)
    } catch let error as EventStoreError {
      throw error
    } catch {
      throw EventStoreError.payloadDecoding(sequence: sequence, type: self.type, underlying: error)
    }
  }

  /// Decodes a JSON payload as `E`, through `E`'s upcaster (handed the JSON) when it was
  /// written with an older schema.
  private func decodeJSON<E: EventPayload>(_ type: E.Type) throws -> E {
    if schemaVersion == E.schemaVersion {
      return try PayloadJSONDecoder().decode(E.self, from: Data(payload))
    }
    if schemaVersion < E.schemaVersion {
      return try E.upcast(from: schemaVersion, payload: EncodedPayload(bytes: payload, encoding: .json))
    }
    throw EventStoreError.unsupportedSchemaVersion(
      type: self.type, version: schemaVersion, supported: E.schemaVersion)
  }

  /// Whether this event is of type `E`.
  public func `is`<E: EventPayload>(_ type: E.Type) -> Bool { self.type == E.eventType }
}
