#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The mutable state of one `BinaryEncoder` run: the output bytes and the current coding path.
///
/// It is the `Encoder` handed to `encode(to:)`; the containers it vends are structs that point back at
/// it and append to the same byte array, so nesting costs no copies. One instance lives for the duration of
/// a single top-level `encode` call and is never shared between threads.
package final class BinaryEncodingState: Encoder, BinaryEncoding {
  /// The output, starting with whatever the caller asked to append to.
  ///
  /// It lives behind a pointer rather than in a stored property because every append to a class's stored
  /// array is dynamically checked for exclusive access (a runtime call per write, about a third of the
  /// encoding time), while the pointee of an unsafe pointer is not. The pointer is allocated and
  /// initialized in `init`, deinitialized and freed in `deinit`, and never escapes this object.
  private let output: UnsafeMutablePointer<[UInt8]>
  /// The coding path of the value being encoded (a stack; containers remember their depth in it).
  package var codingPath: [any CodingKey] = []
  /// The first error raised by a non-throwing container operation; thrown when the top-level call ends.
  var deferredError: (any Error)?

  /// The caller's code for one type in this run (``BinaryEncodingHook``), if any.
  package let hook: (any BinaryEncodingHook)?
  /// The identity of the type ``hook`` encodes: compared with each value's, no cast.
  private let hookedTypeID: ObjectIdentifier?

  /// Always empty: the binary format has no options.
  package var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// A run with no hook.
  package convenience init() {
    self.init(hook: nil, for: nil)
  }

  /// A run that hands every value of type `type` to `hook` (``BinaryEncodingHook``).
  package init(hook: (any BinaryEncodingHook)?, for type: Any.Type?) {
    output = .allocate(capacity: 1)
    output.initialize(to: [])
    self.hook = hook
    hookedTypeID = type.map(ObjectIdentifier.init)
  }

  /// The hook for values of type `T`, if this run has one for that type.
  @inline(__always)
  package func hook<T>(for type: T.Type) -> (any BinaryEncodingHook)? {
    hookedTypeID == ObjectIdentifier(type) ? hook : nil
  }

  deinit {
    output.deinitialize(count: 1)
    output.deallocate()
  }

  /// The number of bytes in the output so far.
  package var byteCount: Int { output.pointee.count }

  /// Exchanges the output with `other`: used to adopt the caller's array and to hand it back.
  func swapOutput(with other: inout [UInt8]) {
    swap(&output.pointee, &other)
  }

  /// Drops output bytes from `count` on (to undo a failed encode).
  func truncateOutput(to count: Int) {
    output.pointee.removeSubrange(count...)
  }

  // MARK: - Encoder

  package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(state: self, depth: codingPath.count))
  }

  package func unkeyedContainer() -> any UnkeyedEncodingContainer {
    BinaryUnkeyedEncodingContainer(state: self, depth: codingPath.count, countOffset: reserveCount())
  }

  package func singleValueContainer() -> any SingleValueEncodingContainer {
    BinarySingleValueEncodingContainer(state: self, depth: codingPath.count)
  }

  // MARK: - Values

  /// Encodes a value of any `Encodable` type, handling the format's special cases first.
  ///
  /// `UUID`, `Date`, `Data` and `[UInt8]` get their compact forms; `Optional` gets its presence tag;
  /// `Dictionary` is rejected; everything else runs its own `encode(to:)` against this state.
  func encodeValue<T: Encodable>(_ value: T) throws {
    if !encodeSpecial(value) {
      try encodeNested(value)
    }
  }

  /// Writes `value` if it is a `UUID`, `Date`, `Data` or `[UInt8]`; returns whether it did.
  @inline(__always)
  func encodeSpecial<T>(_ value: T) -> Bool {
    if T.self == UUID.self {
      writeUUID(BinaryCodingSupport.identityCast(value, to: UUID.self))
    } else if T.self == Date.self {
      writeDate(BinaryCodingSupport.identityCast(value, to: Date.self))
    } else if T.self == Data.self {
      BinaryCodingSupport.identityCast(value, to: Data.self).withUnsafeBytes { writeLengthPrefixed($0) }
    } else if ObjectIdentifier(T.self) == BinaryCodingSupport.byteArrayTypeID {
      BinaryCodingSupport.identityCast(value, to: [UInt8].self).withUnsafeBytes { writeLengthPrefixed($0) }
    } else {
      return false
    }
    return true
  }

  /// Encodes a value that is not special: intercepted (`Optional`, `Dictionary`) or by `encode(to:)`.
  func encodeNested<T: Encodable>(_ value: T) throws {
    if let hook = hook(for: T.self) {
      // The caller's type, without the cast below (``BinaryEncodingHook``).
      try withUnsafePointer(to: value) { try hook.encode(UnsafeRawPointer($0), into: self, field: nil) }
    } else if let intercepted = value as? any BinaryEncodingInterception {
      try intercepted.interceptEncoding(into: self)
    } else {
      try value.encode(to: self)
    }
  }

  /// Records the first error of an operation that cannot throw (it is thrown by ``finish()``).
  func recordDeferred(_ error: EncodingError) {
    if deferredError == nil {
      deferredError = error
    }
  }

  /// Throws the first deferred error, if any.
  func finish() throws {
    if let deferredError {
      throw deferredError
    }
  }

  // MARK: - Writers

  @inline(__always)
  package func writeByte(_ byte: UInt8) {
    output.pointee.append(byte)
  }

  @inline(__always)
  func writeBool(_ value: Bool) {
    output.pointee.append(value ? 1 : 0)
  }

  /// Appends an unsigned LEB128 varint: seven bits per byte, least significant first, high bit = more.
  @inline(__always)
  package func writeUnsigned(_ value: UInt64) {
    if value < 0x80 {
      output.pointee.append(UInt8(truncatingIfNeeded: value))
    } else {
      writeMultiByteUnsigned(value)
    }
  }

  private func writeMultiByteUnsigned(_ value: UInt64) {
    var remaining = value
    while remaining >= 0x80 {
      output.pointee.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
      remaining >>= 7
    }
    output.pointee.append(UInt8(truncatingIfNeeded: remaining))
  }

  /// Appends a zigzag-mapped LEB128 varint (0, -1, 1, -2, … become 0, 1, 2, 3, …).
  @inline(__always)
  func writeSigned(_ value: Int64) {
    writeUnsigned(UInt64(bitPattern: (value &<< 1) ^ (value >> 63)))
  }

  @inline(__always)
  func writeFixed32(_ value: UInt32) {
    withUnsafeBytes(of: value.littleEndian) { append($0) }
  }

  @inline(__always)
  func writeFixed64(_ value: UInt64) {
    withUnsafeBytes(of: value.littleEndian) { append($0) }
  }

  package func writeString(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      writeLengthPrefixed(UnsafeRawBufferPointer(utf8))
    }
  }

  /// Appends a varint byte count followed by the bytes themselves.
  package func writeLengthPrefixed(_ raw: UnsafeRawBufferPointer) {
    writeUnsigned(UInt64(raw.count))
    append(raw)
  }

  /// Appends bytes as they are (no length).
  package func writeRaw(_ raw: UnsafeRawBufferPointer) {
    append(raw)
  }

  /// Appends `count` zero bytes (the place of a value sealed later, EventLog's `PendingSeal`).
  package func writeZeros(_ count: Int) {
    var left = count
    while left > 0 {
      let chunk = min(left, Self.zeros.count)
      Self.zeros.withUnsafeBytes { append(UnsafeRawBufferPointer(rebasing: $0[..<chunk])) }
      left -= chunk
    }
  }

  private static let zeros = [UInt8](repeating: 0, count: 256)

  /// Appends `raw` as bytes: through a typed buffer, which the array copies at once (given a raw
  /// buffer, `append(contentsOf:)` copies byte by byte: about 2 ns a byte, `perf`).
  @inline(__always)
  private func append(_ raw: UnsafeRawBufferPointer) {
    raw.withMemoryRebound(to: UInt8.self) { output.pointee.append(contentsOf: $0) }
  }

  /// Appends `count` bytes that `fill` writes: given them zeroed, in place.
  package func writeFilled(_ count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
    let start = output.pointee.count
    writeZeros(count)
    output.pointee.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
  }

  func writeUUID(_ uuid: UUID) {
    withUnsafeBytes(of: uuid.uuid) { append($0) }
  }

  func writeDate(_ date: Date) {
    writeFixed64(date.timeIntervalSinceReferenceDate.bitPattern)
  }

  // MARK: - Unkeyed element counts

  /// Appends a zero 4-byte element count and returns its offset, to be incremented as elements arrive.
  func reserveCount() -> Int {
    let offset = output.pointee.count
    writeFixed32(0)
    return offset
  }

  /// Reads the element count stored at `offset` (`0` if the output no longer reaches that far, which only
  /// happens to a container used after its top-level `encode` call returned).
  func count(at offset: Int) -> UInt32 {
    output.pointee.withUnsafeBytes { bytes in
      guard offset >= 0, bytes.count - offset >= 4 else { return 0 }
      return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
  }

  /// Increments the element count stored at `offset`; returns `false` (and defers an error) on overflow.
  func incrementCount(at offset: Int, depth: Int) -> Bool {
    let current = count(at: offset)
    guard offset >= 0, byteCount - offset >= 4 else { return false }
    guard current < UInt32.max else {
      recordDeferred(
        EncodingError.invalidValue(
          current,
          EncodingError.Context(
            codingPath: BinaryCodingSupport.codingPathPrefix(codingPath, depth: depth),
            debugDescription: "unkeyed container holds more than \(UInt32.max) elements"
          )
        )
      )
      return false
    }
    output.pointee.withUnsafeMutableBytes {
      $0.storeBytes(of: (current + 1).littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    return true
  }
}
