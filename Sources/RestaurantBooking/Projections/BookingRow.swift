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

  var booking: Booking {
    Booking(
      id: id, restaurantID: restaurantID, restaurantName: restaurantName, date: date, partySize: partySize,
      customerName: customerName, notes: notes, createdAt: createdAt)
  }
}
