import EventLog
import Foundation
import RestaurantBooking
import Synchronization
import TestKit

/// `eventlog-stress append`: appends a seeded mix of domain events (single events, batches on the
/// catalog stream, atomic multi-stream appends) from several tasks, and prints each event once its
/// commit returned.
struct AppendCommand: StressCommand {
  static let name = "append"
  static let usage =
    "eventlog-stress append --db PATH [--count N] [--batch-max N] [--concurrency N] [--seed N] [--map-size BYTES] [--durability durable|nosync] [--projections domain|none] [--notes-bytes N] [--clock-offset-ms N] [--clock-jitter-ms N]"
  static let help = """
    Append domain events (the restaurant-booking schema) until --count events are acknowledged, or forever.

    Usage: \(usage)

    Options:
      --db PATH            The environment directory (created if missing).
      --count N            Stop after about N acknowledged events (0, the default: never stop).
      --batch-max N        The largest append, in events (default 8); half of the appends are single events.
      --concurrency N      Tasks appending at once, committed together by group commit (default 2).
      --seed N             Seed of the generator (default 1).
      --map-size BYTES     The initial LMDB map size (default 64 MiB); it grows on demand.
      --durability MODE    durable (fsync per commit, the default) or nosync.
      --projections SET    domain (RestaurantBookingSchema.projections, the default) or none.
      --notes-bytes N      Pad each booking's notes to N bytes (default 0), to grow the log faster.
      --clock-offset-ms N  Run the writer's wall clock N ms ahead (negative: behind) of the system's.
      --clock-jitter-ms N  Step each reading of that clock back by a random 0…N ms (a clock that steps back).

    Output, one line per event after its append returned:
      ready <head>                                            once the store is open
      seq <seq> <event id> <stream> <type> <payload length> <payload FNV-1a 64, hex>
      done <acknowledged events>                              after --count
    """
  static let options: [String: Bool] = [
    "db": true, "count": true, "batch-max": true, "concurrency": true, "seed": true, "map-size": true,
    "durability": true, "projections": true, "notes-bytes": true, "clock-offset-ms": true,
    "clock-jitter-ms": true,
  ]

  var path: String
  var count: Int
  var batchMax: Int
  var concurrency: Int
  var seed: UInt64
  var storeOptions = EventStore.Options()
  var domainProjections: Bool
  var notesBytes: Int

  init(_ options: ParsedOptions) throws(UsageError) {
    path = try options.required("db")
    count = try options.integer("count", in: 0...Int(Int32.max), default: 0)
    batchMax = try options.integer("batch-max", in: 1...10_000, default: 8)
    concurrency = try options.integer("concurrency", in: 1...1_000, default: 2)
    seed = try options.integer("seed", in: 0...UInt64.max, default: 1)
    storeOptions.mapSize = try options.integer("map-size", in: 64 << 10...1 << 40, default: 64 << 20)
    if try options.noSync() { storeOptions.durability = .noSync }
    switch options.string("projections") {
    case nil, "domain": domainProjections = true
    case "none": domainProjections = false
    case let other?:
      throw UsageError("invalid value '\(other)' for '--projections': expected domain or none")
    }
    notesBytes = try options.integer("notes-bytes", in: 0...1 << 20, default: 0)
    let offset =
      Double(try options.integer("clock-offset-ms", in: -86_400_000...86_400_000, default: 0)) / 1_000
    let jitter = try options.integer("clock-jitter-ms", in: 0...86_400_000, default: 0)
    if offset != 0 || jitter > 0 {
      storeOptions.wallClock = {
        Date().addingTimeInterval(offset - Double(Int.random(in: 0...jitter)) / 1_000)
      }
    }
  }

  func run() async throws -> Int32 {
    let store = try openStore(
      path: path, projections: domainProjections ? RestaurantBookingSchema.projections : [],
      options: storeOptions)
    Output.line("ready \(try store.head())")
    let acknowledged = Counter()
    let limit = count
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<concurrency {
        let taskSeed = seed &+ UInt64(task) &* 0x9e37_79b9_7f4a_7c15
        let batchMax = batchMax
        let notesBytes = notesBytes
        group.addTask {
          var generator = EventGenerator(seed: taskSeed, batchMax: batchMax, notesBytes: notesBytes)
          while limit == 0 || acknowledged.value < limit {
            let appends = try generator.next()
            let result = try await store.append(appends)
            generator.committed()
            let events = appends.flatMap(\.events)
            guard events.count == result.events.count else {
              throw StressFailure(
                "append returned \(result.events.count) positions for \(events.count) events")
            }
            Output.lines(
              zip(events, result.events).map { event, position in
                "seq \(position.sequence) \(position.id.uuidString.lowercased()) \(position.stream) \(event.type) "
                  + "\(event.payload.count) \(FNV1a64(hashing: event.payload).hex)"
              })
            acknowledged.add(events.count)
          }
        }
      }
      try await group.waitForAll()
    }
    Output.line("done \(acknowledged.value)")
    return StressProgram.success
  }
}

/// A counter shared by the appending tasks.
final class Counter: Sendable {
  private let atomic = Atomic<Int>(0)
  var value: Int { atomic.load(ordering: .relaxed) }
  func add(_ amount: Int) { atomic.add(amount, ordering: .relaxed) }
}

/// A failed check, reported as `error: …`.
struct StressFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Domain-like appends that the projections accept: bookings created and deleted, restaurants
/// added, renamed and removed, only ever touching what this generator created, so that several
/// tasks and processes never conflict.
struct EventGenerator {
  private var random: SplitMix64
  private let batchMax: Int
  private let notes: String?
  /// Bookings this generator created and did not delete.
  private var bookings: [UUID] = []
  /// Restaurants this generator added and did not remove, with their current name and cuisine.
  private var restaurants: [(id: UUID, name: String, cuisine: String)] = []
  /// Bookings of the append in flight.
  private var pendingBookings: [UUID] = []
  private static let cuisines = ["Italian", "Japanese", "Mexican", "Greek", "Thai", "Vietnamese", "French"]

  init(seed: UInt64, batchMax: Int, notesBytes: Int) {
    random = SplitMix64(seed: seed)
    self.batchMax = batchMax
    notes = notesBytes > 0 ? String(repeating: "n", count: notesBytes) : nil
  }

  /// The next append, as stream appends (several streams when it is a multi-stream append).
  mutating func next() throws -> [EventStore.StreamAppend] {
    let roll = Int.random(in: 0..<100, using: &random)
    let size = roll < 50 ? 1 : Int.random(in: 1...batchMax, using: &random)
    switch roll {
    case 0..<35:
      return [try bookingCreated()]
    case 35..<50 where !bookings.isEmpty:
      let index = Int.random(in: 0..<bookings.count, using: &random)
      let id = bookings.remove(at: index)
      return [
        EventStore.StreamAppend(
          stream: RestaurantBookingStreams.booking(id), expectedVersion: .exactly(1),
          events: [try NewEvent(BookingDeleted(bookingID: id), metadata: metadata)])
      ]
    case 50..<75:
      return [
        EventStore.StreamAppend(stream: RestaurantBookingStreams.catalog, events: try catalogEvents(size))
      ]
    default:
      var appends: [EventStore.StreamAppend] = []
      for _ in 0..<size { appends.append(try bookingCreated()) }
      appends.append(
        EventStore.StreamAppend(stream: RestaurantBookingStreams.catalog, events: try catalogEvents(1)))
      return appends
    }
  }

  /// Records what an acknowledged append created, so later appends may update it.
  mutating func committed() {
    bookings += pendingBookings
    pendingBookings.removeAll()
  }

  private var metadata: EventMetadata {
    EventMetadata(correlationID: UUID(), origin: "eventlog-stress")
  }

  /// The key the bookings' personal values are sealed with.
  static let customerKey = [UInt8](repeating: 0x5E, count: 32)

  private mutating func bookingCreated() throws -> EventStore.StreamAppend {
    let id = UUID()
    pendingBookings.append(id)
    let restaurant = restaurants.randomElement(using: &random)
    let event = BookingCreated(
      bookingID: id, restaurantID: restaurant?.id ?? UUID(), restaurantName: restaurant?.name ?? "Walk-in",
      date: Date(
        timeIntervalSinceReferenceDate: Double(Int.random(in: 800_000_000...900_000_000, using: &random))),
      partySize: Int.random(in: 1...12, using: &random), customerID: UUID(),
      customerName: "Guest \(random.next() % 100_000)", notes: notes,
      createdAt: Date(timeIntervalSinceReferenceDate: 780_000_000))
    return EventStore.StreamAppend(
      stream: RestaurantBookingStreams.booking(id), expectedVersion: .noStream,
      // Sealed here, with one key for every customer, so that the event acknowledged is the event
      // stored (the store seals an event it is given unsealed, with a random nonce).
      events: [try NewEvent(event, metadata: metadata).sealingPendingValues(with: { _ in Self.customerKey })])
  }

  /// `count` catalog events: mostly additions, some renames and removals of this generator's
  /// restaurants. The restaurant list changes at once (an unacknowledged append is never retried).
  private mutating func catalogEvents(_ count: Int) throws -> [NewEvent] {
    var events: [NewEvent] = []
    for _ in 0..<count {
      let roll = Int.random(in: 0..<10, using: &random)
      if roll < 3, !restaurants.isEmpty {
        let index = Int.random(in: 0..<restaurants.count, using: &random)
        let old = restaurants[index]
        let name = "Restaurant \(random.next() % 1_000_000)"
        restaurants[index].name = name
        events.append(
          try NewEvent(
            RestaurantUpdated(
              restaurantID: old.id, name: .init(old: old.name, new: name), cuisine: nil),
            metadata: metadata))
      } else if roll < 4, !restaurants.isEmpty {
        let old = restaurants.remove(at: Int.random(in: 0..<restaurants.count, using: &random))
        events.append(
          try NewEvent(
            RestaurantRemoved(restaurantID: old.id, name: old.name, cuisine: old.cuisine), metadata: metadata)
        )
      } else {
        let restaurant = (
          id: UUID(), name: "Restaurant \(random.next() % 1_000_000)",
          cuisine: Self.cuisines[Int.random(in: 0..<Self.cuisines.count, using: &random)]
        )
        restaurants.append(restaurant)
        events.append(
          try NewEvent(
            RestaurantAdded(restaurantID: restaurant.id, name: restaurant.name, cuisine: restaurant.cuisine),
            metadata: metadata))
      }
    }
    return events
  }
}
