import EventLog
import Foundation

/// Replication's state in the environment (``EventStore/stateValue(forKey:)``), every key
/// prefixed `replication.`:
///
/// | key | value |
/// |---|---|
/// | `replication.pushed` | UInt64 LE: the last local sequence the server acknowledged |
/// | `replication.cursor` | UInt64 LE: the last server position pulled |
/// | `replication.pulled.` + sequence (UInt64 BE) | a pulled event: server position (UInt64 LE), origin device (16 bytes), origin sequence (UInt64 LE) |
/// | `replication.rejected.` + sequence (UInt64 BE) | a local event the server refused: event ID (16 bytes), then the reason (UTF-8) |
/// | `replication.unstorable.` + position (UInt64 BE) | a server event this log cannot store: event ID (16 bytes), then the reason |
///
/// The cursor and the pulled events' entries are written in the transaction that stores the
/// page; the pushed mark and rejections after the server's transaction committed.
enum ReplicationState {
  static let pushedKey = Array("replication.pushed".utf8)
  static let cursorKey = Array("replication.cursor".utf8)
  static let pulledPrefix = Array("replication.pulled.".utf8)
  static let rejectedPrefix = Array("replication.rejected.".utf8)
  static let unstorablePrefix = Array("replication.unstorable.".utf8)

  static func key(_ prefix: [UInt8], _ number: UInt64) -> [UInt8] {
    prefix + withUnsafeBytes(of: number.bigEndian, Array.init)
  }

  static func number(inKey key: [UInt8], after prefix: [UInt8]) -> UInt64? {
    guard key.count == prefix.count + 8 else { return nil }
    return key[prefix.count...].reduce(0) { $0 << 8 | UInt64($1) }
  }

  static func encode(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

  static func decode(_ bytes: [UInt8]?) -> UInt64 {
    guard let bytes, bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
  }

  static func uuidBytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid, Array.init) }

  static func uuid(_ bytes: ArraySlice<UInt8>) -> UUID? {
    guard bytes.count == 16 else { return nil }
    return Array(bytes).withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
  }

  /// The entry of a pulled event.
  static func pulled(_ event: ServerEvent) -> [UInt8] {
    encode(event.position) + uuidBytes(event.originDevice) + encode(event.originSequence)
  }

  /// An ID and a reason, as rejections and unstorable events store them.
  static func note(_ id: UUID, _ reason: String) -> [UInt8] {
    uuidBytes(id) + Array(reason.utf8.prefix(2_000))
  }

  static func readNote(_ bytes: [UInt8]) -> (id: UUID?, reason: String) {
    (uuid(bytes.prefix(16)), String(decoding: bytes.dropFirst(16), as: UTF8.self))
  }
}

/// Where a pulled event came from (``Replicator/origin(ofLocalSequence:)``).
public struct PulledOrigin: Sendable, Hashable {
  /// Its position on the server.
  public var position: UInt64
  /// The device that pushed it first.
  public var device: UUID
  /// Its sequence in that device's log.
  public var sequence: UInt64
}

/// A local event the server refused for good, and why.
public struct Rejection: Sendable, Hashable {
  /// The event's local sequence.
  public var sequence: UInt64
  /// The event's ID.
  public var id: UUID?
  /// The server's reason.
  public var reason: String
}

/// What `remote status` shows: this device's replication, as the local log knows it.
public struct ReplicationStatus: Sendable, Hashable {
  /// The device ID.
  public var device: UUID?
  /// Local events waiting to be pushed.
  public var pending: Int
  /// The last local sequence the server acknowledged.
  public var pushedThrough: UInt64
  /// The last server position pulled.
  public var cursor: UInt64
  /// Events stored but not projected (unreadable by this build, or breaking the domain's rules),
  /// and server events this log could not store at all.
  public var unreadable: Int
  /// The local events the server refused.
  public var rejected: [Rejection]
}

/// What a local log knows of its replication, without a server: the outbox, the marks, where
/// pulled events came from and which events the server refused.
public struct LocalReplica: Sendable {
  /// The local log.
  public let store: EventStore
  /// Whether a stream's events are shared: ``EventLog/AppSchema/isReplicated(_:)`` of the store's
  /// schema.
  public let isReplicated: @Sendable (StreamID) -> Bool

  /// Creates the view of `store`'s replication, of its schema's replicated streams.
  public init(store: EventStore) {
    self.store = store
    let streams = store.appSchema.replicatedStreams
    self.isReplicated = { streams.contains($0) }
  }

  /// The last local sequence the server acknowledged.
  public func pushedThrough() throws -> UInt64 {
    ReplicationState.decode(try store.stateValue(forKey: ReplicationState.pushedKey))
  }

  /// The last server position pulled.
  public func cursor() throws -> UInt64 {
    ReplicationState.decode(try store.stateValue(forKey: ReplicationState.cursorKey))
  }

  /// This device's replication.
  /// - Complexity: O(events past the pushed mark).
  public func status() throws -> ReplicationStatus {
    let mark = try pushedThrough()
    let unstorable = try store.stateEntries(withPrefix: ReplicationState.unstorablePrefix).count
    return ReplicationStatus(
      device: store.deviceID, pending: try outbox(after: mark).count, pushedThrough: mark,
      cursor: try cursor(),
      unreadable: try store.skippedCount() + unstorable, rejected: try rejections())
  }

  /// The local events the server refused, in sequence order.
  public func rejections() throws -> [Rejection] {
    try store.stateEntries(withPrefix: ReplicationState.rejectedPrefix).map { entry in
      let (id, reason) = ReplicationState.readNote(entry.value)
      return Rejection(
        sequence: ReplicationState.number(inKey: entry.key, after: ReplicationState.rejectedPrefix) ?? 0,
        id: id,
        reason: reason)
    }
  }

  /// Where the local event `sequence` came from, when a pull brought it.
  public func origin(ofLocalSequence sequence: UInt64) throws -> PulledOrigin? {
    guard
      let value = try store.stateValue(forKey: ReplicationState.key(ReplicationState.pulledPrefix, sequence)),
      value.count == 32, let device = ReplicationState.uuid(value[8..<24])
    else { return nil }
    return PulledOrigin(
      position: ReplicationState.decode(Array(value[0..<8])), device: device,
      sequence: ReplicationState.decode(Array(value[24..<32])))
  }

  /// The outbox after `mark`: sequences of local events on replicated streams that did not come
  /// from the server.
  func outbox(after mark: UInt64) throws -> [UInt64] {
    var sequences: [UInt64] = []
    var next = mark + 1
    while true {
      let events = try store.events(from: next, limit: 4_096)
      guard let last = events.last else { break }
      let pulled = try pulledSequences(from: next, through: last.sequence)
      for event in events where isReplicated(event.stream) && !pulled.contains(event.sequence) {
        sequences.append(event.sequence)
      }
      next = last.sequence + 1
    }
    return sequences
  }

  /// The sequences in `first...last` of events a pull brought.
  func pulledSequences(from first: UInt64, through last: UInt64) throws -> Set<UInt64> {
    guard first <= last else { return [] }
    var sequences = Set<UInt64>()
    for entry in try store.stateEntries(
      withPrefix: ReplicationState.pulledPrefix,
      from: ReplicationState.key(ReplicationState.pulledPrefix, first),
      limit: Int(clamping: last - first + 1))
    {
      guard let sequence = ReplicationState.number(inKey: entry.key, after: ReplicationState.pulledPrefix),
        sequence <= last
      else { break }
      sequences.insert(sequence)
    }
    return sequences
  }
}
