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
  /// How ``payload`` is encoded: ``PayloadEncoding/binary``, except for an event whose payload
  /// arrived as JSON and could not be encoded in binary (``init(id:type:schemaVersion:jsonPayload:metadata:recordedAt:)``).
  public var payloadEncoding: PayloadEncoding = .binary
  /// The layout of the payload's type as this process knows it (``TypeLayouts``), which the
  /// append records in the environment when the environment has none that describes the payload.
  /// Not part of the event's identity (`==`, `hash(into:)`).
  package var layout: KnownLayout?
  /// The data subjects whose ``Personal`` values the payload holds sealed, ascending (by their
  /// bytes) and distinct: stored in the record, so that the log knows whose data each event
  /// holds without opening it (``EventStore/subjects()``).
  public var subjects: [UUID] = []
  /// The payload's personal values not sealed yet: the append seals them with their subjects'
  /// keys, in place (until then the payload holds each one's plaintext where its ciphertext
  /// goes). Empty for an event read or received from elsewhere (sealed already).
  package var pendingSeals: [PendingSeal] = []

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
    let (bytes, seals) = try BinaryEncoder().writeForSealing(payload, eventID: id)
    self.payload = bytes
    if !seals.isEmpty {
      pendingSeals = seals
      subjects = Self.ordered(seals.map { $0.subject })
    }
    self.metadata = metadata
    self.recordedAt = nil
    self.layout = TypeLayouts.shared.layout(of: payload, encoded: bytes)
  }

  /// Creates an event from already encoded parts (for imports and tools).
  /// - Parameters:
  ///   - id: the event's ID.
  ///   - type: the stored type name.
  ///   - schemaVersion: the payload's schema version.
  ///   - payload: the encoded payload, in ``PayloadEncoding/binary`` unless `payloadEncoding` says
  ///     otherwise.
  ///   - payloadEncoding: how `payload` is encoded.
  ///   - metadata: correlation, causation and origin.
  ///   - recordedAt: the time to record; `nil` records the time of the append.
  ///   - subjects: the data subjects whose sealed values the payload holds (sorted and made
  ///     distinct here).
  public init(
    id: UUID, type: String, schemaVersion: UInt16, payload: [UInt8],
    payloadEncoding: PayloadEncoding = .binary,
    metadata: EventMetadata, recordedAt: Date? = nil, subjects: [UUID] = []
  ) {
    self.subjects = Self.ordered(subjects)
    self.id = id
    self.type = type
    self.schemaVersion = schemaVersion
    self.payload = payload
    self.payloadEncoding = payloadEncoding
    self.metadata = metadata
    self.recordedAt = recordedAt
  }

  /// Whether two events are the same: every field but the layout this process knows.
  public static func == (lhs: NewEvent, rhs: NewEvent) -> Bool {
    lhs.id == rhs.id && lhs.type == rhs.type && lhs.schemaVersion == rhs.schemaVersion
      && lhs.payload == rhs.payload && lhs.payloadEncoding == rhs.payloadEncoding
      && lhs.metadata == rhs.metadata && lhs.recordedAt == rhs.recordedAt && lhs.subjects == rhs.subjects
  }

  /// `subjects` ascending by their bytes, without repeats (as a record lists them).
  package static func ordered(_ subjects: [UUID]) -> [UUID] {
    // Mostly one subject (a booking's customer, in each of its values): nothing to sort.
    if let first = subjects.first, subjects.allSatisfy({ $0 == first }) { return [first] }
    var ordered: [UUID] = []
    for subject in subjects.sorted(by: { $0.byteOrder < $1.byteOrder }) where ordered.last != subject {
      ordered.append(subject)
    }
    return ordered
  }

  /// Hashes what `==` compares.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(id)
    hasher.combine(type)
    hasher.combine(schemaVersion)
    hasher.combine(payload)
    hasher.combine(payloadEncoding)
    hasher.combine(metadata)
    hasher.combine(recordedAt)
    hasher.combine(subjects)
  }
}

extension EventStore {
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
}
