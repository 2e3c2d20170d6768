import Foundation

/// Reads what ``RowWriter`` wrote, field by field in the same order; every read checks the
/// bounds and throws ``RowError`` naming the kind of row and the byte where it broke.
public struct RowReader {
  @usableFromInline let buffer: UnsafeRawBufferPointer
  /// The kind of row, for errors (`booking`, `user`).
  public let row: String
  @usableFromInline var position = 0
  /// Whether ``date()`` reads the seconds since 1970 that ``RowWriter/date(_:)`` wrote before
  /// format 4: set for the rows of an older environment opened read-only, which no upgrade has
  /// rebuilt.
  @usableFromInline var datesSince1970 = false
  /// The offset of the next byte to read.
  @inlinable public var offset: Int { position }

  /// A reader of `buffer`, a row of kind `row` (named in errors).
  @inlinable
  public init(_ buffer: UnsafeRawBufferPointer, row: String = "row") {
    self.buffer = buffer
    self.row = row
  }

  /// Reads a format byte (a row's first), which must be `expected`.
  /// - Throws: ``RowError`` when it is another.
  @inlinable @inline(__always)
  public mutating func format(_ expected: UInt8) throws(RowError) {
    guard position < buffer.count, buffer[position] == expected else { throw wrongFormat(expected) }
    position += 1
  }

  /// Reads a format byte (a row's first), which must be in `accepted`, and returns it: for a row
  /// type that still reads an older format's rows (the same bytes, read differently).
  /// - Throws: ``RowError`` when it is another.
  @inlinable
  public mutating func format(in accepted: ClosedRange<UInt8>) throws(RowError) -> UInt8 {
    guard position < buffer.count, accepted.contains(buffer[position]) else {
      throw wrongFormat(accepted.upperBound)
    }
    position += 1
    return buffer[position - 1]
  }

  /// The bytes not read yet.
  @inlinable
  public var remaining: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[position...]) }

  /// The next `count` bytes, as they are.
  @inlinable @inline(__always)
  public mutating func bytes(_ count: Int) throws(RowError) -> UnsafeRawBufferPointer {
    guard count >= 0, position + count <= buffer.count else { throw truncated() }
    defer { position += count }
    return UnsafeRawBufferPointer(rebasing: buffer[position..<(position + count)])
  }

  /// Steps over `count` bytes.
  @inlinable
  public mutating func skip(_ count: Int) throws(RowError) { _ = try bytes(count) }

  /// One byte.
  @inlinable @inline(__always)
  public mutating func byte() throws(RowError) -> UInt8 { try bytes(1)[0] }

  /// A ``RowWriter/bool(_:)``.
  @inlinable
  public mutating func bool() throws(RowError) -> Bool {
    switch try byte() {
    case 0: return false
    case 1: return true
    case let other: throw .unreadable(row: row, reason: "bad boolean \(other)")
    }
  }

  /// A ``RowWriter/uuid(_:)``.
  @inlinable
  public mutating func uuid() throws(RowError) -> UUID {
    UUID(uuid: try bytes(16).loadUnaligned(as: uuid_t.self))
  }

  /// A ``RowWriter/uint64(_:)``.
  @inlinable
  public mutating func uint64() throws(RowError) -> UInt64 {
    UInt64(littleEndian: try bytes(8).loadUnaligned(as: UInt64.self))
  }

  /// A ``RowWriter/int64(_:)``.
  @inlinable
  public mutating func int64() throws(RowError) -> Int64 { Int64(bitPattern: try uint64()) }

  /// A ``RowWriter/int(_:)``.
  @inlinable
  public mutating func int() throws(RowError) -> Int {
    let value = try int64()
    guard let int = Int(exactly: value) else { throw .unreadable(row: row, reason: "\(value) is not an Int") }
    return int
  }

  /// A ``RowWriter/double(_:)``.
  @inlinable
  public mutating func double() throws(RowError) -> Double { Double(bitPattern: try uint64()) }

  /// A ``RowWriter/date(_:)``: the identical `Date` that was written.
  @inlinable
  public mutating func date() throws(RowError) -> Date {
    let seconds = try double()
    return datesSince1970
      ? Date(timeIntervalSince1970: seconds) : Date(timeIntervalSinceReferenceDate: seconds)
  }

  /// A ``RowWriter/string(_:)``.
  @inlinable
  public mutating func string() throws(RowError) -> String {
    String(decoding: try stringBytes(), as: UTF8.self)
  }

  /// A string's UTF-8 bytes, without creating the string.
  @inlinable @inline(__always)
  public mutating func stringBytes() throws(RowError) -> UnsafeRawBufferPointer {
    // A length under 128 (one byte) is the common case.
    let first = try byte()
    if first & 0x80 == 0 { return try bytes(Int(first)) }
    return try longStringBytes(first)
  }

  /// A string's bytes whose length took more than one byte; `first` is that first byte.
  @usableFromInline
  mutating func longStringBytes(_ first: UInt8) throws(RowError) -> UnsafeRawBufferPointer {
    var length = UInt64(first & 0x7F)
    var shift: UInt64 = 7
    while true {
      let byte = try byte()
      guard shift < 64 else { throw failure("bad string length at byte \(offset)") }
      length |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { break }
      shift += 7
    }
    guard length <= UInt64(buffer.count) else { throw failure("string length \(length) past the end") }
    return try bytes(Int(length))
  }

  /// The error of a row that does not read back, made out of line: the reads that may throw it
  /// stay small enough to inline (replay reads a stored row's date index key for every delete).
  @usableFromInline @inline(never)
  func failure(_ reason: String) -> RowError { .unreadable(row: row, reason: reason) }

  @usableFromInline @inline(never)
  func truncated() -> RowError { .unreadable(row: row, reason: "truncated at byte \(offset)") }

  @usableFromInline @inline(never)
  func wrongFormat(_ expected: UInt8) -> RowError {
    let found = position < buffer.count ? String(buffer[position]) : "none"
    return .unreadable(row: row, reason: "format \(found), expected \(expected)")
  }

  /// Steps over a string without creating it.
  @inlinable
  public mutating func skipString() throws(RowError) { _ = try stringBytes() }

  /// A ``RowWriter/optionalString(_:)``.
  @inlinable
  public mutating func optionalString() throws(RowError) -> String? {
    switch try byte() {
    case 0: return nil
    case 1: return try string()
    case let tag: throw .unreadable(row: row, reason: "bad optional tag \(tag)")
    }
  }

  /// Checks that every byte was read.
  @inlinable
  public func finish() throws(RowError) {
    guard offset == buffer.count else {
      throw .unreadable(row: row, reason: "\(buffer.count - offset) bytes left over at byte \(offset)")
    }
  }
}

/// A stored row that does not read back (a damaged projection, or a row of another layout).
public enum RowError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The row of kind `row` cannot be read: `reason` says where it broke.
  case unreadable(row: String, reason: String)

  /// The row's kind and where it broke: `a stored booking row is unreadable: …`.
  public var description: String {
    switch self {
    case .unreadable(let row, let reason): "a stored \(row) row is unreadable: \(reason)"
    }
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}
