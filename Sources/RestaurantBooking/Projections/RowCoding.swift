import EventLog
import Foundation

/// The compact, deterministic byte layout of projection rows: fixed-width little-endian numbers,
/// raw UUID bytes, and strings as a LEB128 length then UTF-8. Rows start with a format byte.
///
/// Hand-written rather than `Codable` so that `apply` and full scans do no reflection or
/// allocation beyond the row's own strings, and the same row always has the same bytes (replay
/// compares bytes).
struct RowWriter {
  private let buffer: UnsafeMutableRawBufferPointer
  private var offset = 0

  /// A row of exactly `size` bytes, starting with `format`, written by `body` (``ByteArray/make(count:_:)``).
  /// `size` must be what `body` writes (use ``size(of:)`` for strings); writing past it traps.
  static func row(format: UInt8, size: Int, _ body: (inout RowWriter) -> Void) -> [UInt8] {
    withRow(format: format, size: size, body) { ByteArray.copy($0) }
  }

  /// A row of exactly `size` bytes, starting with `format`, written by `body` into scratch memory
  /// and handed to `use` (valid only during the call): a row that is only copied into tables
  /// needs no array of its own.
  static func withRow<R>(
    format: UInt8, size: Int, _ body: (inout RowWriter) -> Void, use: (UnsafeRawBufferPointer) throws -> R
  ) rethrows -> R {
    try withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
      var writer = RowWriter(buffer: buffer)
      writer.byte(format)
      body(&writer)
      precondition(writer.offset == size, "a row wrote \(writer.offset) bytes, not the \(size) declared")
      return try use(UnsafeRawBufferPointer(buffer))
    }
  }

  /// The bytes ``string(_:)`` writes for `value`: its LEB128 length, then its UTF-8.
  static func size(of value: String) -> Int { size(ofUTF8: value.utf8.count) }

  /// The bytes ``string(utf8:)`` writes for `length` UTF-8 bytes.
  static func size(ofUTF8 length: Int) -> Int {
    (Int.bitWidth - max(1, length).leadingZeroBitCount + 6) / 7 + length
  }

  /// The bytes ``optionalString(_:)`` writes for `value`.
  static func size(of value: String?) -> Int { size(ofOptionalUTF8: value?.utf8.count) }

  /// The bytes ``optionalString(utf8:)`` writes for `length` UTF-8 bytes, or for `nil`.
  static func size(ofOptionalUTF8 length: Int?) -> Int { 1 + (length.map { size(ofUTF8: $0) } ?? 0) }

  private init(buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

  @inline(__always)
  private mutating func reserve(_ count: Int) -> Int {
    precondition(offset + count <= buffer.count, "a row writes more than its declared size")
    defer { offset += count }
    return offset
  }

  mutating func byte(_ value: UInt8) { buffer[reserve(1)] = value }

  mutating func uuid(_ value: UUID) {
    buffer.storeBytes(of: value.uuid, toByteOffset: reserve(16), as: uuid_t.self)
  }

  /// Writes `value`'s bytes as they are (a UUID's 16 raw bytes read from a payload).
  mutating func bytes(_ value: UnsafeRawBufferPointer) {
    let start = reserve(value.count)
    UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + value.count)]).copyMemory(from: value)
  }

  mutating func uint64(_ value: UInt64) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: reserve(8), as: UInt64.self)
  }

  mutating func int(_ value: Int) { uint64(UInt64(bitPattern: Int64(value))) }

  mutating func date(_ value: Date) { uint64(value.timeIntervalSince1970.bitPattern) }

  mutating func string(_ value: String) {
    var value = value
    value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
  }

  /// Writes a string given as its (well-formed) UTF-8 bytes: the same bytes as ``string(_:)``.
  mutating func string(utf8: UnsafeRawBufferPointer) {
    var length = UInt64(utf8.count)
    repeat {
      let low = UInt8(length & 0x7F)
      length >>= 7
      byte(length == 0 ? low : low | 0x80)
    } while length != 0
    let start = reserve(utf8.count)
    UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + utf8.count)]).copyMemory(from: utf8)
  }

  mutating func optionalString(_ value: String?) {
    if let value {
      byte(1)
      string(value)
    } else {
      byte(0)
    }
  }

  /// Writes an optional string given as its (well-formed) UTF-8 bytes: the same bytes as
  /// ``optionalString(_:)``.
  mutating func optionalString(utf8: UnsafeRawBufferPointer?) {
    if let utf8 {
      byte(1)
      string(utf8: utf8)
    } else {
      byte(0)
    }
  }
}

/// Reads what ``RowWriter`` wrote.
struct RowReader {
  private let buffer: UnsafeRawBufferPointer
  /// The kind of row, for errors ("booking", "restaurant").
  private let row: String
  private var offset = 0

  /// A reader of `buffer`, checking its format byte.
  init(_ buffer: UnsafeRawBufferPointer, format: UInt8, row: String) throws(RowError) {
    self.buffer = buffer
    self.row = row
    guard buffer.first == format else {
      throw .unreadable(
        row: row, reason: "format \(buffer.first.map(String.init) ?? "none"), expected \(format)")
    }
    offset = 1
  }

  private mutating func take(_ count: Int) throws(RowError) -> UnsafeRawBufferPointer {
    guard count >= 0, offset + count <= buffer.count else {
      throw .unreadable(row: row, reason: "truncated at byte \(offset)")
    }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
  }

  /// Steps over `count` bytes.
  mutating func skip(_ count: Int) throws(RowError) { _ = try take(count) }

  mutating func uuid() throws(RowError) -> UUID {
    UUID(uuid: try take(16).loadUnaligned(as: uuid_t.self))
  }

  mutating func uint64() throws(RowError) -> UInt64 {
    UInt64(littleEndian: try take(8).loadUnaligned(as: UInt64.self))
  }

  mutating func int() throws(RowError) -> Int { Int(Int64(bitPattern: try uint64())) }

  mutating func date() throws(RowError) -> Date {
    Date(timeIntervalSince1970: Double(bitPattern: try uint64()))
  }

  mutating func string() throws(RowError) -> String {
    String(decoding: try stringBytes(), as: UTF8.self)
  }

  /// Steps over a string without creating it.
  mutating func skipString() throws(RowError) { _ = try stringBytes() }

  private mutating func stringBytes() throws(RowError) -> UnsafeRawBufferPointer {
    var length: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try take(1)[0]
      guard shift < 64 else { throw .unreadable(row: row, reason: "bad string length at byte \(offset)") }
      length |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { break }
      shift += 7
    }
    guard length <= UInt64(buffer.count) else {
      throw .unreadable(row: row, reason: "string length \(length) past the end")
    }
    return try take(Int(length))
  }

  mutating func optionalString() throws(RowError) -> String? {
    switch try take(1)[0] {
    case 0: return nil
    case 1: return try string()
    case let tag: throw .unreadable(row: row, reason: "bad optional tag \(tag)")
    }
  }
}

/// A stored row that does not read back.
enum RowError: Error, Equatable, CustomStringConvertible {
  case unreadable(row: String, reason: String)

  var description: String {
    switch self {
    case .unreadable(let row, let reason): "a stored \(row) row is unreadable: \(reason)"
    }
  }
}
