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
  /// The encoded payload.
  public var payload: [UInt8]

  /// Creates a recorded event (the store creates them; tests may too).
  public init(
    sequence: UInt64, id: UUID, stream: StreamID, version: UInt64, type: String, schemaVersion: UInt16,
    recordedAt: Date, metadata: EventMetadata, payload: [UInt8]
  ) {
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

  /// Decodes the payload as `E`, through `E`'s upcaster when it was written with an older schema.
  /// - Throws: ``EventStoreError`` naming this event's sequence number when the type differs, the
  ///   schema is newer than `E` knows, or the bytes do not decode.
  public func decode<E: EventPayload>(_ type: E.Type) throws -> E {
    guard self.type == E.eventType else {
      throw EventStoreError.eventTypeMismatch(sequence: sequence, expected: E.eventType, actual: self.type)
    }
    do {
      if schemaVersion == E.schemaVersion {
        return try payload.withUnsafeBytes { bytes in
          var reader = BinaryReader(bytes)
          let value = try E(binary: &reader)
          try reader.finish()
          return value
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

  /// Whether this event is of type `E`.
  public func `is`<E: EventPayload>(_ type: E.Type) -> Bool { self.type == E.eventType }
}
