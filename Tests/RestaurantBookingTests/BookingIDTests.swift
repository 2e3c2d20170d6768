import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// New bookings and their events get version-7 (time-ordered) IDs; bookings stored earlier under
/// version-4 IDs are still listed, found, deleted and replayed.
@Suite("Booking IDs")
struct BookingIDTests {
  @Test("a new booking and its event get version-7 IDs, increasing from one booking to the next")
  func newBookingsAreVersion7() async throws {
    let fixture = try await BookingTests.Fixture()
    var bookings: [Booking] = []
    for days in [3.0, 1, 2] {
      bookings.append(
        try await fixture.bookings.create(
          restaurantID: uuid(1), date: future(days: days), partySize: 2, customerName: "Ada", notes: nil))
    }
    for booking in bookings {
      #expect(UUIDv7Generator.milliseconds(of: booking.id) != nil)
      let event = try #require(
        try fixture.store.events(in: RestaurantBookingStreams.booking(booking.id)).first)
      #expect(UUIDv7Generator.milliseconds(of: event.id) != nil)
    }
    let ids = bookings.map { withUnsafeBytes(of: $0.id.uuid) { Array($0) } }
    #expect(ids == ids.sorted { $0.lexicographicallyPrecedes($1) })
    // The listing stays in date order, whatever the IDs' order.
    #expect(
      try await fixture.bookings.getAll().map(\.id) == [bookings[1].id, bookings[2].id, bookings[0].id])
  }

  @Test("a booking's stream is booking- and the upper-case UUID, for version-4 and version-7 IDs alike")
  func streamNames() {
    var random = SplitMix64(seed: 15)
    let ids =
      (0..<200).map { _ in random.uuid() } + (0..<200).map { _ in UUID.version7() } + [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
      ]
    for id in ids {
      #expect(RestaurantBookingStreams.booking(id).rawValue == "booking-" + id.uuidString)
    }
  }

  @Test("a booking stored under a version-4 ID is listed, found, deleted and replayed beside new ones")
  func oldBookingsStillWork() async throws {
    let fixture = try await BookingTests.Fixture()
    // A booking as an earlier version of the app stored it: version-4 booking and event IDs.
    let oldID = UUID()
    let old = BookingCreated(
      bookingID: oldID, restaurantID: uuid(0), restaurantName: "Restaurant 0", date: future(days: 2),
      partySize: 3, customerID: testCustomerID, customerName: "Grace", notes: "old", createdAt: fixedNow)
    try await fixture.store.append(
      [try NewEvent(old, id: UUID())], to: RestaurantBookingStreams.booking(oldID), expectedVersion: .noStream
    )
    let new = try await fixture.bookings.create(
      restaurantID: uuid(1), date: future(days: 1), partySize: 2, customerName: "Ada", notes: nil)

    #expect(try await fixture.bookings.booking(id: oldID)?.customerName == "Grace")
    #expect(try await fixture.bookings.getAll().map(\.id) == [new.id, oldID])
    try expectProjectionsMatchReplay(fixture.store)
    let replayed = try BookingsProjection.table.reader(in: fixture.store.replay())
      .rows(in: BookingsProjection.byDate)
    #expect(replayed.map(\.id) == [new.id, oldID])

    try await fixture.bookings.delete(id: oldID)
    #expect(try await fixture.bookings.booking(id: oldID) == nil)
    #expect(try await fixture.bookings.getAll().map(\.id) == [new.id])
    let deletion = try #require(try fixture.store.events(in: RestaurantBookingStreams.booking(oldID)).last)
    #expect(deletion.type == BookingDeleted.eventType)
    #expect(UUIDv7Generator.milliseconds(of: deletion.id) != nil)
    try expectProjectionsMatchReplay(fixture.store)
    #expect(try fixture.store.verify().isClean)
  }
}

/// The bookings projection of version 1 stored each row in `by-date` too; version 2 keeps only
/// the keys there. An environment written by version 1 is rebuilt on open.
@Suite("Bookings projection upgrade")
struct BookingsProjectionUpgradeTests {
  /// Version 1's layout: the row under its ID and again under its date key.
  struct VersionOne: Projection {
    var name: String { BookingsProjection.name }
    var version: UInt32 { 1 }
    var tables: [String] { ["by-id", "by-date"] }

    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      guard event.type == BookingCreated.eventType else { return }
      let row = BookingRow(try event.decode(BookingCreated.self))  // the layout is the same in version 2
      try state.put(row.bytes, forKey: ProjectionKeys.id(row.id), in: "by-id")
      try state.put(row.bytes, forKey: ProjectionKeys.date(row.date, id: row.id), in: "by-date")
    }
  }

  @Test("a store of version 1 is rebuilt on open into keys-only by-date, and lists the same bookings")
  func upgrade() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var created: [BookingCreated] = []
    var old: EventStore? = try EventStore(
      path: path, projections: [RestaurantsProjection.table, VersionOne()], options: .fast)
    if let store = old {
      for days in [4.0, 1, 3] {
        let event = BookingCreated(
          bookingID: UUID.version7(), restaurantID: uuid(0), restaurantName: "Restaurant 0",
          date: future(days: days), partySize: 2, customerID: testCustomerID, customerName: "Ada", notes: nil,
          createdAt: fixedNow)
        created.append(event)
        try await store.append(
          [try NewEvent(event)], to: RestaurantBookingStreams.booking(event.bookingID),
          expectedVersion: .noStream)
      }
      let oldValues = try dateIndexValueSizes(store)
      #expect(oldValues.allSatisfy { $0 > 0 })
    }
    // Closed before the environment is opened again.
    await old?.close()
    old = nil
    let store = try makeStore(at: path)
    let values = try dateIndexValueSizes(store)
    #expect(values == [0, 0, 0])
    let repository = EventSourcedBookingRepository(store: store)
    #expect(try await repository.getAll().map(\.id) == [created[1], created[2], created[0]].map(\.bookingID))
    try expectProjectionsMatchReplay(store)
    #expect(try store.verify().isClean)
  }
}

/// The size of each value of the bookings' `by-date` table, in key order.
private func dateIndexValueSizes(_ store: EventStore) throws -> [Int] {
  try store.read { snapshot in
    var sizes: [Int] = []
    try snapshot.projection(BookingsProjection.name).forEach(in: BookingsProjection.byDate.name) { _, value in
      sizes.append(value.count)
      return true
    }
    return sizes
  }
}

/// A store with the domain's projections at `path`.
private func makeStore(at path: String) throws -> EventStore {
  try EventStore(path: path, projections: RestaurantBookingSchema.projections, options: .fast)
}
