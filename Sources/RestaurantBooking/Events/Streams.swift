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

  /// The stream of the booking `id`: `booking-<UUID>` (upper-case UUID).
  public static func booking(_ id: UUID) -> StreamID {
    StreamID(bookingPrefix + id.uuidString)
  }
}
