import EventLog

/// What a composition root registers for this domain:
///
/// ```swift
/// let store = try EventStore(
///   path: path, projections: RestaurantBookingSchema.projections,
///   admission: RestaurantBookingSchema.admission)
/// let registry = RestaurantBookingSchema.eventTypes   // for `log --json`, export and import
/// ```
public enum RestaurantBookingSchema {
  /// The inline projections: `restaurants` and `bookings`.
  public static var projections: [any Projection] { [RestaurantsProjection(), BookingsProjection()] }

  /// The structural rules every imported or pulled event must keep to be folded in.
  public static var admission: RestaurantBookingAdmission { RestaurantBookingAdmission() }

  /// Whether the events of `stream` are shared with the owner's other devices: the bookings
  /// are; the restaurant catalog is not (each device mirrors Supabase's `restaurants` table
  /// itself).
  public static func isReplicated(_ stream: StreamID) -> Bool {
    replicatedStreamPrefixes.contains { stream.rawValue.hasPrefix($0) }
  }

  /// The stream-name prefixes of the replicated streams: the booking streams'.
  public static var replicatedStreamPrefixes: [String] { [RestaurantBookingStreams.bookingPrefix] }

  /// Every event type of the domain.
  public static var eventTypes: EventTypeRegistry {
    EventTypeRegistry([
      RestaurantAdded.self, RestaurantUpdated.self, RestaurantRemoved.self, RestaurantsRefreshed.self,
      BookingCreated.self, BookingDeleted.self,
    ])
  }
}
