import EventLog
import Foundation
import Synchronization

/// How the replicator talks to the server that holds the shared log.
///
/// Two implementations call the same SQL functions (`eventlog_api`, server schema version 3; the
/// anchoring calls, ``pullChained(after:limit:maxBytes:)``, ``attestedHeads(device:after:limit:)`` and a
/// push with a head, need version 5; the data subjects' calls, ``pullWithSubjects(after:limit:maxBytes:)``,
/// ``pushKeys(_:device:)`` and ``pullKeys(after:limit:)``, need version 6):
/// libpq (`ReplicationPostgres`) and Supabase's HTTPS API (PostgREST's `rpc/`). Every call may
/// block for as long as the server takes; implementations keep their blocking work off the
/// caller's executor, and bound each call by ``ReplicationDeadline/current`` when it is set.
///
/// Errors a transport throws conform to ``ReplicationTransportError``, which says whether
/// trying again may help, whether the server refused the events themselves, or neither.
public protocol ReplicationTransport: Sendable {
  /// The server, as messages name it (never with a password or a token).
  var server: String { get }

  /// Checks that the server's schema is one this build speaks.
  /// - Throws: ``ReplicationError/schemaMissing(server:)``,
  ///   ``ReplicationError/schemaTooOld(server:found:required:)`` or
  ///   ``ReplicationError/schemaTooNew(server:found:supported:)``, or a transport error.
  func checkSchema() async throws

  /// The server's view: its schema, the owner it takes this device's requests for, and the
  /// owner's head.
  func serverInfo() async throws -> ServerInfo

  /// Stores `events` of `device` on the server in one server transaction, each checked on its
  /// own, with the device's pushed mark set to `through` (the last local sequence the batch
  /// accounts for) and, when `head` is given (a server of schema version 5 or later), the
  /// device's chain value at `through` attested there.
  /// - Returns: an outcome per event, in order.
  func push(
    _ events: [OutgoingEvent], device: DeviceCredentials, through: UInt64, head: ChainValue?
  ) async throws -> [PushOutcome]

  /// The device's pushed mark on the server, under its key.
  func pushedMark(device: DeviceCredentials) async throws -> ServerMark

  /// The owner's server events after `cursor`, in position order: at most `limit` of them and,
  /// past the first, at most `maxBytes` of payload. With `wait` above zero the server waits up
  /// to that long for an event past the cursor before it answers an empty page (long polling).
  /// - Throws: ``ReplicationError/serverChanged(server:reason:)`` when the server holds another
  ///   event at the cursor's position than the one the device pulled there,
  ///   ``ReplicationError/serverBehind(server:head:cursor:)`` when it holds fewer events.
  func pull(after cursor: PullCursor, limit: Int, maxBytes: Int, wait: Duration) async throws -> [PulledRow]

  /// The owner's server rows after `cursor`, as ``pull(after:limit:maxBytes:wait:)`` finds them,
  /// with what the server's chain covers besides and each row's chain value (server schema
  /// version 5), every column as the server sent it, for ``ServerChain`` to recompute: at most
  /// `limit` rows and, past the first, at most `maxBytes` of payload. A row the transport could not
  /// take (over what an answer may hold) comes with only its position and
  /// ``ReplicationWire/RowFields/unavailable``.
  /// - Throws: as ``pull(after:limit:maxBytes:wait:)``.
  func pullChained(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields]

  /// The heads the server accepted for `device` (any device of the owner) after attestation
  /// number `after`, in the order it accepted them: at most `limit` (server schema version 5).
  func attestedHeads(device: UUID, after: UInt64, limit: Int) async throws -> [AttestedHead]

  /// The rows of ``pullChained(after:limit:maxBytes:)``, each with the data subjects its event
  /// holds sealed values of (``ReplicationWire/RowFields/subjects``; server schema version 6).
  /// - Throws: as ``pull(after:limit:maxBytes:wait:)``.
  func pullWithSubjects(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields]

  /// Stores data subjects' keys of the owner on the server (server schema version 6), in one
  /// server transaction: a subject the server holds a key of keeps it, and an erased subject's
  /// key is refused.
  /// - Parameters:
  ///   - keys: at most 1,000 keys.
  ///   - device: the device that pushes them.
  /// - Returns: what the server did with each key, in order.
  /// - Throws: a transport error (its kind `.rejected` when the server refused the batch's
  ///   values), ``ReplicationError/protocolViolation(server:reason:)`` for a malformed answer.
  func pushKeys(_ keys: [SubjectKey], device: UUID) async throws -> [KeyPushOutcome]

  /// The owner's keys the server stored after `serial`, in the order it stored them: at most
  /// `limit` (server schema version 6). An erased subject's key is no longer there.
  /// - Throws: a transport error, ``ReplicationError/protocolViolation(server:reason:)`` for a
  ///   malformed row.
  func pullKeys(after serial: UInt64, limit: Int) async throws -> [ServerSubjectKey]

  /// The owner's last position on the server, or 0.
  func head() async throws -> UInt64

  /// Waits up to `timeout` for the server to announce new events of the owner.
  /// - Returns: `true` when it did, `false` when the time ran out.
  func waitForNews(upTo timeout: Duration) async throws -> Bool

  /// Drops the connections (a later call connects again).
  func close()
}

extension ReplicationTransport {
  /// Stores `events` without attesting a head: what a server of any schema version takes.
  public func push(
    _ events: [OutgoingEvent], device: DeviceCredentials, through: UInt64
  ) async throws -> [PushOutcome] {
    try await push(events, device: device, through: through, head: nil)
  }
}

/// A chain head a device attested with a push, as the server keeps it
/// (`eventlog.attested_heads`, server schema version 5).
public struct AttestedHead: Sendable, Hashable {
  /// Its number on the server: attestations are numbered in the order the server accepted them.
  public var attestation: UInt64
  /// The local sequence the head is the device's chain value at (the push's `p_through`).
  public var sequence: UInt64
  /// The device's chain value there, as it said.
  public var head: ChainValue
  /// SHA-256 of the device key the push was made with.
  public var keyHash: [UInt8]
  /// The owner's last position on the server when it accepted the head.
  public var serverPosition: UInt64
  /// The server's chain value at that position then.
  public var serverHead: ChainValue
  /// When the server accepted it.
  public var attestedAt: Date

  /// Creates an attestation.
  public init(
    attestation: UInt64, sequence: UInt64, head: ChainValue, keyHash: [UInt8], serverPosition: UInt64,
    serverHead: ChainValue, attestedAt: Date
  ) {
    self.attestation = attestation
    self.sequence = sequence
    self.head = head
    self.keyHash = keyHash
    self.serverPosition = serverPosition
    self.serverHead = serverHead
    self.attestedAt = attestedAt
  }
}

/// A key as the server holds it: its serial (the order the server stored the owner's keys in) and
/// the key.
public struct ServerSubjectKey: Sendable, Hashable {
  /// Its serial: a pull of keys asks for those after the last it stored.
  public var serial: UInt64
  /// The key.
  public var key: SubjectKey

  /// Creates the pair.
  public init(serial: UInt64, key: SubjectKey) {
    self.serial = serial
    self.key = key
  }
}

/// What the server did with a pushed key.
public enum KeyPushOutcome: String, Sendable, Hashable {
  /// Stored.
  case stored
  /// The server holds a key of the subject already (the first pushed): kept, this one dropped.
  case held
  /// The subject is erased on the server: the key is refused.
  case erased
}

/// A position of an owner's log on the server and the server's chain value there.
public struct ServerChainHead: Sendable, Hashable {
  /// The position.
  public var position: UInt64
  /// The server's chain value at it.
  public var value: ChainValue

  /// Creates the pair.
  public init(position: UInt64, value: ChainValue) {
    self.position = position
    self.value = value
  }
}

/// What a transport's error says about trying again.
public enum TransportFailureKind: Sendable, Hashable {
  /// The server could not be reached, went away, or asked to try again (a serialization
  /// failure, a deadlock, an exhausted pool): the same request may succeed later.
  case transient
  /// The server refused the events of the request themselves: the same events will be refused
  /// again, others may not.
  case rejected
  /// Anything else (a wrong password, an expired session, missing privileges, a malformed URL):
  /// nothing will succeed until someone changes something.
  case fatal
}

/// An error of a ``ReplicationTransport``.
public protocol ReplicationTransportError: Error, CustomStringConvertible {
  /// What the error says about trying again.
  var failureKind: TransportFailureKind { get }

  /// Whether the server gave up on the request for taking too long (a statement timeout, a
  /// gateway's timeout): asking for less (a smaller page) may succeed where the same request
  /// would not. `false` unless a transport says so.
  var isTimeout: Bool { get }

  /// Whether the server refused the user's session (an expired or revoked access token, or
  /// none): a renewed session may succeed where nothing else will. Live replication
  /// (``Replicator/watch(shouldStop:report:)``) waits for one instead of stopping. `false` unless
  /// a transport says so.
  var needsNewSession: Bool { get }
}

extension ReplicationTransportError {
  /// `false`: the error says nothing of the request's cost.
  public var isTimeout: Bool { false }

  /// `false`: the error is not about a session.
  public var needsNewSession: Bool { false }
}

/// The deadline of the replication command in flight, which transports bound their calls by: a
/// one-shot `push` or `pull` with `--retry-for` never waits longer than its budget without
/// progress, not even inside one statement. Each batch pushed and each page pulled is progress:
/// it moves the deadline a budget past that moment, so a long push that keeps moving is never
/// cut short, while a server that does not answer (or keeps failing) ends the command at the
/// deadline.
public final class ReplicationDeadline: Sendable {
  /// The deadline of the call in flight, or `nil` for none (live mode retries until stopped).
  @TaskLocal public static var current: ReplicationDeadline?

  /// How long the command may go without progress.
  public let budget: Duration
  private let end: Mutex<ContinuousClock.Instant>

  /// A deadline `budget` from now.
  public init(budget: Duration) {
    self.budget = budget
    end = Mutex(ContinuousClock.now + budget)
  }

  /// The instant by which the next progress must come.
  public var instant: ContinuousClock.Instant { end.withLock { $0 } }

  /// Progress: the deadline moves to a budget from now (never earlier than it was).
  public func progressed() {
    let next = ContinuousClock.now + budget
    end.withLock { $0 = max($0, next) }
  }

  /// The time left until ``current``'s instant, capped at `limit` (and at least a millisecond, so
  /// that a call past the deadline fails at once instead of waiting forever).
  public static func remaining(capped limit: Duration) -> Duration {
    guard let deadline = current else { return limit }
    return max(.milliseconds(1), min(limit, deadline.instant - .now))
  }
}

/// A device as the server knows it: its public ID (the origin of its events) and its secret key,
/// which only the device holds and which the server keeps the device's mark under.
public struct DeviceCredentials: Sendable, Hashable {
  /// The device ID (`EventStore/deviceID`).
  public var id: UUID
  /// The device's secret key (64 hexadecimal digits), never printed.
  public var key: String

  /// Creates credentials.
  public init(id: UUID, key: String) {
    self.id = id
    self.key = key
  }
}

/// A device's pushed mark as the server holds it.
public struct ServerMark: Sendable, Hashable {
  /// The last local sequence the server acknowledged (0: none).
  public var pushedThrough: UInt64
  /// The local sequence of the last event the server acknowledged, and its ID: the device checks
  /// that its own log still holds that event there before it trusts the mark.
  public var lastSequence: UInt64?
  /// The ID of that event.
  public var lastID: UUID?

  /// Creates a mark.
  public init(pushedThrough: UInt64, lastSequence: UInt64? = nil, lastID: UUID? = nil) {
    self.pushedThrough = pushedThrough
    self.lastSequence = lastSequence
    self.lastID = lastID
  }
}

/// Where a pull starts: the last position pulled, and the ID of the event pulled there (`nil`
/// for a cursor from before version 3, or none yet).
public struct PullCursor: Sendable, Hashable {
  /// The last server position pulled (0: none).
  public var position: UInt64
  /// The event at that position, as the device pulled it.
  public var eventID: UUID?

  /// Creates a cursor.
  public init(position: UInt64, eventID: UUID?) {
    self.position = position
    self.eventID = eventID
  }
}

/// The server's view of this device's owner.
public struct ServerInfo: Sendable, Hashable {
  /// The server's schema version.
  public var schemaVersion: Int
  /// The oldest client schema that may use it.
  public var clientsFrom: Int
  /// The owner the server takes this device's requests for (`role:<oid>` or `user:<uuid>`).
  public var owner: String
  /// The owner's last position.
  public var head: UInt64

  /// Creates the view.
  public init(schemaVersion: Int, clientsFrom: Int, owner: String, head: UInt64) {
    self.schemaVersion = schemaVersion
    self.clientsFrom = clientsFrom
    self.owner = owner
    self.head = head
  }
}

/// A local event on its way to the server.
public struct OutgoingEvent: Sendable, Hashable {
  /// Its sequence in this device's log.
  public var localSequence: UInt64
  /// The event's ID.
  public var id: UUID
  /// Its stream.
  public var stream: StreamID
  /// Its type name.
  public var type: String
  /// Its payload's schema version.
  public var schemaVersion: UInt16
  /// The payload as a JSON object (UTF-8): the form `export` writes, or `{"$binary": "<base64>"}`
  /// when this build has no JSON form for it.
  public var payload: [UInt8]
  /// Correlation, causation and origin.
  public var metadata: EventMetadata
  /// When it was first recorded, to the microsecond.
  public var recordedAt: Date
  /// The device that first recorded it and its sequence there, as its record says (an imported
  /// event's is another device's); `nil` when not known, and the server then takes the pushing
  /// device and ``localSequence``.
  public var provenance: RecordedEvent.Provenance?
  /// The data subjects whose sealed values the payload holds (``EventLog/RecordedEvent/subjects``).
  public var subjects: [UUID]

  /// Creates an outgoing event.
  public init(
    localSequence: UInt64, id: UUID, stream: StreamID, type: String, schemaVersion: UInt16,
    payload: [UInt8], metadata: EventMetadata, recordedAt: Date, provenance: RecordedEvent.Provenance? = nil,
    subjects: [UUID] = []
  ) {
    self.subjects = subjects
    self.provenance = provenance
    self.localSequence = localSequence
    self.id = id
    self.stream = stream
    self.type = type
    self.schemaVersion = schemaVersion
    self.payload = payload
    self.metadata = metadata
    self.recordedAt = recordedAt
  }
}

extension OutgoingEvent {
  /// The outgoing form of a local event, with its payload's JSON object and its provenance.
  public init(_ event: RecordedEvent, payload: [UInt8]) {
    self.init(
      localSequence: event.sequence, id: event.id, stream: event.stream, type: event.type,
      schemaVersion: event.schemaVersion, payload: payload, metadata: event.metadata,
      recordedAt: event.recordedAt, provenance: event.provenance, subjects: event.subjects)
  }
}

/// What the server did with one pushed event.
public enum PushOutcome: Sendable, Hashable {
  /// Stored at `position`.
  case stored(position: UInt64)
  /// The same event (same ID, same content) was stored before, at `position`.
  case alreadyStored(position: UInt64)
  /// The server holds other content under this event's ID: reported on both sides, never
  /// overwritten.
  case conflict(position: UInt64?, reason: String)
  /// Refused for good, with the server's reason (a value out of bounds, a stream the server does
  /// not replicate, an ID another owner holds).
  case refused(reason: String)
}

/// An event of the shared log, as the server holds it.
public struct ServerEvent: Sendable, Hashable {
  /// Its position in the owner's log on the server: gap-free, from 1.
  public var position: UInt64
  /// The event's ID.
  public var id: UUID
  /// The device that first recorded it (from server schema version 5, as the pushing device's
  /// record says; before, the device that pushed it first).
  public var originDevice: UUID
  /// Its sequence in that device's log.
  public var originSequence: UInt64
  /// Its stream.
  public var stream: StreamID
  /// Its type name.
  public var type: String
  /// Its payload's schema version.
  public var schemaVersion: UInt16
  /// The payload as a JSON object (UTF-8), as the server holds it.
  public var payload: [UInt8]
  /// Correlation, causation and origin, as the origin recorded them.
  public var metadata: EventMetadata
  /// When the origin recorded it.
  public var recordedAt: Date
  /// The data subjects whose sealed values the payload holds (empty from a server before schema
  /// version 6).
  public var subjects: [UUID]

  /// Creates a server event.
  public init(
    position: UInt64, id: UUID, originDevice: UUID, originSequence: UInt64, stream: StreamID, type: String,
    schemaVersion: UInt16, payload: [UInt8], metadata: EventMetadata, recordedAt: Date, subjects: [UUID] = []
  ) {
    self.subjects = subjects
    self.position = position
    self.id = id
    self.originDevice = originDevice
    self.originSequence = originSequence
    self.stream = stream
    self.type = type
    self.schemaVersion = schemaVersion
    self.payload = payload
    self.metadata = metadata
    self.recordedAt = recordedAt
  }
}

/// A row of a pulled page: an event, or a row no device could have pushed (an operator's hand),
/// which the device records and passes instead of failing the pull.
public enum PulledRow: Sendable, Hashable {
  /// A well-formed event.
  case event(ServerEvent)
  /// A row at `position` that is not a well-formed event, and why.
  case malformed(position: UInt64, id: UUID?, reason: String)

  /// The row's position.
  public var position: UInt64 {
    switch self {
    case .event(let event): event.position
    case .malformed(let position, _, _): position
    }
  }

  /// The row's event ID, when it has one.
  public var id: UUID? {
    switch self {
    case .event(let event): event.id
    case .malformed(_, let id, _): id
    }
  }
}
