import Foundation

/// A key of a table or an index: bytes that sort (bytewise, as LMDB sorts keys) as the values
/// they encode do. Concatenate parts for a compound key: `TableKey(.date(day), .uuid(id))`.
///
/// | part | bytes | order |
/// |---|---|---|
/// | ``uuid(_:)`` | the 16 bytes | as `uuidString` (upper or lower case alike) |
/// | ``date(_:)`` | 8: the seconds since 1970 as IEEE 754 bits, sign-flipped, big-endian | by time |
/// | ``int(_:)`` | 8: two's complement with the sign bit flipped, big-endian | by value |
/// | ``uint(_:)`` | 8, big-endian | by value |
/// | ``text(_:)`` | the UTF-8 (at most ``maximumTextBytes``), then `0x00` | bytewise, a prefix first |
/// | ``caseInsensitive(_:)`` | `lowercased()`'s UTF-8 (at most ``maximumTextBytes``), then `0x00` | ignoring case |
///
/// A text part ends in `0x00` so that in a compound key "ab" sorts before "abc" whatever
/// follows; ``textPrefix(_:)`` and ``caseInsensitivePrefix(_:)`` leave it out, to match every text
/// that starts so. Texts equal in their first ``maximumTextBytes`` bytes are ordered by what
/// follows them in the key (the primary key, in an index). A key is at most
/// ``maximumLength`` bytes (LMDB's limit).
public struct TableKey: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The key's bytes.
  public let bytes: [UInt8]

  /// The longest key LMDB stores.
  public static let maximumLength = 511
  /// The most UTF-8 bytes a text part keeps.
  public static let maximumTextBytes = 400

  /// A key of the given bytes.
  public init(bytes: [UInt8]) { self.bytes = bytes }

  /// The parts one after the other: a compound key.
  public init(_ parts: TableKey...) { bytes = parts.flatMap(\.bytes) }

  /// A key written by `write`.
  init(writing write: (inout KeyBuilder) -> Void) {
    bytes = KeyBuilder.withKey(write) { Array($0) }
  }

  /// A UUID's 16 bytes.
  public static func uuid(_ value: UUID) -> TableKey { TableKey { $0.uuid(value) } }
  /// A date, in time order.
  public static func date(_ value: Date) -> TableKey { TableKey { $0.date(value) } }
  /// A signed integer, in numeric order.
  public static func int(_ value: Int64) -> TableKey { TableKey { $0.int(value) } }
  /// An unsigned integer, in numeric order.
  public static func uint(_ value: UInt64) -> TableKey { TableKey { $0.uint(value) } }
  /// A text, in bytewise order of its UTF-8.
  public static func text(_ value: String) -> TableKey { TableKey { $0.text(value) } }
  /// A text, ignoring case.
  public static func caseInsensitive(_ value: String) -> TableKey { TableKey { $0.caseInsensitive(value) } }
  /// The start of a ``text(_:)`` part: for prefix reads.
  public static func textPrefix(_ value: String) -> TableKey {
    TableKey { $0.text(value, terminated: false) }
  }
  /// The start of a ``caseInsensitive(_:)`` part: for prefix reads.
  public static func caseInsensitivePrefix(_ value: String) -> TableKey {
    TableKey { $0.caseInsensitive(value, terminated: false) }
  }

  /// Orders keys as LMDB stores them: their bytes, compared lexicographically.
  public static func < (lhs: TableKey, rhs: TableKey) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }

  /// The bytes in hexadecimal: `0x0011…`.
  public var description: String {
    "0x" + Hex.string(bytes)
  }

  /// The 64 bits a ``date(_:)`` part holds, big-endian: the seconds since 1970 as a `Double`'s bits,
  /// every bit flipped for a negative value and the sign bit for a positive one, so that the bytes
  /// sort as the dates do. For a key written by hand in scratch memory (a hook's fast path).
  @inlinable
  public static func sortableBits(of date: Date) -> UInt64 {
    let bits = date.timeIntervalSince1970.bitPattern
    return (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
  }

  /// The date of a ``date(_:)`` part's 8 bytes.
  public static func date(sortable bytes: UnsafeRawBufferPointer) -> Date {
    let sortable = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    let bits = (sortable & (1 << 63)) != 0 ? sortable & ~(1 << 63) : ~sortable
    return Date(timeIntervalSince1970: Double(bitPattern: bits))
  }

  /// The UUID of a key's last 16 bytes (an index entry ending in a UUID primary key).
  public static func uuid(suffixOf key: UnsafeRawBufferPointer) -> UUID? {
    guard key.count >= 16 else { return nil }
    return UUID(
      uuid: UnsafeRawBufferPointer(rebasing: key[(key.count - 16)...]).loadUnaligned(as: uuid_t.self))
  }
}

extension TableKey {
  /// Writes a key's parts into scratch memory, in ``TableKey``'s encodings: what the table engine,
  /// ``TableKey/Column``'s custom columns and index extractors write keys with, without an array.
  ///
  /// A key longer than ``TableKey/maximumLength`` is not written past its end: the builder notes
  /// that it ``overflowed`` and the engine refuses the key.
  public struct KeyBuilder: ~Copyable {
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline var length = 0
    @usableFromInline var exceeded = false
    /// The number of bytes written.
    @inlinable public var count: Int { length }
    /// Whether a part did not fit in ``TableKey/maximumLength`` bytes.
    @inlinable public var overflowed: Bool { exceeded }

    @usableFromInline
    init(_ scratch: UnsafeMutableRawBufferPointer) {
      precondition(scratch.count >= TableKey.maximumLength, "a key needs \(TableKey.maximumLength) bytes")
      // A buffer of 511 bytes or more always has a base address.
      base = scratch.baseAddress ?? UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    }

    /// Calls `write` with a builder, then `use` with the key's bytes (valid only during `use`).
    @inlinable
    static func withKey<R>(
      _ write: (inout KeyBuilder) throws -> Void, _ use: (UnsafeRawBufferPointer) throws -> R
    )
      rethrows -> R
    {
      try withUnsafeTemporaryAllocation(byteCount: TableKey.maximumLength, alignment: 8) { scratch in
        var builder = KeyBuilder(scratch)
        try write(&builder)
        return try use(builder.bytes)
      }
    }

    /// The bytes written so far, valid while the builder's scratch memory is.
    @usableFromInline var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: length) }

    /// Forgets the bytes after the first `count`.
    mutating func truncate(to count: Int) {
      length = min(length, count)
    }

    /// Where `byteCount` more bytes go, or `nil` when they do not fit.
    @inlinable @inline(__always)
    mutating func reserve(_ byteCount: Int) -> UnsafeMutableRawPointer? {
      guard length + byteCount <= TableKey.maximumLength else {
        exceeded = true
        return nil
      }
      defer { length += byteCount }
      return base + length
    }

    /// `value`'s bytes as they are (a UUID's 16 raw bytes, an encoded key part).
    @inlinable
    public mutating func bytes(_ value: UnsafeRawBufferPointer) {
      guard let source = value.baseAddress, !value.isEmpty, let target = reserve(value.count) else { return }
      target.copyMemory(from: source, byteCount: value.count)
    }

    /// A ``TableKey/uuid(_:)`` part.
    @inlinable
    public mutating func uuid(_ value: UUID) {
      reserve(16)?.storeBytes(of: value.uuid, toByteOffset: 0, as: uuid_t.self)
    }

    /// A ``TableKey/uint(_:)`` part.
    @inlinable
    public mutating func uint(_ value: UInt64) {
      reserve(8)?.storeBytes(of: value.bigEndian, toByteOffset: 0, as: UInt64.self)
    }

    /// A ``TableKey/int(_:)`` part.
    @inlinable
    public mutating func int(_ value: Int64) { uint(UInt64(bitPattern: value) ^ (1 << 63)) }

    /// A ``TableKey/date(_:)`` part.
    @inlinable
    public mutating func date(_ value: Date) { uint(TableKey.sortableBits(of: value)) }

    /// A ``TableKey/text(_:)`` part (without its final `0x00` when not `terminated`).
    public mutating func text(_ value: String, terminated: Bool = true) {
      var value = value
      value.withUTF8 { utf8 in
        bytes(
          UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8).prefix(TableKey.maximumTextBytes)))
      }
      if terminated { reserve(1)?.storeBytes(of: 0, as: UInt8.self) }
    }

    /// A ``TableKey/caseInsensitive(_:)`` part (without its final `0x00` when not `terminated`).
    public mutating func caseInsensitive(_ value: String, terminated: Bool = true) {
      var value = value
      let ascii = value.withUTF8 { utf8 -> Bool in
        // ASCII text (the usual case): `lowercased()` maps A–Z to a–z and nothing else, so the key
        // is made byte by byte, without a lower-cased `String`.
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        let length = min(utf8.count, TableKey.maximumTextBytes)
        guard let target = reserve(length) else { return true }
        for index in 0..<length {
          let byte = utf8[index]
          target.storeBytes(of: byte &- 0x41 < 26 ? byte | 0x20 : byte, toByteOffset: index, as: UInt8.self)
        }
        return true
      }
      if !ascii {
        var lowered = value.lowercased()
        lowered.withUTF8 { utf8 in
          bytes(
            UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8).prefix(TableKey.maximumTextBytes)))
        }
      }
      if terminated { reserve(1)?.storeBytes(of: 0, as: UInt8.self) }
    }
  }
}
