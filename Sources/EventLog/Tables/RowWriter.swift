import Foundation

/// Writes one table row in the package's compact, deterministic layout: fixed-width little-endian
/// numbers, raw UUID bytes, and strings as a LEB128 length then UTF-8.
///
/// A ``TableRow`` writes itself field by field (`writer.uuid(id)`, `writer.string(name)`); the
/// writer works out the size as it goes, growing its buffer when a row outgrows it (the first
/// 1 KiB is scratch memory on the stack, so a small row costs no allocation). The same row always
/// has the same bytes, which replay and `verify` compare. ``RowReader`` reads the fields back in
/// the same order.
///
/// A writer exists only inside ``withRow(_:_:)`` (and the table engine's own calls) and cannot be
/// copied.
public struct RowWriter: ~Copyable {
  @usableFromInline var base: UnsafeMutableRawPointer
  @usableFromInline var capacity: Int
  /// Whether `base` was allocated by the writer (after growing), so it frees it.
  @usableFromInline var ownsBuffer = false
  @usableFromInline var written = 0
  /// The number of bytes written so far.
  @inlinable public var count: Int { written }

  /// A writer into `scratch`, which must outlive it.
  @usableFromInline
  init(scratch: UnsafeMutableRawBufferPointer) {
    // A zero-capacity scratch still has a base address to grow from.
    base = scratch.baseAddress ?? UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
    capacity = scratch.baseAddress == nil ? 16 : scratch.count
    ownsBuffer = scratch.baseAddress == nil
  }

  deinit {
    if ownsBuffer { base.deallocate() }
  }

  /// The size of the scratch memory a writer starts with.
  @usableFromInline static let scratchSize = 1_024

  /// Calls `write` with a writer, then `use` with the bytes it wrote (valid only during `use`).
  /// - Throws: what `write` or `use` throws.
  @inlinable
  public static func withRow<R>(
    _ write: (inout RowWriter) throws -> Void, _ use: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R {
    try withUnsafeTemporaryAllocation(byteCount: scratchSize, alignment: 8) { scratch in
      var writer = RowWriter(scratch: scratch)
      try write(&writer)
      return try writer.withBytes(use)
    }
  }

  /// The bytes written so far, valid only during `body` (the next write may move them).
  @inlinable
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try body(UnsafeRawBufferPointer(start: base, count: written))
  }

  /// Forgets what was written, keeping the buffer: for writing another row.
  @inlinable
  public mutating func removeAll() { written = 0 }

  /// Room for `byteCount` more bytes; returns where they go.
  @inlinable @inline(__always)
  mutating func reserve(_ byteCount: Int) -> UnsafeMutableRawPointer {
    if _slowPath(written + byteCount > capacity) { grow(toFit: written + byteCount) }
    defer { written += byteCount }
    return base + written
  }

  @usableFromInline
  mutating func grow(toFit needed: Int) {
    var newCapacity = max(capacity * 2, 64)
    while newCapacity < needed { newCapacity *= 2 }
    let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
    grown.copyMemory(from: base, byteCount: written)
    if ownsBuffer { base.deallocate() }
    base = grown
    capacity = newCapacity
    ownsBuffer = true
  }

  /// One byte (a row's format byte, a tag).
  @inlinable
  public mutating func byte(_ value: UInt8) { reserve(1).storeBytes(of: value, as: UInt8.self) }

  /// `true` as 1, `false` as 0.
  @inlinable
  public mutating func bool(_ value: Bool) { byte(value ? 1 : 0) }

  /// 8 bytes, little-endian.
  @inlinable
  public mutating func uint64(_ value: UInt64) {
    reserve(8).storeBytes(of: value.littleEndian, toByteOffset: 0, as: UInt64.self)
  }

  /// 8 bytes, little-endian two's complement.
  @inlinable
  public mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }

  /// An `Int` as 8 bytes (``int64(_:)``).
  @inlinable
  public mutating func int(_ value: Int) { int64(Int64(value)) }

  /// The IEEE 754 bits, 8 bytes little-endian.
  @inlinable
  public mutating func double(_ value: Double) { uint64(value.bitPattern) }

  /// The date's `timeIntervalSinceReferenceDate` (seconds since 2001-01-01, which is what a
  /// `Date` holds) as a ``double(_:)``: exact, so ``RowReader/date()`` gives back the identical
  /// `Date`, and the same 8 bytes as `BinaryEncoder` writes for a `Date`.
  ///
  /// Before format 4 this wrote the seconds since 1970, which do not round-trip (adding the
  /// 31 years rounds about half of `Date()`'s values); the format-4 upgrade rebuilds every
  /// projection, so no stored row keeps that form (`Docs/OnDiskFormat.md`).
  @inlinable
  public mutating func date(_ value: Date) { double(value.timeIntervalSinceReferenceDate) }

  /// The UUID's 16 bytes.
  @inlinable
  public mutating func uuid(_ value: UUID) {
    reserve(16).storeBytes(of: value.uuid, toByteOffset: 0, as: uuid_t.self)
  }

  /// `value`'s bytes as they are (a UUID's 16 raw bytes read from a payload, an encoded value).
  @inlinable
  public mutating func bytes(_ value: UnsafeRawBufferPointer) {
    guard let source = value.baseAddress, !value.isEmpty else { return }
    reserve(value.count).copyMemory(from: source, byteCount: value.count)
  }

  /// `value`'s bytes as they are.
  @inlinable
  public mutating func bytes(_ value: [UInt8]) { value.withUnsafeBytes { bytes($0) } }

  /// A string: its UTF-8 length (LEB128), then its UTF-8.
  @inlinable
  public mutating func string(_ value: String) {
    var value = value
    value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
  }

  /// A string given as its (well-formed) UTF-8 bytes: the same bytes as ``string(_:)``.
  @inlinable
  public mutating func string(utf8: UnsafeRawBufferPointer) {
    var length = UInt64(utf8.count)
    repeat {
      let low = UInt8(length & 0x7F)
      length >>= 7
      byte(length == 0 ? low : low | 0x80)
    } while length != 0
    bytes(utf8)
  }

  /// An optional string: 0, or 1 then ``string(_:)``.
  @inlinable
  public mutating func optionalString(_ value: String?) {
    if let value {
      byte(1)
      string(value)
    } else {
      byte(0)
    }
  }

  /// An optional string given as its (well-formed) UTF-8 bytes: the same bytes as
  /// ``optionalString(_:)``.
  @inlinable
  public mutating func optionalString(utf8: UnsafeRawBufferPointer?) {
    if let utf8 {
      byte(1)
      string(utf8: utf8)
    } else {
      byte(0)
    }
  }

  /// The bytes ``string(_:)`` writes for `value`: its LEB128 length, then its UTF-8.
  @inlinable
  public static func size(of value: String) -> Int { size(ofUTF8: value.utf8.count) }

  /// The bytes ``string(utf8:)`` writes for `length` UTF-8 bytes.
  @inlinable
  public static func size(ofUTF8 length: Int) -> Int {
    (Int.bitWidth - max(1, length).leadingZeroBitCount + 6) / 7 + length
  }
}
