import EventLog
import Foundation
import Sodium

/// The server's own chain over an owner's positions (server schema version 5), recomputed from
/// the rows `pull_chained` sends: `Docs/Replication.md`, "The server's chain", gives the encoding,
/// which this mirrors byte for byte (`ServerSchema.rowEncoding` is the server's side).
///
/// Row `p`'s value is SHA-256 of row `p − 1`'s value (``genesis`` before position 1) followed by
/// the row's encoding: its position, ID, owner, origin device and sequence, pushing device and
/// sequence, stream, type, schema version, recorded-at, and the metadata's and the payload's JSON
/// text as the server renders them (the bytes `pull` sends). Integers are big-endian, UUIDs their
/// 16 bytes, texts their UTF-8 length (4 bytes) and bytes.
public enum ServerChain {
  /// The value before an owner's first row: 32 zero bytes.
  public static let genesis = ChainValue.zero

  /// The value of the row `fields` of `owner`'s log after `previous`, or `nil` when the row lacks
  /// a column the chain covers (a row the transport could not take, or one no server sends).
  /// - Complexity: O(the row's size).
  public static func value(
    after previous: ChainValue, row fields: ReplicationWire.RowFields, owner: String
  )
    -> ChainValue?
  {
    guard var message = encoding(of: fields, owner: owner, capacity: ChainValue.length) else { return nil }
    message.replaceSubrange(0..<ChainValue.length, with: previous.bytes)
    return ChainValue(bytes: SHA256.hash(message))
  }

  /// The row's canonical encoding, after `capacity` bytes left for the caller (zeros).
  static func encoding(
    of fields: ReplicationWire.RowFields, owner: String, capacity: Int = 0
  ) -> [UInt8]? {
    guard fields.unavailable == nil,
      let position = fields.position.flatMap(Int64.init),
      let id = fields.id.flatMap(UUID.init(uuidString:)),
      let originDevice = fields.originDevice.flatMap(UUID.init(uuidString:)),
      let originSequence = fields.originSequence.flatMap(Int64.init),
      let pushedBy = fields.pushedBy.flatMap(UUID.init(uuidString:)),
      let pushedSequence = fields.pushedSequence.flatMap(Int64.init),
      let stream = fields.stream, let type = fields.type,
      let schemaVersion = fields.schemaVersion.flatMap(Int32.init),
      let metadata = fields.metadata
    else { return nil }
    // A time outside what `pull` converts (years 1 to 9999) comes as `NULL`: the smallest value.
    let recordedAt: Int64
    if let text = fields.recordedAtMicroseconds {
      guard let value = Int64(text) else { return nil }
      recordedAt = value
    } else {
      recordedAt = .min
    }
    var out = [UInt8](repeating: 0, count: capacity)
    out.reserveCapacity(
      capacity + 160 + owner.utf8.count + stream.utf8.count + type.utf8.count + metadata.count
        + (fields.payload?.count ?? 0))
    func integer<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { out += $0 } }
    func uuid(_ value: UUID) { withUnsafeBytes(of: value.uuid) { out += $0 } }
    func text<C: Collection<UInt8>>(_ bytes: C) {
      integer(Int32(truncatingIfNeeded: bytes.count))
      out += bytes
    }
    integer(position)
    uuid(id)
    text(owner.utf8)
    uuid(originDevice)
    integer(originSequence)
    uuid(pushedBy)
    integer(pushedSequence)
    text(stream.utf8)
    text(type.utf8)
    integer(schemaVersion)
    integer(recordedAt)
    text(metadata)
    // A payload no pull sends (its text was never measured, or is over what a device takes) is
    // the length -1 and nothing after it.
    if let payload = fields.payload { text(payload) } else { integer(Int32(-1)) }
    return out
  }
}
