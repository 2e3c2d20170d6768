import EventLog
import Foundation

/// Replication's state in the environment (``EventStore/stateValue(forKey:)``), every key
/// prefixed `replication.`:
///
/// | key | value |
/// |---|---|
/// | `replication.device-key` | this device's secret key (64 hexadecimal digits), which the server keeps its mark under |
/// | `replication.pushed` | UInt64 LE: the last local sequence the server acknowledged |
/// | `replication.cursor` | UInt64 LE: the last server position pulled, then (from version 3) the 16 bytes of the event ID pulled there |
/// | `replication.acked.` + position (UInt64 BE) | an event the server acknowledged at that position and a pull has not yet seen there: its ID (16 bytes) |
/// | `replication.conflict.` + position (UInt64 BE) | an event the server holds under an ID this log holds with other content: event ID (16 bytes), then the reason |
/// | `replication.diverged` | why the server's log no longer matches what this device pulled or pushed (UTF-8); push and pull refuse until `--resync` |
/// | `replication.repush` | set by a resync: the next push sends the whole outbox, whatever mark the server holds |
/// | `replication.owner` | the owner this device replicates as (UTF-8, as the server names it: `role:<oid>`, `user:<uuid>`), recorded at its first contact; push and pull refuse another until a reassign |
/// | `replication.pulled.` + sequence (UInt64 BE) | a pulled event: server position (UInt64 LE), origin device (16 bytes), origin sequence (UInt64 LE) |
/// | `replication.rejected.` + sequence (UInt64 BE) | a local event the server refused: event ID (16 bytes), then the reason (UTF-8) |
/// | `replication.unstorable.` + position (UInt64 BE) | a server event this log cannot store (or the server cannot serve): event ID (16 bytes, zeros when not known), then the reason |
/// | `replication.position.` + sequence (UInt64 BE) | a local event's server position (UInt64 LE): set when the server acknowledges a push of it, or a pull stores it or finds it here |
/// | `replication.at.` + position (UInt64 BE) | the local sequence (UInt64 LE) of the event at that server position: the same entries, keyed the other way |
/// | `replication.server-head` | the server's chain value at the last position pulled that had one (from server schema version 5): the position (UInt64 LE), then the 32 bytes |
/// | `replication.key-sent.` + subject (16 bytes) | a data subject's key the server answered for (stored, held or refused as erased): not sent again (server schema version 6) |
/// | `replication.key-cursor` | UInt64 LE: the serial of the last key pulled from the server (server schema version 6) |
///
/// The cursor, the server head and the pulled events' entries are written in the transaction that
/// stores the page; the pushed mark, rejections and the pushed events' positions after the
/// server's transaction committed.
enum ReplicationState {
  static let pushedKey = Array("replication.pushed".utf8)
  static let cursorKey = Array("replication.cursor".utf8)
  static let pulledPrefix = Array("replication.pulled.".utf8)
  static let rejectedPrefix = Array("replication.rejected.".utf8)
  static let unstorablePrefix = Array("replication.unstorable.".utf8)
  static let deviceKeyKey = Array("replication.device-key".utf8)
  static let ackedPrefix = Array("replication.acked.".utf8)
  static let conflictPrefix = Array("replication.conflict.".utf8)
  static let divergedKey = Array("replication.diverged".utf8)
  static let repushKey = Array("replication.repush".utf8)
  static let ownerKey = Array("replication.owner".utf8)
  static let positionPrefix = Array("replication.position.".utf8)
  static let atPrefix = Array("replication.at.".utf8)
  static let serverHeadKey = Array("replication.server-head".utf8)
  static let keySentPrefix = Array("replication.key-sent.".utf8)
  static let keyCursorKey = Array("replication.key-cursor".utf8)

  /// The two entries that say the local event `sequence` is at server `position`.
  static func located(_ sequence: UInt64, at position: UInt64) -> [EventStore.StateChange] {
    [.put(key(positionPrefix, sequence), encode(position)), .put(key(atPrefix, position), encode(sequence))]
  }

  /// The server head's value: the position, then the chain value.
  static func encodeServerHead(_ head: ServerChainHead) -> [UInt8] {
    encode(head.position) + head.value.bytes
  }

  /// A server head as stored, or `nil`.
  static func decodeServerHead(_ bytes: [UInt8]?) -> ServerChainHead? {
    guard let bytes, bytes.count == 40, let value = ChainValue(bytes: bytes[8...]) else { return nil }
    return ServerChainHead(position: decode(Array(bytes.prefix(8))), value: value)
  }

  /// The cursor's value: the position, then the event's ID when known.
  static func encodeCursor(_ cursor: PullCursor) -> [UInt8] {
    encode(cursor.position) + (cursor.eventID.map(uuidBytes) ?? [])
  }

  /// A cursor as stored: 8 bytes (before version 3: no ID) or 24.
  static func decodeCursor(_ bytes: [UInt8]?) -> PullCursor {
    guard let bytes, bytes.count == 8 || bytes.count == 24 else {
      return PullCursor(position: 0, eventID: nil)
    }
    return PullCursor(
      position: decode(Array(bytes.prefix(8))), eventID: bytes.count == 24 ? uuid(bytes[8..<24]) : nil)
  }

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
  static func note(_ id: UUID?, _ reason: String) -> [UInt8] {
    (id.map(uuidBytes) ?? [UInt8](repeating: 0, count: 16)) + Array(reason.utf8.prefix(2_000))
  }

  /// A note's ID (`nil` when it was recorded without one: sixteen zero bytes) and reason.
  static func readNote(_ bytes: [UInt8]) -> (id: UUID?, reason: String) {
    let id = bytes.prefix(16).allSatisfy { $0 == 0 } ? nil : uuid(bytes.prefix(16))
    return (id, String(decoding: bytes.dropFirst(16), as: UTF8.self))
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

  /// A rejection of the local event `sequence`.
  /// - Parameters:
  ///   - sequence: the event's local sequence.
  ///   - id: the event's ID.
  ///   - reason: the server's reason.
  public init(sequence: UInt64, id: UUID?, reason: String) {
    self.sequence = sequence
    self.id = id
    self.reason = reason
  }

  /// Whether the cause may pass: the server did not replicate the event's stream (`the stream
  /// '…' is not replicated on this server`), which the app's `remote init`, or adding the prefix,
  /// changes. A push sends such an event again (``Replicator/push(retryingRejections:progress:onRetry:shouldStop:)``);
  /// other refusals (a conflict, an ID another owner holds, a malformed event) stay as they are.
  public var mayPass: Bool {
    reason.hasPrefix("the stream '") && reason.hasSuffix("' is not replicated on this server")
  }
}

/// A server event this device recorded instead of storing it as it came: one it cannot store
/// (malformed, on a stream this app does not replicate), or one whose ID this log holds with
/// other content (a conflict).
public struct ServerEventNote: Sendable, Hashable {
  /// The event's server position.
  public var position: UInt64
  /// The event's ID, when the row had one.
  public var id: UUID?
  /// Why.
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
  /// The server events this log could not store (``unreadable`` counts them too).
  public var unstorable: [ServerEventNote]
  /// Events whose ID the server and this log hold with different content.
  public var conflicts: [ServerEventNote]
  /// Why the server's log no longer matches this device's (push and pull refuse until a
  /// resync), or `nil`.
  public var diverged: String?
  /// The owner this device replicates as, or `nil` before its first contact with a server.
  public var owner: String?
  /// The server's chain value at the last position this device pulled that had one (a server of
  /// schema version 5 or later), or `nil`.
  public var serverHead: ServerChainHead?
}

/// A server position and the local event there (``LocalReplica/serverOrder(after:limit:)``).
public struct ServerOrderEntry: Sendable, Hashable {
  /// The position in the owner's log on the server.
  public var position: UInt64
  /// The local sequence of the event there.
  public var sequence: UInt64
}

/// What a local log knows of its replication, without a server: the outbox, the marks, where
/// pulled events came from, the server positions of its events (and so the server's order), the
/// server's chain value its last pull recorded, and which events the server refused.
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
  public func cursor() throws -> UInt64 { try pullCursor().position }

  /// The last server position pulled and the event pulled there.
  public func pullCursor() throws -> PullCursor {
    ReplicationState.decodeCursor(try store.stateValue(forKey: ReplicationState.cursorKey))
  }

  /// The owner this device replicates as (`role:<oid>`, `user:<uuid>`), or `nil` before its
  /// first contact with a server.
  public func owner() throws -> String? {
    try store.stateValue(forKey: ReplicationState.ownerKey).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Why the server's log no longer matches this device's, or `nil`.
  public func diverged() throws -> String? {
    try store.stateValue(forKey: ReplicationState.divergedKey).map { String(decoding: $0, as: UTF8.self) }
  }

  /// This device's replication.
  /// - Complexity: O(events past the pushed mark).
  public func status() throws -> ReplicationStatus {
    let mark = try pushedThrough()
    let unstorable = try notes(ReplicationState.unstorablePrefix)
    return ReplicationStatus(
      device: store.deviceID, pending: try outbox(after: mark).count, pushedThrough: mark,
      cursor: try cursor(),
      unreadable: try store.skippedCount() + unstorable.count, rejected: try rejections(),
      unstorable: unstorable, conflicts: try notes(ReplicationState.conflictPrefix), diverged: try diverged(),
      owner: try owner(), serverHead: try serverHead())
  }

  /// The server's chain value at the last position this device pulled that had one, recorded in
  /// the transaction that stored the page: what `verify --remote` compares the server's chain
  /// with. `nil` before a pull from a server of schema version 5 or later.
  public func serverHead() throws -> ServerChainHead? {
    ReplicationState.decodeServerHead(try store.stateValue(forKey: ReplicationState.serverHeadKey))
  }

  /// The server position of the local event `sequence`, when this device knows it: the server
  /// acknowledged a push of it, or a pull stored it or found it here. `nil` for an event not on
  /// the server, not replicated, or pushed by a build before this one and not pulled since (a
  /// `pull --resync` learns those).
  /// - Complexity: O(log n).
  public func position(ofLocalSequence sequence: UInt64) throws -> UInt64? {
    try store.stateValue(forKey: ReplicationState.key(ReplicationState.positionPrefix, sequence)).map {
      ReplicationState.decode($0)
    }
  }

  /// The state changes that restore what an export said of the server (`import`): each event's
  /// server position, and the owner the exporting device replicated as, so that the copy shows
  /// the same provenance and is checked against the server as the original is. The events
  /// themselves stay this log's own outbox (the server acknowledges those it holds).
  /// - Parameters:
  ///   - positions: each local sequence with its server position.
  ///   - owner: the owner, when the export named one.
  /// - Returns: the changes, for the import's transaction.
  public static func importedProvenance(
    positions: [(sequence: UInt64, position: UInt64)], owner: String?
  ) -> [EventStore.StateChange] {
    var changes = positions.flatMap { ReplicationState.located($0.sequence, at: $0.position) }
    if let owner { changes.append(.put(ReplicationState.ownerKey, Array(owner.utf8))) }
    return changes
  }

  /// The local events whose server position this device knows, in server order: the positions
  /// after `position`, at most `limit` of them. Positions this device has no event for (not
  /// pulled yet, or not stored: ``ReplicationStatus/unstorable``) are left out; `log
  /// --server-order` walks the log with it, and shows every other event after them.
  /// - Complexity: O(log n + k).
  public func serverOrder(after position: UInt64 = 0, limit: Int = .max) throws -> [ServerOrderEntry] {
    guard limit > 0, position < .max else { return [] }
    return try store.stateEntries(
      withPrefix: ReplicationState.atPrefix,
      from: ReplicationState.key(ReplicationState.atPrefix, position + 1), limit: limit
    ).compactMap { entry in
      guard let position = ReplicationState.number(inKey: entry.key, after: ReplicationState.atPrefix),
        entry.value.count == 8
      else { return nil }
      return ServerOrderEntry(position: position, sequence: ReplicationState.decode(entry.value))
    }
  }

  private func notes(_ prefix: [UInt8]) throws -> [ServerEventNote] {
    try store.stateEntries(withPrefix: prefix).map { entry in
      let (id, reason) = ReplicationState.readNote(entry.value)
      return ServerEventNote(
        position: ReplicationState.number(inKey: entry.key, after: prefix) ?? 0, id: id, reason: reason)
    }
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

  /// How many events of the outbox lie after `mark`: local events on replicated streams past it
  /// that did not come from the server.
  /// - Complexity: O(events past the mark).
  public func pendingCount(after mark: UInt64) throws -> Int { try outbox(after: mark).count }

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
