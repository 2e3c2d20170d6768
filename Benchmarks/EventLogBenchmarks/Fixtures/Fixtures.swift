import Foundation
import RestaurantBooking

/// Deterministic data for every workload: the same seed gives the same restaurants, bookings and
/// event sequences to every system and in every child process.
enum Fixtures {
  static let seed: UInt64 = 0x5EED_2026

  private static let nameWords = [
    "Trattoria", "Sushi", "Bistro", "Taqueria", "Brasserie", "Noodle", "Curry", "Grill", "Tapas",
    "Dumpling", "Pho", "Taverna", "Osteria", "Izakaya", "Kitchen", "Cantina",
  ]
  private static let nameAdjectives = [
    "Golden", "Green", "Little", "Royal", "Blue", "Silver", "Happy", "Old", "Red", "Hidden", "Sunny",
    "Wild",
  ]
  private static let firstNames = [
    "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Ken", "Radia",
    "Niklaus",
  ]
  private static let lastNames = [
    "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Hamilton",
    "Thompson", "Perlman", "Wirth",
  ]
  private static let notes = [
    "Window table if possible; one guest is vegetarian and another cannot eat nuts or shellfish at all.",
    "Celebrating a birthday: could you bring a small cake with a candle at the end of the dinner, please?",
    "We will arrive with a stroller and would appreciate a quiet corner table away from the kitchen door.",
  ]
  /// 2030-01-01T00:00:00Z: bookings are in the future.
  static let epoch = Date(timeIntervalSince1970: 1_893_456_000)

  /// A restaurant with a unique name (the index is part of it). Its ID is random: the remote
  /// catalog makes restaurant IDs, not the library.
  static func restaurant(_ rng: inout SplitMix64, index: Int) -> RemoteRestaurant {
    let name =
      "\(nameAdjectives[rng.below(nameAdjectives.count)]) \(nameWords[rng.below(nameWords.count)]) \(index)"
    let cuisine = Cuisine.known[rng.below(Cuisine.known.count)].rawValue
    return RemoteRestaurant(id: rng.uuid(), name: name, cuisine: cuisine)
  }

  /// A booking at `restaurant`: its encoded payload is about 200 bytes in a compact layout. Its
  /// ID comes from `ids`, the rest from `rng`.
  static func booking(
    _ rng: inout SplitMix64, ids: inout FixtureIDs, restaurant: RemoteRestaurant, index: Int
  ) -> Booking {
    let customer = "\(firstNames[rng.below(firstNames.count)]) \(lastNames[rng.below(lastNames.count)])"
    return Booking(
      id: ids.next(), restaurantID: restaurant.id, restaurantName: restaurant.name,
      date: epoch.addingTimeInterval(Double(rng.below(365 * 24 * 4)) * 900), partySize: 1 + rng.below(8),
      customerID: customerID(of: customer), customerName: customer, notes: notes[index % notes.count],
      createdAt: Date(timeIntervalSince1970: 1_780_000_000 + Double(index)))
  }

  /// The customer ID of a fixture's customer name: the same name, the same customer (as the
  /// repository finds one), without a lookup (two FNV-1a hashes of the name). Made with the
  /// fixture, as the booking's own ID is: an app's booking knows its customer before the append.
  static func customerID(of name: String) -> UUID {
    func fnv(_ seed: UInt64) -> UInt64 {
      var hash = seed
      for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
      return hash
    }
    let (high, low) = (fnv(0xcbf2_9ce4_8422_2325).bigEndian, fnv(0x8422_2325_cbf2_9ce4).bigEndian)
    return withUnsafeBytes(of: (high, low)) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
  }

  /// `count` restaurants.
  static func restaurants(count: Int, seed: UInt64 = seed) -> [RemoteRestaurant] {
    var rng = SplitMix64(seed: seed)
    return (0..<count).map { restaurant(&rng, index: $0) }
  }

  /// `count` booking creations at 100 restaurants: the append workloads' events.
  static func bookingCreations(count: Int, seed: UInt64 = seed) -> [MixedEventRecord] {
    var rng = SplitMix64(seed: seed ^ 0xB00C)
    var ids = FixtureIDs(seed: seed ^ 0xB00C)
    let pool = (0..<100).map { restaurant(&rng, index: $0) }
    return (0..<count).map { index in
      // The booking's ID, then its event's: the order the repository makes them in.
      let booking = booking(&rng, ids: &ids, restaurant: pool[index % pool.count], index: index)
      return MixedEventRecord(
        eventID: ids.next(), stream: booking.id, version: 1, event: .bookingCreated(booking))
    }
  }

  /// The `read.all` data: `size` rows, one restaurant for every four bookings, as events.
  static func readModelEvents(size: Int) -> [MixedEventRecord] {
    let restaurantCount = max(1, size / 5)
    var rng = SplitMix64(seed: seed ^ 0x2EAD)
    var ids = FixtureIDs(seed: seed ^ 0x2EAD)
    var records: [MixedEventRecord] = []
    records.reserveCapacity(size)
    var restaurants: [RemoteRestaurant] = []
    for index in 0..<restaurantCount {
      let restaurant = restaurant(&rng, index: index)
      restaurants.append(restaurant)
      records.append(
        MixedEventRecord(
          eventID: ids.next(), stream: MixedEventRecord.catalogStream, version: UInt64(index + 1),
          event: .restaurantAdded(restaurant)))
    }
    for index in 0..<(size - restaurantCount) {
      let booking = booking(&rng, ids: &ids, restaurant: restaurants[index % restaurants.count], index: index)
      records.append(
        MixedEventRecord(eventID: ids.next(), stream: booking.id, version: 1, event: .bookingCreated(booking))
      )
    }
    return records
  }

  /// The counts of rows `readModelEvents(size:)` leaves.
  static func readModelCounts(size: Int) -> (restaurants: Int, bookings: Int) {
    let restaurants = max(1, size / 5)
    return (restaurants, size - restaurants)
  }
}
