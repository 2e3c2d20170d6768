#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The mutable state of one ``BinaryDecoder`` run: the input buffer, the read offset and the coding path.
///
/// It is the `Decoder` handed to `init(from:)`; the containers it vends are structs that point back at it
/// and read from the same offset. Every read checks the remaining length first, so no input can make it
/// read out of bounds, and declared lengths are checked against the remaining bytes before anything is
/// allocated. One instance lives for the duration of a single top-level `decode` call and is never shared
/// between threads.
final class BinaryDecodingState: Decoder {
  /// The deepest nesting of values decoded through `init(from:)` that is accepted; deeper input throws
  /// instead of overflowing the stack.
  static let maximumDepth = 128

  // `buffer` and `offset` are read and written by every primitive read; a class's stored `var`
  // otherwise pays a dynamic exclusivity check (`swift_beginAccess`) on each access, which was most
  // of the cost of decoding a payload. Unchecked is safe: a state belongs to one decode call on one
  // thread, and no access to these two properties overlaps another (none is held across a call).

  /// The input; emptied when the top-level call returns, so an escaped decoder cannot read freed memory.
  @exclusivity(unchecked) private(set) var buffer: UnsafeRawBufferPointer
  /// The offset of the next unread byte.
  @exclusivity(unchecked) var offset = 0
  /// How many `init(from:)` calls are in progress.
  var nesting = 0
  /// The coding path of the value being decoded (a stack; containers remember their depth in it).
  var codingPath: [any CodingKey] = []
  /// A failure detected by the non-throwing `decodeNil()` of a single-value container; it replaces the
  /// (less precise) error of the read that follows it, or is thrown when the top-level call ends.
  var deferredFailure: BinaryReadFailure?

  /// Always empty: the binary format has no options.
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(buffer: UnsafeRawBufferPointer) {
    self.buffer = buffer
  }

  // MARK: - Decoder

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(state: self, depth: codingPath.count))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try makeUnkeyedContainer(depth: codingPath.count)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    BinarySingleValueDecodingContainer(state: self, depth: codingPath.count)
  }

  /// Reads an element count and returns an unkeyed container positioned at the first element.
  func makeUnkeyedContainer(depth: Int) throws -> BinaryUnkeyedDecodingContainer {
    do throws(BinaryReadFailure) {
      let count = try readElementCount()
      return BinaryUnkeyedDecodingContainer(state: self, depth: depth, elementCount: count)
    } catch {
      throw decodingError(error, depth: depth)
    }
  }

  // MARK: - Values

  /// Whether values of type `T` are read by the state itself (`UUID`, `Date`, `Data`, `[UInt8]`) rather
  /// than by their `init(from:)`.
  @inline(__always)
  static func isSpecial<T>(_ type: T.Type) -> Bool {
    T.self == UUID.self || T.self == Date.self || T.self == Data.self
      || ObjectIdentifier(T.self) == BinaryCodingSupport.byteArrayTypeID
  }

  /// Reads a value of a type for which ``isSpecial(_:)`` is `true`.
  func readSpecial<T>(_ type: T.Type) throws(BinaryReadFailure) -> T {
    if T.self == UUID.self {
      return BinaryCodingSupport.identityCast(try readUUID(), to: T.self)
    } else if T.self == Date.self {
      return BinaryCodingSupport.identityCast(try readDate(), to: T.self)
    } else if T.self == Data.self {
      return BinaryCodingSupport.identityCast(try readData(), to: T.self)
    } else if ObjectIdentifier(T.self) == BinaryCodingSupport.byteArrayTypeID {
      return BinaryCodingSupport.identityCast(try readByteArray(), to: T.self)
    }
    preconditionFailure("readSpecial called for \(T.self), which is not a special type")
  }

  /// Decodes a value of any `Decodable` type, handling the format's special types first.
  ///
  /// `UUID`, `Date`, `Data` and `[UInt8]` are read in their compact forms; everything else runs its own
  /// `init(from:)` against this state (`Optional` reads its tag through `decodeNil()`).
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if Self.isSpecial(T.self) {
      do throws(BinaryReadFailure) {
        return try readSpecial(T.self)
      } catch {
        throw decodingError(error, depth: codingPath.count)
      }
    }
    return try decodeNested(T.self)
  }

  /// Runs `T(from:)` against this state, refusing to nest deeper than ``maximumDepth``.
  func decodeNested<T: Decodable>(_ type: T.Type) throws -> T {
    guard nesting < Self.maximumDepth else {
      let failure = BinaryReadFailure(
        offset: offset, reason: .tooDeep(Self.maximumDepth), subject: "nested value")
      throw decodingError(failure, depth: codingPath.count)
    }
    nesting += 1
    defer { nesting -= 1 }
    return try T(from: self)
  }

  /// Ends a top-level decode: throws a deferred failure or complains about trailing bytes.
  func finish() throws {
    if let deferredFailure {
      throw decodingError(deferredFailure, depth: 0)
    }
    guard offset == buffer.count else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: [],
          debugDescription: "\(buffer.count - offset) unexpected trailing bytes at byte \(offset) "
            + "after the top-level value"
        )
      )
    }
  }

  /// Forgets the input buffer, which is only valid during the top-level call.
  func invalidate() {
    buffer = UnsafeRawBufferPointer(start: nil, count: 0)
    offset = 0
  }

  // MARK: - Errors

  /// Turns a read failure into a `DecodingError` whose coding path is the first `depth` entries of the
  /// current path, plus `key` if given.
  func decodingError(_ failure: BinaryReadFailure, depth: Int, key: (any CodingKey)? = nil) -> DecodingError {
    var path = BinaryCodingSupport.codingPathPrefix(codingPath, depth: depth)
    if let key {
      path.append(key)
    }
    // A deferred failure (a bad optional tag seen by `decodeNil()`) is the root cause of what follows.
    let cause = deferredFailure ?? failure
    return .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: cause.message))
  }

  /// Records a failure seen by an operation that cannot throw and makes every later read fail.
  func recordDeferred(_ failure: BinaryReadFailure) {
    if deferredFailure == nil {
      deferredFailure = failure
    }
    offset = buffer.count
  }

  // MARK: - Readers

  @inline(__always)
  private func endOfData(at offset: Int, _ subject: StaticString) -> BinaryReadFailure {
    BinaryReadFailure(offset: offset, reason: .endOfData, subject: subject)
  }

  @inline(__always)
  func readBool() throws(BinaryReadFailure) -> Bool {
    let start = offset
    guard start < buffer.count else { throw endOfData(at: start, "Bool") }
    let byte = buffer[start]
    guard byte <= 1 else {
      throw BinaryReadFailure(offset: start, reason: .invalidBool(byte), subject: "Bool")
    }
    offset = start &+ 1
    return byte == 1
  }

  /// Reads an optional's tag: `true` if a value follows, `false` for `nil`.
  @inline(__always)
  func readPresence(_ subject: StaticString) throws(BinaryReadFailure) -> Bool {
    let start = offset
    guard start < buffer.count else { throw endOfData(at: start, subject) }
    let byte = buffer[start]
    guard byte <= 1 else {
      throw BinaryReadFailure(offset: start, reason: .invalidOptionalTag(byte), subject: subject)
    }
    offset = start &+ 1
    return byte == 1
  }

  /// Reads an unsigned LEB128 varint of at most 10 bytes, rejecting over-long and overflowing encodings.
  @inline(__always)
  func readVarint(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    let start = offset
    guard start < buffer.count else { throw endOfData(at: start, subject) }
    let first = buffer[start]
    if first < 0x80 {
      offset = start &+ 1
      return UInt64(first)
    }
    return try readMultiByteVarint(subject)
  }

  private func readMultiByteVarint(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
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
  func readUnsigned<T: FixedWidthInteger & UnsignedInteger>(
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
  func readSigned<T: FixedWidthInteger & SignedInteger>(
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
  func readFixed32(_ subject: StaticString) throws(BinaryReadFailure) -> UInt32 {
    let start = offset
    guard buffer.count &- start >= 4 else { throw endOfData(at: start, subject) }
    offset = start &+ 4
    return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt32.self))
  }

  @inline(__always)
  func readFixed64(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    let start = offset
    guard buffer.count &- start >= 8 else { throw endOfData(at: start, subject) }
    offset = start &+ 8
    return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
  }

  @inline(__always)
  func readFloat() throws(BinaryReadFailure) -> Float {
    Float(bitPattern: try readFixed32("Float"))
  }

  @inline(__always)
  func readDouble() throws(BinaryReadFailure) -> Double {
    Double(bitPattern: try readFixed64("Double"))
  }

  /// Reads a varint byte count and returns the range of that many following bytes, consuming them.
  @inline(__always)
  private func readLengthPrefixed(_ subject: StaticString) throws(BinaryReadFailure) -> Range<Int> {
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

  func readString() throws(BinaryReadFailure) -> String {
    let range = try readLengthPrefixed("String")
    if range.isEmpty {
      return ""
    }
    let utf8 = UnsafeRawBufferPointer(rebasing: buffer[range])
    var string = utf8.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
    // `String(decoding:as:)` replaces ill-formed sequences with U+FFFD instead of failing; a replacement
    // always changes the bytes, so comparing them detects invalid input without a second validation pass.
    guard string.withUTF8({ BinaryCodingSupport.bytesEqual(UnsafeRawBufferPointer($0), utf8) }) else {
      throw BinaryReadFailure(offset: range.lowerBound, reason: .invalidUTF8, subject: "String")
    }
    return string
  }

  func readByteArray() throws(BinaryReadFailure) -> [UInt8] {
    let range = try readLengthPrefixed("[UInt8]")
    return [UInt8](UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  func readData() throws(BinaryReadFailure) -> Data {
    let range = try readLengthPrefixed("Data")
    return Data(UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  func readUUID() throws(BinaryReadFailure) -> UUID {
    let start = offset
    guard buffer.count &- start >= 16 else { throw endOfData(at: start, "UUID") }
    offset = start &+ 16
    return UUID(uuid: buffer.loadUnaligned(fromByteOffset: start, as: uuid_t.self))
  }

  func readDate() throws(BinaryReadFailure) -> Date {
    Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed64("Date")))
  }

  /// Reads the 4-byte element count of an unkeyed container, rejecting counts larger than the remaining
  /// bytes (every element occupies at least one byte).
  func readElementCount() throws(BinaryReadFailure) -> Int {
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
