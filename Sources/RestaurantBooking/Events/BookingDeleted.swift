import EventLog
import Foundation

/// A booking was deleted. Stream: `booking-<bookingID>` (its second and last event).
public struct BookingDeleted: EventPayload, Hashable {
  /// The stored type name, `BookingDeleted`.
  public static let eventType = "BookingDeleted"
  /// The booking's ID.
  public var bookingID: UUID

  /// Creates the event.
  public init(bookingID: UUID) {
    self.bookingID = bookingID
  }
}

extension BookingDeleted {
  /// Reads the fields in declaration order, the bytes `Codable` writes (the replay fast path).
  public init(binary reader: inout BinaryReader) throws {
    self.init(bookingID: try reader.uuid())
  }
}
