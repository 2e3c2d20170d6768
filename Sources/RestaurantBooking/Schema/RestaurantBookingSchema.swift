import EventLog

/// What a composition root registers for this domain:
///
/// ```swift
/// let store = try EventStore(path: path, projections: RestaurantBookingSchema.projections)
/// let registry = RestaurantBookingSchema.eventTypes   // for `log --json`, export and import
/// ```
public enum RestaurantBookingSchema {
  /// The inline projections: `restaurants` and `bookings`.
  public static var projections: [any Projection] { [RestaurantsProjection(), BookingsProjection()] }

  /// Every event type of the domain.
  public static var eventTypes: EventTypeRegistry {
    EventTypeRegistry([
      RestaurantAdded.self, RestaurantUpdated.self, RestaurantRemoved.self, RestaurantsRefreshed.self,
      BookingCreated.self, BookingDeleted.self,
    ])
  }
}
