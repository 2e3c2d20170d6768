import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

@Suite("Payload fast paths")
struct FastPathTests {
  /// Decodes `bytes` through `init(binary:)`, as `RecordedEvent.decode` does.
  static func fast<E: EventPayload>(_ type: E.Type, _ bytes: [UInt8]) throws -> E {
    try bytes.withUnsafeBytes { buffer in
      var reader = BinaryReader(buffer)
      let value = try E(binary: &reader)
      try reader.finish()
      return value
    }
  }

  static func check<E: EventPayload & Equatable>(_ value: E) throws {
    let bytes = try BinaryEncoder().encode(value)
    #expect(try fast(E.self, bytes) == value, "\(E.self)")
    #expect(try BinaryDecoder().decode(E.self, from: bytes) == value)
    // Every truncation and a trailing byte fail both ways, never crash.
    for length in 0..<bytes.count {
      #expect(throws: (any Error).self) { try fast(E.self, Array(bytes[..<length])) }
    }
    #expect(throws: (any Error).self) { try fast(E.self, bytes + [0]) }
  }

  @Test("every event's fast path reads exactly what Codable writes", arguments: 0..<50)
  func agreesWithCodable(seed: Int) throws {
    var random = SystemRandomNumberGenerator()
    func text() -> String {
      String(
        (0..<Int.random(in: 0...20, using: &random)).map { _ in "aé😀 Z\n".randomElement(using: &random) ?? "a"
        })
    }
    let date = Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random))
    try Self.check(
      BookingCreated(
        bookingID: UUID(), restaurantID: UUID(), restaurantName: text(), date: date,
        partySize: Int.random(in: Int.min...Int.max, using: &random), customerName: text(),
        notes: seed % 2 == 0 ? nil : text(), createdAt: date.addingTimeInterval(0.123)))
    try Self.check(BookingDeleted(bookingID: UUID()))
    try Self.check(RestaurantAdded(restaurantID: UUID(), name: text(), cuisine: text()))
    try Self.check(RestaurantRemoved(restaurantID: UUID(), name: text(), cuisine: text()))
    try Self.check(
      RestaurantUpdated(
        restaurantID: UUID(), name: seed % 3 == 0 ? nil : .init(old: text(), new: text()),
        cuisine: seed % 2 == 0 ? nil : .init(old: text(), new: text())))
  }
}

@Suite("Restaurants projection")
struct RestaurantsProjectionTests {
  /// The `by-name` keys of the live projection, as (name prefix, ID) pairs.
  static func nameKeys(_ store: EventStore) throws -> [[UInt8]] {
    try store.read { snapshot in
      var keys: [[UInt8]] = []
      try snapshot.projection(RestaurantsProjection.name).forEach(in: RestaurantsProjection.byName.name) {
        key, _ in
        keys.append(Array(key))
        return true
      }
      return keys
    }
  }

  @Test(
    "renames, a case-only rename, a cuisine change, a re-add and a removal keep one name key per restaurant")
  func nameKeysFollowRenames() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let catalog = RestaurantBookingStreams.catalog
    let a = uuid(1)
    let b = uuid(2)
    let events: [any EventPayload] = [
      RestaurantAdded(restaurantID: a, name: "Bistro", cuisine: "French"),
      RestaurantUpdated(restaurantID: a, name: .init(old: "Bistro", new: "BISTRO"), cuisine: nil),
      RestaurantUpdated(restaurantID: a, name: nil, cuisine: .init(old: "French", new: "Thai")),
      RestaurantAdded(restaurantID: b, name: "Alpha", cuisine: "Greek"),
      RestaurantUpdated(restaurantID: a, name: .init(old: "BISTRO", new: "Zeta"), cuisine: nil),
      RestaurantAdded(restaurantID: b, name: "Omega", cuisine: "Greek"),
      RestaurantRemoved(restaurantID: b, name: "Omega", cuisine: "Greek"),
    ]
    for event in events { try await store.append([try NewEvent(event)], to: catalog) }
    #expect(try Self.nameKeys(store) == [ProjectionKeys.name("Zeta", id: a)])
    let all = try store.read {
      try RestaurantsProjection.table.reader(in: $0)
        .rows(in: RestaurantsProjection.byName).map(Restaurant.init)
    }
    #expect(all.map(\.name) == ["Zeta"])
    #expect(all.first?.cuisine.rawValue == "Thai")
    #expect(try store.firstDifference(from: store.replay()) == nil)
  }
}
