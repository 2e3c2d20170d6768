import Foundation

/// The compact, deterministic byte layout of projection rows: fixed-width little-endian numbers,
/// raw UUID bytes, and strings as a LEB128 length then UTF-8. Rows start with a format byte.
///
/// Hand-written rather than `Codable` so that `apply` and full scans do no reflection or
/// allocation beyond the row's own strings, and the same row always has the same bytes (replay
/// compares bytes).
struct RowWriter {
  private(set) var bytes: [UInt8] = []

  init(format: UInt8, capacity: Int) {
    bytes.reserveCapacity(capacity)
    bytes.append(format)
  }

  // Appends go through typed buffers and `withUTF8`: the generic `append(contentsOf:)` of a raw
  // buffer or a `UTF8View` copies byte by byte, which showed in replay's profile.

  mutating func uuid(_ value: UUID) {
    withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
  }

  mutating func uint64(_ value: UInt64) {
    withUnsafeBytes(of: value.littleEndian) {
      bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self))
    }
  }

  mutating func int(_ value: Int) { uint64(UInt64(bitPattern: Int64(value))) }

  mutating func date(_ value: Date) { uint64(value.timeIntervalSince1970.bitPattern) }

  mutating func string(_ value: String) {
    var length = UInt64(value.utf8.count)
    repeat {
      let low = UInt8(length & 0x7F)
      length >>= 7
      bytes.append(length == 0 ? low : low | 0x80)
    } while length != 0
    var value = value
    value.withUTF8 { bytes.append(contentsOf: $0) }
  }

  mutating func optionalString(_ value: String?) {
    if let value {
      bytes.append(1)
      string(value)
    } else {
      bytes.append(0)
    }
  }
}

/// Reads what ``RowWriter`` wrote.
struct RowReader {
  private let buffer: UnsafeRawBufferPointer
  private var offset = 0

  /// A reader of `buffer`, checking its format byte.
  init(_ buffer: UnsafeRawBufferPointer, format: UInt8, row: String) throws(RowError) {
    self.buffer = buffer
    guard buffer.first == format else {
      throw .unreadable(
        row: row, reason: "format \(buffer.first.map(String.init) ?? "none"), expected \(format)")
    }
    offset = 1
  }

  private mutating func take(_ count: Int) throws(RowError) -> UnsafeRawBufferPointer {
    guard count >= 0, offset + count <= buffer.count else {
      throw .unreadable(row: "row", reason: "truncated at byte \(offset)")
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
      guard shift < 64 else { throw .unreadable(row: "row", reason: "bad string length at byte \(offset)") }
      length |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { break }
      shift += 7
    }
    guard length <= UInt64(buffer.count) else {
      throw .unreadable(row: "row", reason: "string length \(length) past the end")
    }
    return try take(Int(length))
  }

  mutating func optionalString() throws(RowError) -> String? {
    switch try take(1)[0] {
    case 0: return nil
    case 1: return try string()
    case let tag: throw .unreadable(row: "row", reason: "bad optional tag \(tag)")
    }
  }
}

/// A stored row that does not read back.
enum RowError: Error, CustomStringConvertible {
  case unreadable(row: String, reason: String)

  var description: String {
    switch self {
    case .unreadable(let row, let reason): "a stored \(row) row is unreadable: \(reason)"
    }
  }
}
