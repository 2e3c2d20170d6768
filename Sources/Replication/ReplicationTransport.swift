import EventLog
import Foundation

/// How the replicator talks to the server that holds the shared log.
///
/// The first implementation is libpq (`ReplicationPostgres`); another could speak Supabase's
/// HTTP API (PostgREST's `rpc/`), which calls the same SQL functions. Every call may block for
/// as long as the server takes; implementations keep their blocking work off the caller's
/// executor.
///
/// Errors a transport throws conform to ``ReplicationTransportError``, which says whether
/// trying again may help, whether the server refused the events themselves, or neither.
public protocol ReplicationTransport: Sendable {
  /// The server, as messages name it (never with a password).
  var server: String { get }

  /// Checks that the server's schema is one this build speaks.
  /// - Throws: ``ReplicationError/schemaMissing(server:)``,
  ///   ``ReplicationError/schemaTooOld(server:found:required:)`` or
  ///   ``ReplicationError/schemaTooNew(server:found:supported:)``, or a transport error.
  func checkSchema() async throws

  /// Stores `events` of device `device` on the server in one server transaction, with the
  /// device's pushed mark set to `through` (the last local sequence the batch accounts for).
  /// - Returns: an outcome per event, in order.
  func push(_ events: [OutgoingEvent], device: UUID, through: UInt64) async throws -> [PushOutcome]

  /// The device's pushed mark on the server: the last local sequence it acknowledged, or 0.
  func pushedMark(device: UUID) async throws -> UInt64

  /// The owner's server events after `position`, in position order, at most `limit`.
  func pull(after position: UInt64, limit: Int) async throws -> [ServerEvent]

  /// The owner's last position on the server, or 0.
  func head() async throws -> UInt64

  /// Waits up to `timeout` for the server to announce new events of the owner.
  /// - Returns: `true` when it did, `false` when the time ran out.
  func waitForNews(upTo timeout: Duration) async throws -> Bool

  /// Drops the connections (a later call connects again).
  func close()
}

/// What a transport's error says about trying again.
public enum TransportFailureKind: Sendable, Hashable {
  /// The server could not be reached, went away, or asked to try again (a serialization
  /// failure, a deadlock): the same request may succeed later.
  case transient
  /// The server refused the events of the request themselves (a constraint, a value out of
  /// range): the same events will be refused again, others may not.
  case rejected
  /// Anything else (a wrong password, missing privileges): nothing will succeed until someone
  /// changes something.
  case fatal
}

/// An error of a ``ReplicationTransport``.
public protocol ReplicationTransportError: Error, CustomStringConvertible {
  /// What the error says about trying again.
  var failureKind: TransportFailureKind { get }
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
  /// The payload, as stored.
  public var payload: [UInt8]
  /// Correlation, causation and origin.
  public var metadata: EventMetadata
  /// When it was first recorded, to the microsecond.
  public var recordedAt: Date

  /// The outgoing form of a local event.
  public init(_ event: RecordedEvent) {
    localSequence = event.sequence
    id = event.id
    stream = event.stream
    type = event.type
    schemaVersion = event.schemaVersion
    payload = event.payload
    metadata = event.metadata
    recordedAt = event.recordedAt
  }
}

/// What the server did with one pushed event.
public enum PushOutcome: Sendable, Hashable {
  /// Stored at `position`.
  case stored(position: UInt64)
  /// An event with its ID was stored before, at `position`.
  case alreadyStored(position: UInt64)
}

/// An event of the shared log, as the server holds it.
public struct ServerEvent: Sendable, Hashable {
  /// Its position in the owner's log on the server: gap-free, from 1.
  public var position: UInt64
  /// The event's ID.
  public var id: UUID
  /// The device that pushed it first.
  public var originDevice: UUID
  /// Its sequence in that device's log.
  public var originSequence: UInt64
  /// Its stream.
  public var stream: StreamID
  /// Its type name.
  public var type: String
  /// Its payload's schema version.
  public var schemaVersion: UInt16
  /// The payload, as the origin stored it.
  public var payload: [UInt8]
  /// Correlation, causation and origin, as the origin recorded them.
  public var metadata: EventMetadata
  /// When the origin recorded it.
  public var recordedAt: Date

  /// Creates a server event.
  public init(
    position: UInt64, id: UUID, originDevice: UUID, originSequence: UInt64, stream: StreamID, type: String,
    schemaVersion: UInt16, payload: [UInt8], metadata: EventMetadata, recordedAt: Date
  ) {
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
