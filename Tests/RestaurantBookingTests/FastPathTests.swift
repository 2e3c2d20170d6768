import EventLog
import Foundation
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
