import EventLog
import Foundation

/// A booking was made. Stream: `booking-<bookingID>` (its first event).
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
  /// Who booked.
  public var customerName: String
  /// Free text; `nil` when there is none.
  public var notes: String?
  /// When the booking was made.
  public var createdAt: Date

  /// Creates the event.
  public init(
    bookingID: UUID, restaurantID: UUID, restaurantName: String, date: Date, partySize: Int,
    customerName: String, notes: String?, createdAt: Date
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
      date: try reader.date(), partySize: try reader.int(), customerName: try reader.string(),
      notes: try reader.optional { try $0.string() }, createdAt: try reader.date())
  }
}
