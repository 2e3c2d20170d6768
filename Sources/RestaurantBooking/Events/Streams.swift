import EventLog
import Foundation

/// The streams of the restaurant-booking domain.
///
/// | stream | events |
/// |---|---|
/// | `restaurant-catalog` | ``RestaurantAdded``, ``RestaurantUpdated``, ``RestaurantRemoved``, ``RestaurantsRefreshed`` |
/// | `booking-<UUID>` | ``BookingCreated`` then at most one ``BookingDeleted`` |
///
/// The whole catalog is one stream so that a sync can append its diff with the catalog's
/// expected version, and a booking can be appended only while the catalog is at the version it
/// was validated against.
public enum RestaurantBookingStreams {
  /// The one stream of every catalog event.
  public static let catalog: StreamID = "restaurant-catalog"

  /// The prefix of every booking stream.
  public static let bookingPrefix = "booking-"

  /// The stream of the booking `id`: `booking-<UUID>` (upper-case UUID, as `uuidString`).
  ///
  /// That is the stored spelling, which logs written so far hold and other devices push, so it
  /// stays; outputs show the UUID in lower case (``displayName(of:)``), and ``stream(named:)``
  /// reads a booking stream's name back in either case.
  public static func booking(_ id: UUID) -> StreamID {
    // `bookingPrefix + id.uuidString`, written by a measured fast path (FastPaths/BookingStreamName.swift).
    StreamID(bookingStreamName(of: id))
  }

  /// How `stream` is shown: a booking stream with its UUID in lower case, as every output writes
  /// UUIDs (`booking-229d96d4-f844-417b-9011-1c102a2fb1d7`); any other stream as stored.
  public static func displayName(of stream: StreamID) -> String {
    guard let id = bookingID(of: stream.rawValue) else { return stream.rawValue }
    return bookingPrefix + id.lowercasedString
  }

  /// The stored stream of a name as shown or typed: `booking-` and a UUID in either case is that
  /// booking's stream (``booking(_:)``); any other name is the stream of that name.
  public static func stream(named name: String) -> StreamID {
    guard let id = bookingID(of: name) else { return StreamID(name) }
    return booking(id)
  }

  /// The booking ID of a booking stream's name (its UUID in either case), or `nil`.
  static func bookingID(of name: String) -> UUID? {
    guard name.utf8.count == bookingPrefix.utf8.count + 36, name.hasPrefix(bookingPrefix) else { return nil }
    return UUID(uuidString: String(name.utf8.dropFirst(bookingPrefix.utf8.count)) ?? "")
  }
}
