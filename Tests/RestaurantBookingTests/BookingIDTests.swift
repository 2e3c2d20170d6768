import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

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

  @Test("a booking stored under a version-4 ID is listed, found, deleted and replayed beside new ones")
  func oldBookingsStillWork() async throws {
    let fixture = try await BookingTests.Fixture()
    // A booking as an earlier version of the app stored it: version-4 booking and event IDs.
    let oldID = UUID()
    let old = BookingCreated(
      bookingID: oldID, restaurantID: uuid(0), restaurantName: "Restaurant 0", date: future(days: 2),
      partySize: 3, customerName: "Grace", notes: "old", createdAt: fixedNow)
    try await fixture.store.append(
      [try NewEvent(old, id: UUID())], to: RestaurantBookingStreams.booking(oldID), expectedVersion: .noStream
    )
    let new = try await fixture.bookings.create(
      restaurantID: uuid(1), date: future(days: 1), partySize: 2, customerName: "Ada", notes: nil)

    #expect(try await fixture.bookings.get(id: oldID)?.customerName == "Grace")
    #expect(try await fixture.bookings.getAll().map(\.id) == [new.id, oldID])
    try expectProjectionsMatchReplay(fixture.store)
    let replayed = try BookingQueries.all(in: fixture.store.replay().projection(BookingQueries.projection))
    #expect(replayed.map(\.id) == [new.id, oldID])

    try await fixture.bookings.delete(id: oldID)
    #expect(try await fixture.bookings.get(id: oldID) == nil)
    #expect(try await fixture.bookings.getAll().map(\.id) == [new.id])
    let deletion = try #require(try fixture.store.events(in: RestaurantBookingStreams.booking(oldID)).last)
    #expect(deletion.type == BookingDeleted.eventType)
    #expect(UUIDv7Generator.milliseconds(of: deletion.id) != nil)
    try expectProjectionsMatchReplay(fixture.store)
    #expect(try fixture.store.verify().ok)
  }
}
