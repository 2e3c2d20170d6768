import EventLog
import Foundation

/// A booking as the `bookings` projection stores it (`TableRow`, in `RowWriter`'s layout):
/// format 2, ID, restaurant ID, restaurant name, date, party size, customer name and notes
/// (optional) as the event stores them (sealed: `Personal`), created-at. A reader turns it into
/// a ``Booking``, opening the personal values with the snapshot's keys
/// (``Booking/init(_:keyring:)``):
///
/// ```swift
/// let all = try store.read { snapshot in
///   let keyring = try snapshot.keyring()
///   return try BookingsProjection.table.reader(in: snapshot).rows(in: BookingsProjection.byDate) {
///     Booking($0, keyring: keyring)
///   }
/// }
/// ```
///
/// Changing the layout is a new projection version.
public struct BookingRow: TableRow, Hashable, Encodable {
  static let format: UInt8 = 2
  /// `booking`, in errors about a stored row.
  public static let rowName = "booking"

  var id: UUID
  var restaurantID: UUID
  var restaurantName: String
  var date: Date
  var partySize: Int
  var customerName: Personal<String>
  var notes: Personal<String>?
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
    // Format 1 (before sealing) stored the name and notes as text: the same bytes, read as
    // values stored in clear (a read-only open of an environment not upgraded yet).
    _ = try reader.format(in: 1...Self.format)
    id = try reader.uuid()
    restaurantID = try reader.uuid()
    restaurantName = try reader.string()
    date = try reader.date()
    partySize = try reader.int()
    customerName = try reader.personal()
    notes = try reader.optionalPersonal()
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
    writer.personal(customerName)
    writer.optionalPersonal(notes)
    writer.date(createdAt)
  }
}

extension Booking {
  /// The booking a row of the `bookings` table holds, its customer's name and notes opened with
  /// `keyring` (`nil`, and named in ``erasedFields`` or ``unavailableFields``, where they cannot
  /// be).
  public init(_ row: BookingRow, keyring: SubjectKeyring) {
    let name = keyring.reveal(row.customerName)
    let notes = row.notes.map(keyring.reveal)
    var erased: [String] = []
    var unavailable: [String] = []
    func note(_ field: String, _ revealed: Revealed<String>?) {
      switch revealed {
      case .erased: erased.append(field)
      case .unavailable: unavailable.append(field)
      case .value, nil: break
      }
    }
    note("customerName", name)
    note("notes", notes)
    self.init(
      id: row.id, restaurantID: row.restaurantID, restaurantName: row.restaurantName, date: row.date,
      partySize: row.partySize, customerID: row.customerName.subject, customerName: name.value,
      notes: notes?.value, createdAt: row.createdAt, erasedFields: erased, unavailableFields: unavailable)
  }
}
