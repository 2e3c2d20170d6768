import Foundation
import RestaurantBooking

/// One domain event of a fixture, independent of how a system stores it.
enum MixedEvent: Sendable {
  case bookingCreated(Booking)
  case bookingDeleted(UUID)
  case restaurantAdded(RemoteRestaurant)
  /// A change of name or cuisine (old and new values; unchanged fields have old == new).
  case restaurantUpdated(id: UUID, old: RemoteRestaurant, new: RemoteRestaurant)
  case restaurantRemoved(RemoteRestaurant)
  /// The audit event closing a refresh.
  case restaurantsRefreshed(added: Int, updated: Int, removed: Int, unchanged: Int)

  /// The one-byte type code of the baselines' layout.
  var typeCode: UInt8 {
    switch self {
    case .bookingCreated: 1
    case .bookingDeleted: 2
    case .restaurantAdded: 3
    case .restaurantUpdated: 4
    case .restaurantRemoved: 5
    case .restaurantsRefreshed: 6
    }
  }
}

/// An event with its identity and place: what every system appends.
struct MixedEventRecord: Sendable {
  /// The event's ID (idempotency key).
  var eventID: UUID
  /// The stream: the booking's ID, or ``catalogStream`` for catalog events.
  var stream: UUID
  /// The event's version within its stream (1 for a booking's creation, 2 for its deletion).
  var version: UInt64
  var event: MixedEvent

  /// The stream of every catalog event in the baselines' 16-byte stream layout.
  static let catalogStream = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
