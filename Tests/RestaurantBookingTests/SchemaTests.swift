import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

@Suite("Schema registration")
struct SchemaTests {
  @Test("every event of a session renders as JSON and parses back to the same payload")
  func jsonRoundTrip() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    var renamed = catalog(3)
    renamed[0].name = "Renamed"
    renamed.removeLast()
    let restaurants = EventSourcedRestaurantRepository(
      store: store, source: ScriptedSource([catalog(3), renamed]), now: { fixedNow })
    let bookings = EventSourcedBookingRepository(store: store, now: { fixedNow })
    _ = try await restaurants.refresh()
    let booking = try await bookings.create(
      restaurantID: uuid(0), date: future(days: 2), partySize: 3, customerName: "Ada", notes: nil)
    _ = try await restaurants.refresh()
    try await bookings.delete(id: booking.id)
    let registry = RestaurantBookingSchema.eventTypes
    let events = try store.events(from: 1)
    #expect(Set(events.map(\.type)) == Set(registry.typeNames))
    for event in events {
      let json = try #require(try registry.json(of: event), "\(event.type) is registered")
      let parsed = try registry.payload(fromJSON: json, type: event.type)
      #expect(parsed.bytes == event.payload, "\(event.type): \(String(decoding: json, as: UTF8.self))")
    }
  }

  @Test("the schema registers both projections")
  func projections() {
    #expect(RestaurantBookingSchema.projections.map(\.name) == ["restaurants", "bookings"])
  }
}
