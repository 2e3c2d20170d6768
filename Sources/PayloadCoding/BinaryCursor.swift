#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A read position in a `BinaryEncoder` encoding and the primitive reads of its format.
///
/// Shared by ``BinaryDecodingState`` (the `Codable` path) and ``BinaryReader`` (the fast path),
/// so both check the same bounds and reject the same malformed input. Every read checks the
/// remaining length first, and declared lengths are checked against the remaining bytes before
/// anything is allocated. A value type: the fast path reads without allocating a decoder.
package struct BinaryCursor {
  /// The input.
  var buffer: UnsafeRawBufferPointer
  /// The offset of the next unread byte.
  var offset = 0

  init(buffer: UnsafeRawBufferPointer, offset: Int = 0) {
    self.buffer = buffer
    self.offset = offset
  }

  @inline(__always)
  private func endOfData(at offset: Int, _ subject: StaticString) -> BinaryReadFailure {
    BinaryReadFailure(offset: offset, reason: .endOfData, subject: subject)
  }

  @inline(__always)
  mutating func readBool() throws(BinaryReadFailure) -> Bool {
    try readZeroOrOne("Bool", invalid: BinaryReadFailure.Reason.invalidBool)
  }

  /// Reads an optional's tag: `true` if a value follows, `false` for `nil`.
  @inline(__always)
  mutating func readPresence(_ subject: StaticString) throws(BinaryReadFailure) -> Bool {
    try readZeroOrOne(subject, invalid: BinaryReadFailure.Reason.invalidOptionalTag)
  }

  /// Reads one byte that must be 0 (`false`) or 1 (`true`); any other is `invalid(byte)`.
  @inline(__always)
  private mutating func readZeroOrOne(
    _ subject: StaticString, invalid: (UInt8) -> BinaryReadFailure.Reason
  ) throws(BinaryReadFailure) -> Bool {
    let start = offset
    guard start < buffer.count else { throw endOfData(at: start, subject) }
    let byte = buffer[start]
    guard byte <= 1 else { throw BinaryReadFailure(offset: start, reason: invalid(byte), subject: subject) }
    offset = start &+ 1
    return byte == 1
  }

  /// Reads an unsigned LEB128 varint of at most 10 bytes, rejecting over-long and overflowing encodings.
  @inline(__always)
  mutating func readVarint(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    let start = offset
    guard start < buffer.count else { throw endOfData(at: start, subject) }
    let first = buffer[start]
    if first < 0x80 {
      offset = start &+ 1
      return UInt64(first)
    }
    return try readMultiByteVarint(subject)
  }

  private mutating func readMultiByteVarint(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    let start = offset
    var index = start
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      guard index < buffer.count else { throw endOfData(at: index, subject) }
      let byte = buffer[index]
      index &+= 1
      if shift == 63 {
        // The tenth byte holds bit 63 only.
        if byte >= 0x80 {
          throw BinaryReadFailure(offset: start, reason: .varintTooLong, subject: subject)
        }
        if byte > 1 {
          throw BinaryReadFailure(offset: start, reason: .varintOverflow, subject: subject)
        }
      }
      result |= UInt64(byte & 0x7F) &<< shift
      if byte < 0x80 {
        // A zero final group means a shorter encoding existed; the format only allows the shortest.
        guard byte != 0 else {
          throw BinaryReadFailure(offset: start, reason: .nonCanonicalVarint, subject: subject)
        }
        offset = index
        return result
      }
      shift &+= 7
    }
  }

  /// Reads an unsigned varint into a fixed-width unsigned integer type, rejecting values that do not fit.
  @inline(__always)
  mutating func readUnsigned<T: FixedWidthInteger & UnsignedInteger>(
    _ type: T.Type, _ subject: StaticString
  ) throws(BinaryReadFailure) -> T {
    let start = offset
    let raw = try readVarint(subject)
    guard let value = T(exactly: raw) else {
      throw BinaryReadFailure(offset: start, reason: .valueOutOfRange(raw), subject: subject)
    }
    return value
  }

  /// Reads a zigzag varint into a fixed-width signed integer type, rejecting values that do not fit.
  @inline(__always)
  mutating func readSigned<T: FixedWidthInteger & SignedInteger>(
    _ type: T.Type, _ subject: StaticString
  ) throws(BinaryReadFailure) -> T {
    let start = offset
    let raw = try readVarint(subject)
    let decoded = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    guard let value = T(exactly: decoded) else {
      throw BinaryReadFailure(offset: start, reason: .valueOutOfRange(raw), subject: subject)
    }
    return value
  }

  @inline(__always)
  mutating func readFixed32(_ subject: StaticString) throws(BinaryReadFailure) -> UInt32 {
    let start = offset
    guard buffer.count &- start >= 4 else { throw endOfData(at: start, subject) }
    offset = start &+ 4
    return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt32.self))
  }

  @inline(__always)
  mutating func readFixed64(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    let start = offset
    guard buffer.count &- start >= 8 else { throw endOfData(at: start, subject) }
    offset = start &+ 8
    return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
  }

  @inline(__always)
  mutating func readFloat() throws(BinaryReadFailure) -> Float {
    Float(bitPattern: try readFixed32("Float"))
  }

  @inline(__always)
  mutating func readDouble() throws(BinaryReadFailure) -> Double {
    Double(bitPattern: try readFixed64("Double"))
  }

  /// Reads a varint byte count and returns the range of that many following bytes, consuming them.
  @inline(__always)
  private mutating func readLengthPrefixed(_ subject: StaticString) throws(BinaryReadFailure) -> Range<Int> {
    let start = offset
    let length = try readVarint(subject)
    let available = buffer.count &- offset
    guard length <= UInt64(available) else {
      throw BinaryReadFailure(
        offset: start, reason: .lengthExceedsData(length, available: available), subject: subject)
    }
    let lower = offset
    let upper = lower &+ Int(length)
    offset = upper
    return lower..<upper
  }

  mutating func readString() throws(BinaryReadFailure) -> String {
    let range = try readLengthPrefixed("String")
    guard let string = UTF8Validation.string(UnsafeRawBufferPointer(rebasing: buffer[range])) else {
      throw BinaryReadFailure(offset: range.lowerBound, reason: .invalidUTF8, subject: "String")
    }
    return string
  }

  /// Reads a string's UTF-8 bytes, checked to be well-formed, without creating a `String`; they
  /// stay valid as long as the buffer does.
  mutating func readStringBytes() throws(BinaryReadFailure) -> UnsafeRawBufferPointer {
    let range = try readLengthPrefixed("String")
    let utf8 = UnsafeRawBufferPointer(rebasing: buffer[range])
    guard UTF8Validation.isValid(utf8) else {
      throw BinaryReadFailure(offset: range.lowerBound, reason: .invalidUTF8, subject: "String")
    }
    return utf8
  }

  /// Reads a varint byte count and returns where the bytes are (not copied).
  mutating func readByteArrayRange() throws(BinaryReadFailure) -> Range<Int> {
    try readLengthPrefixed("Data")
  }

  mutating func readByteArray() throws(BinaryReadFailure) -> [UInt8] {
    let range = try readLengthPrefixed("[UInt8]")
    return [UInt8](UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  mutating func readData() throws(BinaryReadFailure) -> Data {
    let range = try readLengthPrefixed("Data")
    return Data(UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  /// `count` raw bytes (a fixed-size field such as a UUID's), inside the buffer.
  mutating func readFixedBytes(
    _ count: Int, _ what: StaticString
  ) throws(BinaryReadFailure) -> UnsafeRawBufferPointer {
    let start = offset
    guard buffer.count &- start >= count else { throw endOfData(at: start, what) }
    offset = start &+ count
    return UnsafeRawBufferPointer(rebasing: buffer[start..<(start &+ count)])
  }

  mutating func readUUID() throws(BinaryReadFailure) -> UUID {
    let start = offset
    guard buffer.count &- start >= 16 else { throw endOfData(at: start, "UUID") }
    offset = start &+ 16
    return UUID(uuid: buffer.loadUnaligned(fromByteOffset: start, as: uuid_t.self))
  }

  mutating func readDate() throws(BinaryReadFailure) -> Date {
    Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed64("Date")))
  }

  /// Reads the 4-byte element count of an unkeyed container, rejecting counts larger than the remaining
  /// bytes (every element occupies at least one byte).
  mutating func readElementCount() throws(BinaryReadFailure) -> Int {
    let start = offset
    let count = try readFixed32("array element count")
    let available = buffer.count &- offset
    guard UInt64(count) <= UInt64(available) else {
      throw BinaryReadFailure(
        offset: start, reason: .lengthExceedsData(UInt64(count), available: available),
        subject: "array element count")
    }
    return Int(count)
  }
}
