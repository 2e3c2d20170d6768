import EventLog
import Foundation

/// A booking was made. Stream: `booking-<bookingID>` (its first event).
///
/// The customer's name and notes are personal data of the customer (``customerID``, the data
/// subject): sealed under the customer's key when the event is appended, erased with it
/// (`eventlog bookings forget`).
public struct BookingCreated: EventPayload, Hashable {
  /// The stored type name, `BookingCreated`.
  public static let eventType = "BookingCreated"
  /// The booking's ID.
  public var bookingID: UUID
  /// The restaurant's remote ID.
  public var restaurantID: UUID
  /// The restaurant's name at booking time.
  public var restaurantName: String
  /// When the table is booked for.
  public var date: Date
  /// How many guests.
  public var partySize: Int
  /// Who booked: personal data of the customer.
  public var customerName: Personal<String>
  /// Free text, personal data of the customer; `nil` when there is none.
  public var notes: Personal<String>?
  /// When the booking was made.
  public var createdAt: Date

  /// The customer (the data subject of ``customerName`` and ``notes``); `nil` for a booking
  /// stored in clear before personal data was sealed.
  public var customerID: UUID? { customerName.subject }

  /// Creates the event of a booking by the customer `customerID`, whose name and notes are
  /// sealed under the customer's key when it is appended.
  public init(
    bookingID: UUID, restaurantID: UUID, restaurantName: String, date: Date, partySize: Int,
    customerID: UUID, customerName: String, notes: String?, createdAt: Date
  ) {
    self.init(
      bookingID: bookingID, restaurantID: restaurantID, restaurantName: restaurantName, date: date,
      partySize: partySize, customerName: Personal(customerName, subject: customerID),
      notes: notes.map { Personal($0, subject: customerID) }, createdAt: createdAt)
  }

  /// Creates the event with its personal values as they are (read from the log).
  public init(
    bookingID: UUID, restaurantID: UUID, restaurantName: String, date: Date, partySize: Int,
    customerName: Personal<String>, notes: Personal<String>?, createdAt: Date
  ) {
    self.bookingID = bookingID
    self.restaurantID = restaurantID
    self.restaurantName = restaurantName
    self.date = date
    self.partySize = partySize
    self.customerName = customerName
    self.notes = notes
    self.createdAt = createdAt
  }
}

extension BookingCreated {
  /// Reads the fields in declaration order, the bytes `Codable` writes (the replay fast path;
  /// `SchemaTests` checks it agrees with `Codable`).
  public init(binary reader: inout BinaryReader) throws {
    self.init(
      bookingID: try reader.uuid(), restaurantID: try reader.uuid(), restaurantName: try reader.string(),
      date: try reader.date(), partySize: try reader.int(), customerName: try reader.personal(),
      notes: try reader.optional { try $0.personal() }, createdAt: try reader.date())
  }
}
