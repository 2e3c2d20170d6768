import EventLog
import Foundation

/// A booking as the `bookings` projection stores it (``TableRow``, in ``RowWriter``'s layout):
/// format 1, ID, restaurant ID, restaurant name, date, party size, customer name, notes
/// (optional), created-at.
///
/// Changing the layout is a new projection version.
struct BookingRow: TableRow, Hashable {
  static let format: UInt8 = 1
  static let rowName = "booking"

  var id: UUID
  var restaurantID: UUID
  var restaurantName: String
  var date: Date
  var partySize: Int
  var customerName: String
  var notes: String?
  var createdAt: Date

  init(_ event: BookingCreated) {
    id = event.bookingID
    restaurantID = event.restaurantID
    restaurantName = event.restaurantName
    date = event.date
    partySize = event.partySize
    customerName = event.customerName
    notes = event.notes
    createdAt = event.createdAt
  }

  init(from reader: inout RowReader) throws(RowError) {
    try reader.format(Self.format)
    id = try reader.uuid()
    restaurantID = try reader.uuid()
    restaurantName = try reader.string()
    date = try reader.date()
    partySize = try reader.int()
    customerName = try reader.string()
    notes = try reader.optionalString()
    createdAt = try reader.date()
  }

  func write(to writer: inout RowWriter) {
    writer.byte(Self.format)
    writer.uuid(id)
    writer.uuid(restaurantID)
    writer.string(restaurantName)
    writer.date(date)
    writer.int(partySize)
    writer.string(customerName)
    writer.optionalString(notes)
    writer.date(createdAt)
  }

  init(_ bytes: [UInt8]) throws { self = try bytes.withUnsafeBytes { try BookingRow(storedBytes: $0) } }

  /// The stored bytes.
  var bytes: [UInt8] { (try? withStoredBytes { Array($0) }) ?? [] }

  /// Writes the `by-date` key of a stored row (its date) without decoding its strings: the
  /// index's fast path for removals and for rows stored as bytes. The same key as the index's
  /// column `.date(\.date)`; `RowLayoutTests` checks the two agree.
  @Sendable
  static func writeDateKey(ofStored bytes: UnsafeRawBufferPointer, into key: inout KeyBuilder) throws {
    key.date(try date(ofStored: bytes))
  }

  /// The date of a stored row, read without decoding its strings.
  static func date(ofStored bytes: UnsafeRawBufferPointer) throws(RowError) -> Date {
    var reader = RowReader(bytes, row: rowName)
    try reader.format(format)
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
    let customerName = try reader.stringBytes()
    let notes = try reader.optional { try $0.stringBytes() }
    let createdAt = try reader.date()
    try reader.finish()
    writer.byte(format)
    writer.bytes(id)
    writer.bytes(restaurantID)
    writer.string(utf8: restaurantName)
    writer.date(date)
    writer.int(partySize)
    writer.string(utf8: customerName)
    writer.optionalString(utf8: notes)
    writer.date(createdAt)
    return date
  }

  /// The row of a `BookingCreated` payload of the current schema (``transcode(_:to:)``), as bytes.
  static func transcoding(_ payload: UnsafeRawBufferPointer) throws -> [UInt8] {
    try RowWriter.withRow({ try transcode(payload, to: &$0) }) { Array($0) }
  }

  var booking: Booking {
    Booking(
      id: id, restaurantID: restaurantID, restaurantName: restaurantName, date: date, partySize: partySize,
      customerName: customerName, notes: notes, createdAt: createdAt)
  }
}
