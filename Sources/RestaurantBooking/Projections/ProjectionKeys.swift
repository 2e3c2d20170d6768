import EventLog
import Foundation

/// The byte keys of the projection tables. LMDB sorts keys bytewise, so each order the app reads
/// in is a key layout.
enum ProjectionKeys {
  /// The longest name prefix (in UTF-8 bytes) a name-order key holds; LMDB keys are at most 511
  /// bytes. Names equal in their first 400 bytes are ordered by ID.
  static let maximumNamePrefix = 400

  /// 16 bytes: the UUID's bytes (sorts as its upper-case string does).
  @inline(__always)
  static func id(_ id: UUID) -> [UInt8] {
    ByteArray.make(count: 16) { $0.storeBytes(of: id.uuid, as: uuid_t.self) }
  }

  /// The UUID of a 16-byte key or key suffix.
  @inline(__always)
  static func uuid(fromSuffixOf key: UnsafeRawBufferPointer) -> UUID {
    precondition(key.count >= 16, "a key ending in an ID has at least 16 bytes")
    let suffix = UnsafeRawBufferPointer(rebasing: key[(key.count - 16)...])
    return UUID(uuid: suffix.loadUnaligned(as: uuid_t.self))
  }

  /// Name order: the lower-cased name's UTF-8 bytes (at most ``maximumNamePrefix``), `0x00`,
  /// then the ID's 16 bytes, so names sort case-insensitively and ties by ID.
  static func name(_ name: String, id: UUID) -> [UInt8] {
    var name = name
    let ascii = name.withUTF8 { utf8 -> [UInt8]? in
      // ASCII names (the usual case): `lowercased()` maps A–Z to a–z and nothing else, so the key
      // is made byte by byte, without a lower-cased `String`.
      guard utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
      let prefix = min(utf8.count, maximumNamePrefix)
      return ByteArray.make(count: prefix + 17) { raw in
        for index in 0..<prefix {
          let byte = utf8[index]
          raw[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
        }
        raw[prefix] = 0
        raw.storeBytes(of: id.uuid, toByteOffset: prefix + 1, as: uuid_t.self)
      }
    }
    if let ascii { return ascii }
    var key = Array(name.lowercased().utf8.prefix(maximumNamePrefix))
    key.reserveCapacity(key.count + 17)
    key.append(0)
    withUnsafeBytes(of: id.uuid) { key.append(contentsOf: $0) }
    return key
  }

  /// Date order: the date as 8 big-endian bytes that sort as the dates do, then the ID's 16 bytes.
  static func date(_ date: Date, id: UUID) -> [UInt8] {
    withUnsafeBytes(of: dateKey(date, id: id)) { ByteArray.copy($0) }
  }

  /// The bytes of a date-order key as a value: `withUnsafeBytes(of:)` gives the 24 key bytes
  /// without an array (the sortable date, big-endian, then the ID).
  typealias DateKey = (sortableDate: UInt64, id: uuid_t)

  /// The date-order key of `date` and `id` (see ``date(_:id:)``).
  static func dateKey(_ date: Date, id: UUID) -> DateKey { dateKey(date, id: id.uuid) }

  /// The date-order key of `date` and the ID bytes `id`.
  static func dateKey(_ date: Date, id: uuid_t) -> DateKey {
    let bits = date.timeIntervalSince1970.bitPattern
    // Negative doubles: flip every bit; positive ones: flip the sign bit. Then bytes sort as values.
    let sortable = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
    return (sortable.bigEndian, id)
  }

  /// 8 bytes, big-endian.
  static func uint64(_ value: UInt64) -> [UInt8] {
    ByteArray.make(count: 8) { $0.storeBytes(of: value.bigEndian, as: UInt64.self) }
  }

  /// The value of an 8-byte big-endian key or value.
  static func uint64(from bytes: [UInt8]) -> UInt64? {
    guard bytes.count == 8 else { return nil }
    return bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }
}
