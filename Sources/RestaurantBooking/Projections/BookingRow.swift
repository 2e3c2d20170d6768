import EventLog
import Foundation

/// A booking as the `bookings` projection stores it, in the ``RowWriter`` layout: format 1, ID,
/// restaurant ID, restaurant name, date, party size, customer name, notes (optional), created-at.
///
/// Changing the layout is a new projection version.
struct BookingRow: Hashable, Sendable {
  static let format: UInt8 = 1

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

  init(_ bytes: UnsafeRawBufferPointer) throws(RowError) {
    var reader = try RowReader(bytes, format: Self.format, row: "booking")
    id = try reader.uuid()
    restaurantID = try reader.uuid()
    restaurantName = try reader.string()
    date = try reader.date()
    partySize = try reader.int()
    customerName = try reader.string()
    notes = try reader.optionalString()
    createdAt = try reader.date()
  }

  /// The `by-date` key of a stored row, read without decoding its strings (the deletion path).
  static func dateKey(of bytes: UnsafeRawBufferPointer) throws(RowError) -> ProjectionKeys.DateKey {
    var reader = try RowReader(bytes, format: format, row: "booking")
    let id = try reader.uuid()
    try reader.skip(16)  // restaurant ID
    try reader.skipString()  // restaurant name
    return ProjectionKeys.dateKey(try reader.date(), id: id)
  }

  init(_ bytes: [UInt8]) throws {
    self = try bytes.withUnsafeBytes { buffer throws(RowError) in try BookingRow(buffer) }
  }

  var bytes: [UInt8] {
    let size =
      1 + 16 + 16 + RowWriter.size(of: restaurantName) + 8 + 8 + RowWriter.size(of: customerName)
      + RowWriter.size(of: notes) + 8
    return RowWriter.row(format: Self.format, size: size) { writer in
      writer.uuid(id)
      writer.uuid(restaurantID)
      writer.string(restaurantName)
      writer.date(date)
      writer.int(partySize)
      writer.string(customerName)
      writer.optionalString(notes)
      writer.date(createdAt)
    }
  }

  /// The row of a `BookingCreated` payload of the current schema, read straight from the payload
  /// (replay's hot path): the same bytes as `BookingRow(decoded event).bytes`, without creating the
  /// strings. `RowLayoutTests` checks the two agree.
  /// - Returns: the row's bytes, and the ID and date its keys are made of.
  /// - Throws: what decoding the payload as `BookingCreated` would throw.
  static func transcoding(_ payload: UnsafeRawBufferPointer) throws -> (bytes: [UInt8], id: UUID, date: Date)
  {
    try withTranscodedRow(payload) { row, key in
      (ByteArray.copy(row), UUID(uuid: key.id), BookingRow.date(sortable: key.sortableDate))
    }
  }

  /// The date of a date-order key's first 8 bytes (as ``ProjectionKeys/dateKey(_:id:)`` stores it).
  static func date(sortable stored: UInt64) -> Date {
    let sortable = UInt64(bigEndian: stored)
    let bits = (sortable & (1 << 63)) != 0 ? sortable & ~(1 << 63) : ~sortable
    return Date(timeIntervalSince1970: Double(bitPattern: bits))
  }

  /// Calls `body` with the row of a `BookingCreated` payload of the current schema, written into
  /// scratch memory (``transcoding(_:)`` without the array), and its `by-date` key, whose last 16
  /// bytes are the `by-id` key. Both are valid only during the call.
  /// - Throws: what decoding the payload as `BookingCreated` would throw, or what `body` throws.
  static func withTranscodedRow<R>(
    _ payload: UnsafeRawBufferPointer,
    _ body: (_ row: UnsafeRawBufferPointer, _ dateKey: ProjectionKeys.DateKey) throws -> R
  ) throws -> R {
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
    let size =
      1 + 16 + 16 + RowWriter.size(ofUTF8: restaurantName.count) + 8 + 8
      + RowWriter.size(ofUTF8: customerName.count) + RowWriter.size(ofOptionalUTF8: notes?.count) + 8
    let key = ProjectionKeys.dateKey(date, id: id.loadUnaligned(as: uuid_t.self))
    return try RowWriter.withRow(format: format, size: size) { writer in
      writer.bytes(id)
      writer.bytes(restaurantID)
      writer.string(utf8: restaurantName)
      writer.date(date)
      writer.int(partySize)
      writer.string(utf8: customerName)
      writer.optionalString(utf8: notes)
      writer.date(createdAt)
    } use: { row in
      try body(row, key)
    }
  }

  var booking: Booking {
    Booking(
      id: id, restaurantID: restaurantID, restaurantName: restaurantName, date: date, partySize: partySize,
      customerName: customerName, notes: notes, createdAt: createdAt)
  }
}
