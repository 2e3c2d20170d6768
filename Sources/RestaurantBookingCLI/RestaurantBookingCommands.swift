import EventLog
import EventLogCLI
import Foundation
import RestaurantBooking

/// The restaurant-booking domain's commands for `eventlog`: `restaurants sync|list` and
/// `bookings create|delete|list`, and the restaurants and bookings of `replay --to SEQ` and
/// `replay --json`.
///
/// It holds what its commands need from the composition root; the defaults are the live ones
/// (the Supabase or file source, the event-sourced repositories writing with origin `cli`):
///
/// ```swift
/// await EventLogApp(schema: .restaurantBooking, plugins: [RestaurantBookingCommands()], remote: .postgres).run()
/// ```
public struct RestaurantBookingCommands: EventLogPlugin {
  /// The restaurant source for `--from URL|FILE|-` with an optional API key.
  public var restaurantSource: @Sendable (_ from: String, _ apiKey: String?) throws -> any RestaurantSource
  /// The restaurant repository over a store, syncing from a source.
  public var restaurantRepository:
    @Sendable (_ store: EventStore, _ source: any RestaurantSource) -> any RestaurantRepository
  /// The booking repository over a store.
  public var bookingRepository: @Sendable (_ store: EventStore) -> any BookingRepository

  /// The commands with the given sources and repositories.
  /// - Parameters:
  ///   - restaurantSource: the source of `restaurants sync --from`; by default Supabase for an
  ///     `http(s)://` URL, else a file (or `-`, standard input).
  ///   - restaurantRepository: the restaurant repository over a store and a source.
  ///   - bookingRepository: the booking repository over a store.
  public init(
    restaurantSource: @escaping @Sendable (String, String?) throws -> any RestaurantSource =
      RestaurantBookingCommands.liveSource,
    restaurantRepository: @escaping @Sendable (EventStore, any RestaurantSource) -> any RestaurantRepository =
      {
        EventSourcedRestaurantRepository(store: $0, source: $1, origin: "cli")
      },
    bookingRepository: @escaping @Sendable (EventStore) -> any BookingRepository = {
      EventSourcedBookingRepository(store: $0, origin: "cli")
    }
  ) {
    self.restaurantSource = restaurantSource
    self.restaurantRepository = restaurantRepository
    self.bookingRepository = bookingRepository
  }

  /// Supabase's REST API for an `http(s)://` URL (with the API key), else a file (or `-`).
  /// - Parameters:
  ///   - from: the `--from` value.
  ///   - apiKey: the API key, for a URL.
  /// - Returns: the source.
  /// - Throws: ``EventLogCLI/CommandFailure`` for a URL that does not parse.
  public static func liveSource(_ from: String, apiKey: String?) throws -> any RestaurantSource {
    if SupabaseRestaurantSource.isURL(from) {
      guard let url = URL(string: from) else {
        throw CommandFailure("'--from': '\(from)' is not a valid URL")
      }
      return SupabaseRestaurantSource(baseURL: url, apiKey: apiKey ?? "")
    }
    return FileRestaurantSource(path: from)
  }

  /// `restaurants` and `bookings`.
  public var groups: [CommandGroup] {
    [
      CommandGroup(
        name: "restaurants", abstract: "Sync the restaurant catalog from Supabase and list it.",
        commands: [RestaurantsSyncCommand.self, RestaurantsListCommand.self]),
      CommandGroup(
        name: "bookings", abstract: "Create, delete and list bookings; forget a customer.",
        commands: [
          BookingsCreateCommand.self, BookingsDeleteCommand.self, BookingsListCommand.self,
          BookingsForgetCommand.self,
        ]),
    ]
  }

  /// The restaurants and the bookings as of the replay, in the list commands' shapes.
  /// - Parameter replay: the replayed projections.
  /// - Returns: `restaurants` then `bookings`.
  /// - Throws: an error reading the replayed tables.
  public func replayedState(_ replay: EventStore.ReplayResult) throws -> [ReplayedState] {
    let restaurants = try RestaurantsProjection.table.reader(in: replay)
      .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    let keyring = replay.keyring
    let bookings = try BookingsProjection.table.reader(in: replay)
      .rows(in: BookingsProjection.byDate) { Booking($0, keyring: keyring) }
    return [
      ReplayedState(
        name: "restaurants", json: .array(restaurants.map(DomainJSON.restaurant)),
        text: DomainTables.restaurants(restaurants)),
      ReplayedState(
        name: "bookings", json: .array(bookings.map(DomainJSON.booking)),
        text: DomainTables.bookings(bookings)),
    ]
  }
}
