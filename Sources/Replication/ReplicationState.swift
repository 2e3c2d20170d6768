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
