import EventLog

extension AppSchema {
  /// The restaurant-booking domain as one schema: what a composition root opens the store, the
  /// replicator and the command line with.
  ///
  /// ```swift
  /// let store = try EventStore(path: path, schema: .restaurantBooking)
  /// ```
  ///
  /// - Event types: ``RestaurantAdded``, ``RestaurantUpdated``, ``RestaurantRemoved``,
  ///   ``RestaurantsRefreshed``, ``BookingCreated``, ``BookingDeleted``.
  /// - Projections: `restaurants` and `bookings`, two table projections (read through their
  ///   readers: ``RestaurantsProjection/table`` and ``BookingsProjection/table``).
  /// - Admission: ``RestaurantBookingAdmission``, the structural rules every imported or pulled event
  ///   must keep to be folded in.
  /// - Replicated streams: the bookings' (`booking-…`); the restaurant catalog is not shared (each
  ///   device mirrors Supabase's `restaurants` table itself).
  /// - Stream names: a booking's stream is shown with its UUID in lower case and read back in either
  ///   case (``RestaurantBookingStreams/displayName(of:)``, ``RestaurantBookingStreams/stream(named:)``).
  public static let restaurantBooking = AppSchema(
    name: "restaurant-booking", eventTypes: RestaurantBookingSchema.eventTypeList,
    projections: [RestaurantsProjection.specialized, BookingsProjection.specialized],
    admission: RestaurantBookingAdmission(),
    replicatedStreams: AppSchema.StreamSelection(prefixes: [RestaurantBookingStreams.bookingPrefix]),
    streamNames: AppSchema.StreamNames(
      displayed: RestaurantBookingStreams.displayName(of:), stored: RestaurantBookingStreams.stream(named:)))
}

/// The parts of `AppSchema.restaurantBooking`, by name: conveniences for code (tests
/// among it) that opens a store with some of them.
public enum RestaurantBookingSchema {
  /// The domain's schema, `AppSchema.restaurantBooking`.
  public static var schema: AppSchema { .restaurantBooking }

  /// The inline projections: `restaurants` and `bookings`.
  public static var projections: [any Projection] { AppSchema.restaurantBooking.projections }

  /// The structural rules every imported or pulled event must keep to be folded in.
  public static var admission: RestaurantBookingAdmission { RestaurantBookingAdmission() }

  /// Whether the events of `stream` are shared with the owner's other devices: the bookings
  /// are; the restaurant catalog is not (each device mirrors Supabase's `restaurants` table
  /// itself).
  public static func isReplicated(_ stream: StreamID) -> Bool {
    AppSchema.restaurantBooking.isReplicated(stream)
  }

  /// The stream-name prefixes of the replicated streams: the booking streams'
  /// (`AppSchema.restaurantBooking`'s `replicatedStreams`).
  public static var replicatedStreamPrefixes: [String] {
    AppSchema.restaurantBooking.replicatedStreams.prefixes
  }

  /// Every event type of the domain.
  public static var eventTypes: EventTypeRegistry { EventTypeRegistry(eventTypeList) }

  /// The domain's event types, in the order they are registered.
  static var eventTypeList: [any EventPayload.Type] {
    [
      RestaurantAdded.self, RestaurantUpdated.self, RestaurantRemoved.self, RestaurantsRefreshed.self,
      BookingCreated.self, BookingDeleted.self,
    ]
  }
}
