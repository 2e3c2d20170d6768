#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The mutable state of one `BinaryDecoder` run: the input buffer, the read offset and the coding path.
///
/// It is the `Decoder` handed to `init(from:)`; the containers it vends are structs that point back at it
/// and read from the same offset. Every read checks the remaining length first, so no input can make it
/// read out of bounds, and declared lengths are checked against the remaining bytes before anything is
/// allocated. One instance lives for the duration of a single top-level `decode` call and is never shared
/// between threads.
final class BinaryDecodingState: Decoder, BinaryDecoding {
  /// The deepest nesting of values decoded through `init(from:)` that is accepted; deeper input throws
  /// instead of overflowing the stack.
  static let maximumDepth = 128

  // The cursor is read and written by every primitive read; a class's stored `var`
  // otherwise pays a dynamic exclusivity check (`swift_beginAccess`) on each access, which was most
  // of the cost of decoding a payload. Unchecked is safe: a state belongs to one decode call on one
  // thread, and no access to the cursor overlaps another (none is held across a call).

  /// The input and the read offset; the input is emptied when the top-level call returns, so an
  /// escaped decoder cannot read freed memory.
  @exclusivity(unchecked) var cursor: BinaryCursor
  /// The input.
  var buffer: UnsafeRawBufferPointer { cursor.buffer }
  /// The offset of the next unread byte.
  var offset: Int {
    get { cursor.offset }
    set { cursor.offset = newValue }
  }
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
    cursor = BinaryCursor(buffer: buffer)
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
    cursor = BinaryCursor(buffer: UnsafeRawBufferPointer(start: nil, count: 0))
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

  // MARK: - Readers (the cursor's)

  @inline(__always) func readBool() throws(BinaryReadFailure) -> Bool { try cursor.readBool() }

  @inline(__always) func readPresence(_ subject: StaticString) throws(BinaryReadFailure) -> Bool {
    try cursor.readPresence(subject)
  }

  @inline(__always) func readVarint(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    try cursor.readVarint(subject)
  }

  @inline(__always) func readUnsigned<T: FixedWidthInteger & UnsignedInteger>(
    _ type: T.Type, _ subject: StaticString
  ) throws(BinaryReadFailure) -> T { try cursor.readUnsigned(type, subject) }

  @inline(__always) func readSigned<T: FixedWidthInteger & SignedInteger>(
    _ type: T.Type, _ subject: StaticString
  ) throws(BinaryReadFailure) -> T { try cursor.readSigned(type, subject) }

  @inline(__always) func readFixed32(_ subject: StaticString) throws(BinaryReadFailure) -> UInt32 {
    try cursor.readFixed32(subject)
  }

  @inline(__always) func readFixed64(_ subject: StaticString) throws(BinaryReadFailure) -> UInt64 {
    try cursor.readFixed64(subject)
  }

  @inline(__always) func readFloat() throws(BinaryReadFailure) -> Float { try cursor.readFloat() }

  @inline(__always) func readDouble() throws(BinaryReadFailure) -> Double { try cursor.readDouble() }

  @inline(__always) func readString() throws(BinaryReadFailure) -> String { try cursor.readString() }

  @inline(__always) func readByteArray() throws(BinaryReadFailure) -> [UInt8] { try cursor.readByteArray() }

  @inline(__always) func readData() throws(BinaryReadFailure) -> Data { try cursor.readData() }

  @inline(__always) func readUUID() throws(BinaryReadFailure) -> UUID { try cursor.readUUID() }

  @inline(__always) func readDate() throws(BinaryReadFailure) -> Date { try cursor.readDate() }

  @inline(__always) func readElementCount() throws(BinaryReadFailure) -> Int { try cursor.readElementCount() }
}
