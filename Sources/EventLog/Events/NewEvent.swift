import Foundation

/// An event on its way into the log: its identity, type, encoded payload and metadata.
public struct NewEvent: Sendable, Hashable {
  /// The event's ID. An ID already stored is not stored again (idempotent appends).
  public var id: UUID
  /// The stored type name.
  public var type: String
  /// The payload's schema version.
  public var schemaVersion: UInt16
  /// The encoded payload.
  public var payload: [UInt8]
  /// Correlation, causation and origin.
  public var metadata: EventMetadata
  /// The time to record; `nil` (the usual case) records the time of the append. Set by imports.
  public var recordedAt: Date?

  /// Encodes `payload` as a new event.
  /// - Parameters:
  ///   - payload: the event.
  ///   - id: the event's ID; by default a new version-7 UUID (`UUID.version7()`), time-ordered,
  ///     so that the ID index takes it near its end. Pass a stable ID to make a retried append
  ///     idempotent.
  ///   - metadata: correlation, causation and origin.
  /// - Throws: `EncodingError` when the payload cannot be encoded.
  public init<E: EventPayload>(
    _ payload: E, id: UUID = .version7(), metadata: EventMetadata = EventMetadata()
  ) throws {
    self.id = id
    self.type = E.eventType
    self.schemaVersion = E.schemaVersion
    self.payload = try BinaryEncoder().encode(payload)
    self.metadata = metadata
    self.recordedAt = nil
  }

  /// Creates an event from already encoded parts (for imports and tools).
  public init(
    id: UUID, type: String, schemaVersion: UInt16, payload: [UInt8], metadata: EventMetadata,
    recordedAt: Date? = nil
  ) {
    self.id = id
    self.type = type
    self.schemaVersion = schemaVersion
    self.payload = payload
    self.metadata = metadata
    self.recordedAt = recordedAt
  }
}

/// Events for one stream, with what the append expects of the stream's version.
///
/// A stream append without events only checks its expectation: in a multi-stream append it
/// guards the others on that stream's version (for example, a booking appended only while the
/// restaurant catalog is still at the version that was read).
public struct StreamAppend: Sendable, Hashable {
  /// The stream.
  public var stream: StreamID
  /// The expectation checked before anything is written.
  public var expectedVersion: ExpectedVersion
  /// The events, in order.
  public var events: [NewEvent]

  /// Creates a stream append.
  public init(stream: StreamID, expectedVersion: ExpectedVersion = .any, events: [NewEvent]) {
    self.stream = stream
    self.expectedVersion = expectedVersion
    self.events = events
  }
}
