import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

@Suite("Bookings")
struct BookingTests {
  /// A store with a catalog of three restaurants, and the two repositories over it.
  struct Fixture {
    let dir = TemporaryDirectory()
    let store: EventStore
    let source: ScriptedSource
    let restaurants: EventSourcedRestaurantRepository
    let bookings: EventSourcedBookingRepository

    init(beforeAppend: (@Sendable () async throws -> Void)? = nil) async throws {
      store = try makeStore(dir)
      source = ScriptedSource([catalog(3)])
      restaurants = EventSourcedRestaurantRepository(store: store, source: source, now: { fixedNow })
      bookings = EventSourcedBookingRepository(
        store: store, origin: "app", now: { fixedNow }, beforeAppend: beforeAppend)
      _ = try await restaurants.refresh()
    }
  }

  @Test("a booking is created with a generated id and the restaurant's name, and read back")
  func create() async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(1), date: future(days: 3), partySize: 4, customerName: "  Ada  ", notes: "Window")
    #expect(booking.restaurantName == "Restaurant 1")
    #expect(booking.customerName == "Ada")
    #expect(booking.notes == "Window")
    #expect(booking.createdAt == fixedNow)
    #expect(try await fixture.bookings.booking(id: booking.id) == booking)
    #expect(try await fixture.bookings.getAll() == [booking])
    let event = try #require(try fixture.store.events(in: RestaurantBookingStreams.booking(booking.id)).first)
    #expect(event.type == "BookingCreated")
    #expect(event.metadata.origin == "app")
    #expect(event.metadata.correlationID != nil)
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test("empty notes are stored as nil")
  func emptyNotes() async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: "Bo", notes: "   ")
    #expect(booking.notes == nil)
    #expect(try await fixture.bookings.booking(id: booking.id)?.notes == nil)
  }

  @Test("bookings are listed by date, then id")
  func dateOrder() async throws {
    let fixture = try await Fixture()
    var created: [Booking] = []
    for days in [5.0, 1, 3, 1, 2] {
      created.append(
        try await fixture.bookings.create(
          restaurantID: uuid(0), date: future(days: days), partySize: 2, customerName: "C", notes: nil))
    }
    let expected = created.sorted { ($0.date, $0.id.uuidString) < ($1.date, $1.id.uuidString) }
    #expect(try await fixture.bookings.getAll() == expected)
    let replay = try fixture.store.replay()
    let replayed = try BookingsProjection.table.reader(in: replay)
      .rows(in: BookingsProjection.byDate) { Booking($0, keyring: replay.keyring) }
    #expect(replayed == expected)
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test(
    "the party size must be within 1...20",
    arguments: [0, -1, 21, 1_000])
  func partySize(size: Int) async throws {
    let fixture = try await Fixture()
    let head = try fixture.store.head()
    await #expect(throws: BookingError.partySizeOutOfRange(size, allowed: 1...20)) {
      try await fixture.bookings.create(
        restaurantID: uuid(0), date: future(days: 1), partySize: size, customerName: "C", notes: nil)
    }
    #expect(try fixture.store.head() == head)
  }

  @Test("the party size bounds themselves are allowed", arguments: [1, 20])
  func partySizeBounds(size: Int) async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: size, customerName: "C", notes: nil)
    #expect(booking.partySize == size)
  }

  @Test("the customer name must not be empty", arguments: ["", "   ", "\n\t"])
  func emptyName(name: String) async throws {
    let fixture = try await Fixture()
    await #expect(throws: BookingError.emptyCustomerName) {
      try await fixture.bookings.create(
        restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: name, notes: nil)
    }
  }

  /// Issue 28: a NUL in a name was appended, and the replication server refused the booking
  /// for good (`jsonb` cannot hold one). The rules refuse it where it enters, naming the field;
  /// other control characters are kept.
  @Test(
    "the customer name and the notes must not hold a NUL",
    arguments: [
      ("A\u{0}da", nil, "customerName"), ("Ada", "by the\u{0} window", "notes"),
      ("\u{0}", nil, "customerName"),
    ]
      as [(String, String?, String)])
  func nulInATextField(name: String, notes: String?, field: String) async throws {
    let fixture = try await Fixture()
    await #expect(throws: BookingError.nulCharacter(field: field)) {
      try await fixture.bookings.create(
        restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: name, notes: notes)
    }
    #expect(try await fixture.bookings.getAll().isEmpty)
    let kept = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: "A\u{1}da", notes: "\u{7F}\t")
    #expect(kept.customerName == "A\u{1}da")
  }

  @Test("the date must be real, not in the past, and before year 10000")
  func badDates() async throws {
    let fixture = try await Fixture()
    for date in [
      fixedNow.addingTimeInterval(-1), Date(timeIntervalSince1970: .nan),
      Date(timeIntervalSince1970: .infinity),
      Date(timeIntervalSince1970: 253_402_300_800),
    ] {
      let error = try await #require(throws: BookingError.self) {
        try await fixture.bookings.create(
          restaurantID: uuid(0), date: date, partySize: 2, customerName: "C", notes: nil)
      }
      guard case .invalidDate = error else {
        Issue.record("unexpected \(error)")
        continue
      }
      #expect(error.description.hasPrefix("field 'date'"))
    }
    #expect(try await fixture.bookings.getAll().isEmpty)
  }

  @Test("an unknown restaurant is refused")
  func unknownRestaurant() async throws {
    let fixture = try await Fixture()
    let id = uuid(42)
    await #expect(throws: BookingError.unknownRestaurant(id)) {
      try await fixture.bookings.create(
        restaurantID: id, date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    }
  }

  @Test("deleting: once works, twice says already deleted, an unknown id says unknown")
  func delete() async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    try await fixture.bookings.delete(id: booking.id)
    #expect(try await fixture.bookings.booking(id: booking.id) == nil)
    #expect(try await fixture.bookings.getAll().isEmpty)
    await #expect(throws: BookingError.alreadyDeleted(booking.id)) {
      try await fixture.bookings.delete(id: booking.id)
    }
    let unknown = UUID()
    await #expect(throws: BookingError.unknownBooking(unknown)) {
      try await fixture.bookings.delete(id: unknown)
    }
    #expect(
      try fixture.store.events(in: RestaurantBookingStreams.booking(booking.id)).map(\.type) == [
        "BookingCreated", "BookingDeleted",
      ])
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test("two concurrent deletes: one succeeds, the other says already deleted")
  func concurrentDeletes() async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    async let one = outcome { try await fixture.bookings.delete(id: booking.id) }
    async let two = outcome { try await fixture.bookings.delete(id: booking.id) }
    let results = await [one, two]
    #expect(results.filter { (try? $0.get()) != nil }.count == 1)
    #expect(
      results.contains {
        if case .failure(let error) = $0 {
          (error as? BookingError) == .alreadyDeleted(booking.id)
        } else {
          false
        }
      })
  }

  @Test("a booking outlives the removal of its restaurant and keeps its name")
  func outlivesRestaurant() async throws {
    let fixture = try await Fixture()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(2), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    fixture.source.push([catalog(3)[0], catalog(3)[1]])
    #expect(try await fixture.restaurants.refresh() == RefreshSummary(removed: 1, unchanged: 2))
    #expect(try await fixture.restaurants.restaurant(id: uuid(2)) == nil)
    #expect(try await fixture.bookings.booking(id: booking.id)?.restaurantName == "Restaurant 2")
    await #expect(throws: BookingError.unknownRestaurant(uuid(2))) {
      try await fixture.bookings.create(
        restaurantID: uuid(2), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    }
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test("a sync that removes the restaurant between validation and append makes the create fail cleanly")
  func raceWithSync() async throws {
    let removal = Removal()
    let fixture = try await Fixture(beforeAppend: { try await removal.runOnce() })
    removal.action = { [restaurants = fixture.restaurants, source = fixture.source] in
      source.push([catalog(3)[0], catalog(3)[1]])
      _ = try await restaurants.refresh()
    }
    let head = try fixture.store.head()
    await #expect(throws: BookingError.unknownRestaurant(uuid(2))) {
      try await fixture.bookings.create(
        restaurantID: uuid(2), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    }
    #expect(try eventTypes(fixture.store, after: head) == ["RestaurantRemoved", "RestaurantsRefreshed"])
    #expect(try await fixture.bookings.getAll().isEmpty)
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test("a sync that changes another restaurant meanwhile: the create retries and succeeds")
  func retryAfterUnrelatedSync() async throws {
    let removal = Removal()
    let fixture = try await Fixture(beforeAppend: { try await removal.runOnce() })
    removal.action = { [restaurants = fixture.restaurants, source = fixture.source] in
      source.push([catalog(3)[0], catalog(3)[2]])
      _ = try await restaurants.refresh()
    }
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(2), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    #expect(try await fixture.bookings.getAll() == [booking])
    #expect(try fixture.store.events(from: 1).filter { $0.is(BookingCreated.self) }.count == 1)
    try expectProjectionsMatchReplay(fixture.store)
  }

  @Test("observers see bookings created and deleted")
  func observe() async throws {
    let fixture = try await Fixture()
    let changes = fixture.bookings.changes()
    let booking = try await fixture.bookings.create(
      restaurantID: uuid(0), date: future(days: 1), partySize: 2, customerName: "C", notes: nil)
    try await fixture.bookings.delete(id: booking.id)
    var seen: [BookingChange] = []
    for try await change in changes {
      seen.append(change)
      if seen.count == 2 { break }
    }
    #expect(seen == [.created(booking), .deleted(id: booking.id)])
  }

  @Test("error descriptions name the field")
  func descriptions() {
    #expect(
      BookingError.partySizeOutOfRange(0, allowed: 1...20).description
        == "field 'partySize': 0 is outside 1...20")
    #expect(BookingError.emptyCustomerName.description.contains("customerName"))
    #expect(
      BookingError.nulCharacter(field: "notes").description.hasPrefix("field 'notes': must not contain NUL"))
    #expect(BookingError.unknownRestaurant(uuid(1)).description.contains(uuid(1).uuidString.lowercased()))
  }
}

/// Runs an action the first time only (a sync slipped in between a create's read and append).
final class Removal: @unchecked Sendable {
  // @unchecked Sendable: fields guarded by `lock`.
  private let lock = NSLock()
  private var done = false
  private var _action: (@Sendable () async throws -> Void)?

  var action: (@Sendable () async throws -> Void)? {
    get { lock.withLock { _action } }
    set { lock.withLock { _action = newValue } }
  }

  func runOnce() async throws {
    let action = lock.withLock { () -> (@Sendable () async throws -> Void)? in
      defer { done = true }
      return done ? nil : _action
    }
    try await action?()
  }
}
