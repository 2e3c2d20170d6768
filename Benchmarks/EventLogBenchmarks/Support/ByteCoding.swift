import Foundation

/// Appends little-endian integers, UUIDs, dates and length-prefixed strings to a byte array: the
/// compact, hand-written layout the `lmdb-raw`, `lmdb-append` and `sqlite` baselines store.
struct ByteWriter {
  private(set) var bytes: [UInt8]

  init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// Empties the writer, keeping its storage, so one writer serves a whole batch.
  mutating func reset() { bytes.removeAll(keepingCapacity: true) }

  @inline(__always) mutating func write<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  @inline(__always) mutating func write(_ uuid: UUID) {
    withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
  }

  /// The bytes as they are.
  @inline(__always) mutating func write(bytes raw: UnsafeRawBufferPointer) {
    bytes.append(contentsOf: raw)
  }

  /// The bytes as they are.
  @inline(__always) mutating func write(contentsOf raw: some Collection<UInt8>) {
    bytes.append(contentsOf: raw)
  }

  /// `count` zero bytes (room a later step fills in place).
  mutating func write(zeros count: Int) {
    bytes.append(contentsOf: repeatElement(0, count: count))
  }

  /// Bytes after their 16-bit length (a sealed value).
  mutating func write(sized raw: [UInt8]) {
    precondition(raw.count <= Int(UInt16.max), "value too long for the benchmark layout")
    write(UInt16(raw.count))
    bytes.append(contentsOf: raw)
  }

  /// A presence byte, then the bytes after their 16-bit length when present.
  mutating func write(sized raw: [UInt8]?) {
    if let raw {
      write(UInt8(1))
      write(sized: raw)
    } else {
      write(UInt8(0))
    }
  }

  @inline(__always) mutating func write(_ date: Date) {
    write(date.timeIntervalSince1970.bitPattern)
  }

  /// A UTF-8 string after its 16-bit length.
  mutating func write(_ string: String) {
    var string = string
    string.withUTF8 { utf8 in
      precondition(utf8.count <= Int(UInt16.max), "string too long for the benchmark layout")
      write(UInt16(utf8.count))
      bytes.append(contentsOf: utf8)
    }
  }

  /// A presence byte, then the string when present.
  mutating func write(_ string: String?) {
    if let string {
      write(UInt8(1))
      write(string)
    } else {
      write(UInt8(0))
    }
  }
}

/// Reads what ``ByteWriter`` wrote; throws on truncated input instead of trapping.
struct ByteReader {
  struct Truncated: Error, CustomStringConvertible {
    var offset: Int
    var description: String { "record truncated at byte \(offset)" }
  }

  let buffer: UnsafeRawBufferPointer
  private(set) var offset = 0

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  var remaining: Int { buffer.count - offset }

  @inline(__always) private mutating func take(_ count: Int) throws(Truncated) -> Int {
    guard count <= buffer.count - offset else { throw Truncated(offset: offset) }
    defer { offset += count }
    return offset
  }

  @inline(__always) mutating func read<T: FixedWidthInteger>(_: T.Type) throws(Truncated) -> T {
    let at = try take(MemoryLayout<T>.size)
    return T(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: T.self))
  }

  @inline(__always) mutating func uuid() throws(Truncated) -> UUID {
    let at = try take(16)
    return UUID(uuid: buffer.loadUnaligned(fromByteOffset: at, as: uuid_t.self))
  }

  @inline(__always) mutating func date() throws(Truncated) -> Date {
    Date(timeIntervalSince1970: Double(bitPattern: try read(UInt64.self)))
  }

  mutating func string() throws(Truncated) -> String {
    let count = Int(try read(UInt16.self))
    let at = try take(count)
    return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[at..<(at + count)]), as: UTF8.self)
  }

  mutating func optionalString() throws(Truncated) -> String? {
    try read(UInt8.self) == 0 ? nil : try string()
  }

  /// Bytes after their 16-bit length, where they lie.
  mutating func sized() throws(Truncated) -> UnsafeRawBufferPointer {
    let count = Int(try read(UInt16.self))
    let at = try take(count)
    return UnsafeRawBufferPointer(rebasing: buffer[at..<(at + count)])
  }

  /// What the optional form of `ByteWriter.write(sized:)` wrote: `nil`, or the bytes where they lie.
  mutating func optionalSized() throws(Truncated) -> UnsafeRawBufferPointer? {
    try read(UInt8.self) == 0 ? nil : try sized()
  }

  /// The rest of the buffer.
  mutating func rest() -> UnsafeRawBufferPointer {
    defer { offset = buffer.count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset...])
  }
}
