import EventLog
import Foundation

/// A booking as the `bookings` projection stores it (`TableRow`, in `RowWriter`'s layout):
/// format 1, ID, restaurant ID, restaurant name, date, party size, customer name, notes
/// (optional), created-at. A reader turns it into a ``Booking`` (``Booking/init(_:)``):
///
/// ```swift
/// let all = try store.read {
///   try BookingsProjection.table.reader(in: $0).rows(in: BookingsProjection.byDate, as: Booking.init)
/// }
/// ```
///
/// Changing the layout is a new projection version.
public struct BookingRow: TableRow, Hashable, Encodable {
  static let format: UInt8 = 1
  /// `booking`, in errors about a stored row.
  public static let rowName = "booking"

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

  /// Reads a row that ``write(to:)`` wrote.
  /// - Throws: `RowError` for bytes that are not such a row.
  public init(from reader: inout RowReader) throws(RowError) {
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

  /// Writes the row's fields.
  public func write(to writer: inout RowWriter) {
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
}

extension Booking {
  /// The booking a row of the `bookings` table holds.
  public init(_ row: BookingRow) {
    self.init(
      id: row.id, restaurantID: row.restaurantID, restaurantName: row.restaurantName, date: row.date,
      partySize: row.partySize, customerName: row.customerName, notes: row.notes, createdAt: row.createdAt)
  }
}
