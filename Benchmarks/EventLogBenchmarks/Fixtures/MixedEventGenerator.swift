import Foundation
import RestaurantBooking

/// The `replay` workload's log: an endless, deterministic mix of booking creations and deletions
/// and catalog changes, whose live state stays bounded (at most ``bookingWindow`` bookings and
/// about ``restaurantPopulation`` restaurants), so that a replay's memory can stay flat while the
/// log grows.
///
/// At steady state: 45% `BookingCreated`, 45% `BookingDeleted` (the oldest live booking), 10%
/// catalog events (mostly `RestaurantUpdated`, some `RestaurantAdded` / `RestaurantRemoved`).
struct MixedEventGenerator {
  let bookingWindow: Int
  let restaurantPopulation: Int
  private var rng: SplitMix64
  private var ids: FixtureIDs
  private var restaurants: [RemoteRestaurant] = []
  private var restaurantIndex: [UUID: Int] = [:]
  private var liveBookings: [UUID] = []
  private var oldest = 0
  private var catalogVersion: UInt64 = 0
  private var counter = 0

  init(seed: UInt64 = Fixtures.seed ^ 0x4E91, bookingWindow: Int = 2_000, restaurantPopulation: Int = 500) {
    rng = SplitMix64(seed: seed)
    ids = FixtureIDs(seed: seed)
    self.bookingWindow = bookingWindow
    self.restaurantPopulation = restaurantPopulation
  }

  /// Live restaurants and bookings after the events generated so far.
  var liveCounts: (restaurants: Int, bookings: Int) { (restaurants.count, liveBookings.count - oldest) }

  mutating func next() -> MixedEventRecord {
    counter += 1
    if restaurants.isEmpty || rng.below(10) == 0 {
      return catalogEvent()
    }
    if liveBookings.count - oldest >= bookingWindow {
      let id = liveBookings[oldest]
      oldest += 1
      if oldest > 4 * bookingWindow {
        liveBookings.removeFirst(oldest)
        oldest = 0
      }
      return MixedEventRecord(eventID: ids.next(), stream: id, version: 2, event: .bookingDeleted(id))
    }
    let restaurant = restaurants[rng.below(restaurants.count)]
    let booking = Fixtures.booking(&rng, ids: &ids, restaurant: restaurant, index: counter)
    liveBookings.append(booking.id)
    return MixedEventRecord(
      eventID: ids.next(), stream: booking.id, version: 1, event: .bookingCreated(booking))
  }

  /// The next `count` events.
  mutating func next(_ count: Int) -> [MixedEventRecord] {
    (0..<count).map { _ in next() }
  }

  private mutating func catalogEvent() -> MixedEventRecord {
    catalogVersion += 1
    let event: MixedEvent
    let roll = rng.below(10)
    if restaurants.count < restaurantPopulation || roll == 0 {
      let restaurant = Fixtures.restaurant(&rng, index: counter)
      restaurantIndex[restaurant.id] = restaurants.count
      restaurants.append(restaurant)
      event = .restaurantAdded(restaurant)
    } else if roll == 1 {
      let position = rng.below(restaurants.count)
      let removed = restaurants[position]
      let last = restaurants.removeLast()
      if position < restaurants.count {
        restaurants[position] = last
        restaurantIndex[last.id] = position
      }
      restaurantIndex[removed.id] = nil
      event = .restaurantRemoved(removed)
    } else {
      let position = rng.below(restaurants.count)
      let old = restaurants[position]
      var new = old
      if rng.below(2) == 0 {
        new.name = old.name + "'"
        if new.name.utf8.count > 60 { new.name = Fixtures.restaurant(&rng, index: counter).name }
      } else {
        var cuisine = Cuisine.known[rng.below(Cuisine.known.count)].rawValue
        if cuisine == old.cuisine { cuisine = cuisine == "Thai" ? "Greek" : "Thai" }
        new.cuisine = cuisine
      }
      restaurants[position] = new
      event = .restaurantUpdated(id: old.id, old: old, new: new)
    }
    return MixedEventRecord(
      eventID: ids.next(), stream: MixedEventRecord.catalogStream, version: catalogVersion, event: event)
  }
}
