import EventLog
import Foundation

// A booking row read and written on bytes, for the measured fast path
// (`BookingsProjection+FastPath.swift`, `Benchmarks/Results/FINDINGS.md`, finding 7) and the tests.
// `RowLayoutTests` checks that each gives the bytes, keys and dates that `BookingRow`'s
// `write(to:)` and `init(from:)` in `BookingRow.swift` give.

extension BookingRow {
  /// Writes the `by-date` key of a stored row (its date) without decoding its strings: the
  /// index's fast path for removals and for rows stored as bytes. The same key as the index's
  /// column `.date(\.date)`; `RowLayoutTests` checks the two agree.
  @Sendable
  static func writeDateKey(ofStored bytes: UnsafeRawBufferPointer, into key: inout TableKey.KeyBuilder) throws
  {
    key.date(try date(ofStored: bytes))
  }

  /// The date of a stored row, read without decoding its strings.
  static func date(ofStored bytes: UnsafeRawBufferPointer) throws(RowError) -> Date {
    var reader = RowReader(bytes, row: rowName)
    _ = try reader.format(in: 1...format)
    try reader.skip(32)  // the ID and the restaurant ID
    try reader.skipString()  // the restaurant name
    return try reader.date()
  }

  /// Writes the row of a `BookingCreated` payload of the current schema, read straight from the
  /// payload (replay's hot path): the same bytes as `BookingRow(decoded event)` writes, without
  /// creating the strings. `RowLayoutTests` checks the two agree.
  /// - Throws: what decoding the payload as `BookingCreated` would throw.
  /// - Returns: the booking's date (its `by-date` key, without reading the row back).
  @discardableResult
  static func transcode(_ payload: UnsafeRawBufferPointer, to writer: inout RowWriter) throws -> Date {
    var reader = BinaryReader(payload)
    // IDs and strings are copied as bytes: neither a `UUID` nor a `String` is made.
    let id = try reader.uuidBytes()
    let restaurantID = try reader.uuidBytes()
    let restaurantName = try reader.stringBytes()
    let date = try reader.date()
    let partySize = try reader.int()
    let customerName = try reader.personalBytes()
    let notes = try reader.optional { try $0.personalBytes() }
    let createdAt = try reader.date()
    try reader.finish()
    writer.byte(format)
    writer.bytes(id)
    writer.bytes(restaurantID)
    writer.string(utf8: restaurantName)
    writer.date(date)
    writer.int(partySize)
    writer.personal(stored: customerName)
    writer.optionalPersonal(stored: notes)
    writer.date(createdAt)
    return date
  }

  /// The row of a `BookingCreated` payload of the current schema (``transcode(_:to:)``), as bytes.
  static func transcoding(_ payload: UnsafeRawBufferPointer) throws -> [UInt8] {
    try RowWriter.withRow({ try transcode(payload, to: &$0) }) { Array($0) }
  }
}
