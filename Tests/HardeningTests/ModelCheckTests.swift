import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// Item 10: seeded random sequences of syncs, bookings, reopenings, replays and rebuilds against a
/// plain in-memory model of the restaurants, bookings, head and expected errors.
///
/// Quick mode runs 1,000 seeds, full mode (`EVENTLOG_FULL=1`) 100,000; `EVENTLOG_MODEL_SEED=S`
/// runs only seed S and prints every step. A failing seed is printed so it can be replayed.
@Suite("Model check")
struct ModelCheckTests {
  static let seeds: UInt64 = HardeningMode.pick(quick: 1_000, full: 100_000)
  static let only: UInt64? = ProcessInfo.processInfo.environment["EVENTLOG_MODEL_SEED"].flatMap { UInt64($0) }
  static let partitions = 2

  @Test("the store equals the model after every step, for every seed", arguments: 0..<partitions)
  func modelCheck(_ partition: Int) async throws {
    let seeds: [UInt64] =
      if let only = Self.only {
        partition == 0 ? [only] : []
      } else {
        (0..<Self.seeds).filter { Int($0 % UInt64(Self.partitions)) == partition }
      }
    var failures = 0
    var steps = 0
    let clock = ContinuousClock()
    let start = clock.now
    for seed in seeds {
      var run = ModelRun(seed: seed, trace: Self.only != nil)
      do {
        try await run.execute()
      } catch {
        failures += 1
        let message =
          "model check failed for seed \(seed) at step \(run.step) (\(run.lastAction)): \(error)\n"
          + "replay it with: EVENTLOG_MODEL_SEED=\(seed) swift test --filter HardeningTests.ModelCheckTests"
        print("hardening: " + message)
        Issue.record(Comment(rawValue: message))
        if failures >= 5 { break }
      }
      steps += run.step
      await run.close()
    }
    print(
      "hardening: model check partition \(partition): \(seeds.count) seeds, \(steps) steps, "
        + "\(failures) failing, in \(clock.now - start)")
  }
}

/// A mismatch between the store and the model.
struct ModelMismatch: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// One seed's run: the store, its repositories and the model.
struct ModelRun {
  static let now = Date(timeIntervalSince1970: 1_900_000_000)
  static let names = [
    "Pasta Palace", "pasta palace", "Sushi", "sushi bar", "Ärger Grill", "émile", "Zebra", "ab", "ab c", "Ab",
    "東京", "  Padded  ",
  ]
  static let cuisines = ["Italian", "Japanese", "italian", "Fusion", "Thai", "", "Vietnamese Fusion"]
  static let customers = ["Ada", "  Alan Turing ", "Grace\tHopper", "É"]
  static let notes: [String?] = [nil, "window seat", "  trimmed  ", "   ", ""]

  let seed: UInt64
  let trace: Bool
  var generator: SplitMix64
  let scratch = TemporaryDirectory("model")
  let source = InMemoryRestaurantSource()
  var store: EventStore?
  var restaurants: EventSourcedRestaurantRepository?
  var bookings: EventSourcedBookingRepository?
  var step = 0
  var lastAction = "open"

  // The model.
  var remote: [RemoteRestaurant] = []
  var catalog: [UUID: RemoteRestaurant] = [:]
  var live: [UUID: Booking] = [:]
  var deleted: [UUID] = []
  var head: UInt64 = 0

  init(seed: UInt64, trace: Bool) {
    self.seed = seed
    self.trace = trace
    generator = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1)
  }

  var path: String { scratch.path("store") }

  mutating func open() throws {
    let store = try openDomainStore(path)
    self.store = store
    restaurants = EventSourcedRestaurantRepository(store: store, source: source, origin: "model") { Self.now }
    bookings = EventSourcedBookingRepository(store: store, origin: "model") { Self.now }
  }

  mutating func close() async {
    restaurants = nil
    bookings = nil
    await release(&store)
  }

  mutating func execute() async throws {
    try open()
    let count = Int.random(in: 10...20, using: &generator)
    while step < count {
      step += 1
      try await randomStep()
      try await compare()
    }
  }

  mutating func log(_ action: String) {
    lastAction = action
    if trace { print("seed \(seed) step \(step): \(action)") }
  }

  // MARK: - Steps

  mutating func randomStep() async throws {
    let roll = Int.random(in: 0..<100, using: &generator)
    switch roll {
    case 0..<30: try await sync()
    case 30..<33: try await failingSync()
    case 33..<58: try await createValid()
    case 58..<68: try await createInvalid()
    case 68..<80: try await delete()
    case 80..<88: try await reopen()
    case 88..<96: try replay()
    default: try await rebuild()
    }
  }

  mutating func sync() async throws {
    // Mutate the remote snapshot: adds, renames, cuisine changes, removals, reordering.
    for _ in 0..<Int.random(in: 0...4, using: &generator) {
      switch Int.random(in: 0..<5, using: &generator) {
      case 0, 1:
        remote.append(
          RemoteRestaurant(
            id: generator.uuid(), name: Self.names.randomElement(using: &generator)!,
            cuisine: Self.cuisines.randomElement(using: &generator)!))
      case 2 where !remote.isEmpty:
        remote[Int.random(in: 0..<remote.count, using: &generator)].name = Self.names.randomElement(
          using: &generator)!
      case 3 where !remote.isEmpty:
        remote[Int.random(in: 0..<remote.count, using: &generator)].cuisine =
          Self.cuisines.randomElement(using: &generator)!
      case 4 where !remote.isEmpty:
        remote.remove(at: Int.random(in: 0..<remote.count, using: &generator))
      default:
        break
      }
    }
    remote.shuffle(using: &generator)
    log("sync \(remote.count) rows")
    var expected = RefreshSummary()
    let fetchedIDs = Set(remote.map(\.id))
    for row in remote {
      if let old = catalog[row.id] {
        if old.name == row.name && old.cuisine == row.cuisine {
          expected.unchanged += 1
        } else {
          expected.updated += 1
        }
      } else {
        expected.added += 1
      }
    }
    expected.removed = catalog.keys.filter { !fetchedIDs.contains($0) }.count
    source.set(remote)
    let summary = try await restaurants!.refresh()
    guard summary == expected else { throw ModelMismatch("refresh summary \(summary), expected \(expected)") }
    catalog = Dictionary(uniqueKeysWithValues: remote.map { ($0.id, $0) })
    head += UInt64(expected.added + expected.updated + expected.removed + 1)
  }

  mutating func failingSync() async throws {
    log("failing sync")
    let failure = RestaurantSyncError.transport(reason: "model: the remote is down", offset: 0)
    source.fail(failure)
    do {
      _ = try await restaurants!.refresh()
      throw ModelMismatch("a failing source's refresh succeeded")
    } catch let error as RestaurantSyncError {
      guard error == failure else { throw ModelMismatch("refresh threw \(error), expected \(failure)") }
    }
    source.set(remote)
  }

  mutating func createValid() async throws {
    guard
      let restaurant = catalog.values.sorted(by: { $0.id.uuidString < $1.id.uuidString })
        .randomElement(using: &generator)
    else {
      let id = generator.uuid()
      log("create for a restaurant of an empty catalog")
      try await expectBookingError(.unknownRestaurant(id)) {
        _ = try await $0.create(
          restaurantID: id, date: Self.now + 3_600, partySize: 2, customerName: "Ada", notes: nil)
      }
      return
    }
    let date = Self.now + Double(Int.random(in: 0...5_000, using: &generator)) * 1_800
    let party = Int.random(in: 1...20, using: &generator)
    let customer = Self.customers.randomElement(using: &generator)!
    let notes = Self.notes.randomElement(using: &generator)!
    log("create at \(restaurant.name) for \(party)")
    let booking = try await bookings!.create(
      restaurantID: restaurant.id, date: date, partySize: party, customerName: customer, notes: notes)
    let trimmedNotes = notes?.trimmingCharacters(in: .whitespacesAndNewlines)
    let name = customer.trimmingCharacters(in: .whitespacesAndNewlines)
    // A name with a live booking keeps its customer ID; another name gets a new one.
    let known = live.values.first { $0.customerName == name }?.customerID
    let others = Set(live.values.filter { $0.customerName != name }.compactMap(\.customerID))
    guard let customerID = booking.customerID, known == nil || customerID == known,
      !others.contains(customerID)
    else {
      throw ModelMismatch(
        "created \(booking) with customer ID \(String(describing: booking.customerID)), expected \(String(describing: known))"
      )
    }
    let expected = Booking(
      id: booking.id, restaurantID: restaurant.id, restaurantName: restaurant.name, date: date,
      partySize: party, customerID: customerID,
      customerName: name,
      notes: trimmedNotes?.isEmpty == false ? trimmedNotes : nil, createdAt: Self.now)
    guard booking == expected else { throw ModelMismatch("created \(booking), expected \(expected)") }
    guard live[booking.id] == nil && !deleted.contains(booking.id) else {
      throw ModelMismatch("a reused booking ID")
    }
    live[booking.id] = expected
    head += 1
  }

  mutating func createInvalid() async throws {
    let restaurantID = catalog.keys.sorted(by: { $0.uuidString < $1.uuidString }).first ?? generator.uuid()
    switch Int.random(in: 0..<4, using: &generator) {
    case 0:
      let party = [0, 21, -3, 1_000].randomElement(using: &generator)!
      log("create with party \(party)")
      try await expectBookingError(.partySizeOutOfRange(party, allowed: BookingRules.partySizes)) {
        _ = try await $0.create(
          restaurantID: restaurantID, date: Self.now + 60, partySize: party, customerName: "Ada", notes: nil)
      }
    case 1:
      log("create with an empty name")
      try await expectBookingError(.emptyCustomerName) {
        _ = try await $0.create(
          restaurantID: restaurantID, date: Self.now + 60, partySize: 2, customerName: " \n\t", notes: nil)
      }
    case 2:
      log("create in the past")
      do {
        _ = try await bookings!.create(
          restaurantID: restaurantID, date: Self.now - 60, partySize: 2, customerName: "Ada", notes: nil)
        throw ModelMismatch("a booking in the past was created")
      } catch let error as BookingError {
        guard case .invalidDate = error else { throw ModelMismatch("threw \(error), expected invalidDate") }
      }
    default:
      // A removed restaurant when there is one, else an unknown ID.
      let removed = Set(remote.map(\.id))
      let id =
        live.values.map(\.restaurantID).first { !removed.contains($0) && catalog[$0] == nil }
        ?? generator.uuid()
      log("create for an unknown restaurant")
      try await expectBookingError(.unknownRestaurant(id)) {
        _ = try await $0.create(
          restaurantID: id, date: Self.now + 60, partySize: 2, customerName: "Ada", notes: nil)
      }
    }
  }

  mutating func delete() async throws {
    let choice = Int.random(in: 0..<3, using: &generator)
    if choice == 0,
      let id = live.keys.sorted(by: { $0.uuidString < $1.uuidString }).randomElement(using: &generator)
    {
      log("delete a booking")
      try await bookings!.delete(id: id)
      live[id] = nil
      deleted.append(id)
      head += 1
    } else if choice == 1, let id = deleted.randomElement(using: &generator) {
      log("delete a deleted booking")
      try await expectBookingError(.alreadyDeleted(id)) { try await $0.delete(id: id) }
    } else {
      let id = generator.uuid()
      log("delete an unknown booking")
      try await expectBookingError(.unknownBooking(id)) { try await $0.delete(id: id) }
    }
  }

  mutating func reopen() async throws {
    log("reopen")
    await close()
    try open()
  }

  func replay() throws {
    let store = store!
    let replay = try store.replay()
    let replayedRestaurants = try RestaurantsProjection.table.reader(in: replay)
      .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    let replayedBookings = try BookingsProjection.table.reader(in: replay)
      .rows(in: BookingsProjection.byDate) { Booking($0, keyring: replay.keyring) }
    guard replayedRestaurants == expectedRestaurants() else {
      throw ModelMismatch("replayed restaurants differ")
    }
    guard replayedBookings == expectedBookings() else { throw ModelMismatch("replayed bookings differ") }
    if let difference = try store.firstDifference(from: replay) {
      throw ModelMismatch("replay differs from the live projections: \(difference)")
    }
  }

  mutating func rebuild() async throws {
    log("rebuild projections")
    _ = try await store!.rebuildProjections()
  }

  mutating func expectBookingError(
    _ expected: BookingError, _ body: (EventSourcedBookingRepository) async throws -> Void
  ) async throws {
    do {
      try await body(bookings!)
      throw ModelMismatch("succeeded, expected \(expected)")
    } catch let error as BookingError {
      guard error == expected else { throw ModelMismatch("threw \(error), expected \(expected)") }
    }
  }

  // MARK: - Comparison

  func expectedRestaurants() -> [Restaurant] {
    func key(_ row: RemoteRestaurant) -> [UInt8] {
      Array(row.name.lowercased().utf8.prefix(400)) + [0] + withUnsafeBytes(of: row.id.uuid) { Array($0) }
    }
    return catalog.values.sorted { key($0).lexicographicallyPrecedes(key($1)) }.map(Restaurant.init)
  }

  func expectedBookings() -> [Booking] {
    func idBytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }
    return live.values.sorted { left, right in
      left.date != right.date
        ? left.date < right.date : idBytes(left.id).lexicographicallyPrecedes(idBytes(right.id))
    }
  }

  func compare() async throws {
    let storedHead = try store!.head()
    guard storedHead == head else { throw ModelMismatch("head \(storedHead), expected \(head)") }
    let restaurantsNow = try await restaurants!.getAll()
    let expected = expectedRestaurants()
    guard restaurantsNow == expected else {
      throw ModelMismatch("restaurants \(restaurantsNow.map(\.name)), expected \(expected.map(\.name))")
    }
    let bookingsNow = try await bookings!.getAll()
    guard bookingsNow == expectedBookings() else {
      throw ModelMismatch("bookings \(bookingsNow.count), expected \(live.count)")
    }
    for booking in bookingsNow.prefix(3) {
      guard try await bookings!.booking(id: booking.id) == booking else {
        throw ModelMismatch("booking(id:) differs")
      }
    }
    for id in deleted.prefix(3) {
      guard try await bookings!.booking(id: id) == nil else { throw ModelMismatch("a deleted booking reads") }
    }
  }
}
