import EventLog
import Foundation

/// A booking was deleted. Stream: `booking-<bookingID>` (its second and last event).
public struct BookingDeleted: EventPayload, Hashable {
  public static let eventType = "BookingDeleted"
  /// The booking's ID.
  public var bookingID: UUID

  /// Creates the event.
  public init(bookingID: UUID) {
    self.bookingID = bookingID
  }
}
