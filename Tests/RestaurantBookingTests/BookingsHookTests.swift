import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// The bookings projection's hook (the hand-written fast path on payload bytes) builds the same
/// tables as its handlers alone (the simple path), live and in replay.
@Suite("Bookings projection: the hook and the handlers agree")
struct BookingsHookTests {
  /// Every entry of the bookings' tables.
  static func tables(_ view: ProjectionReader) throws -> [String: [[UInt8]: [UInt8]]] {
    var result: [String: [[UInt8]: [UInt8]]] = [:]
    for table in BookingsProjection.table.tables {
      var entries: [[UInt8]: [UInt8]] = [:]
      try view.forEach(in: table) { key, value in
        entries[Array(key)] = Array(value)
        return true
      }
      result[table] = entries
    }
    return result
  }

  @Test("random creates, deletes, double deletes and deletes of unknown bookings", arguments: 0..<3)
  func sameTables(seed: UInt64) async throws {
    var random = SplitMix64(seed: 0xB00C + seed)
    let fastDirectory = TemporaryDirectory()
    let simpleDirectory = TemporaryDirectory()
    let fast = try EventStore(
      path: fastDirectory.environment(), projections: [BookingsProjection.table], options: .fast)
    let simple = try EventStore(
      path: simpleDirectory.environment(), projections: [BookingsProjection.table(fastPath: false)],
      options: .fast)
    var created: [UUID] = []
    let names = ["", "Ada", "Chez Zoë", String(repeating: "ß", count: 90), "日本料理 🍣"]
    for index in 0..<300 {
      let event: any EventPayload
      if created.isEmpty || random.next() % 3 != 0 {
        let id = random.uuid()
        created.append(id)
        event = BookingCreated(
          bookingID: id, restaurantID: random.uuid(), restaurantName: names[index % names.count],
          date: Date(timeIntervalSince1970: Double(random.next() % 1_000_000_000)),
          partySize: Int(random.next() % 20) + 1, customerID: testCustomerID,
          customerName: names[(index / 2) % names.count],
          notes: index % 4 == 0 ? nil : names[(index / 3) % names.count], createdAt: fixedNow)
      } else {
        // A known booking (perhaps deleted already), or one never created.
        let id = random.next() % 5 == 0 ? random.uuid() : created[Int(random.next() % UInt64(created.count))]
        event = BookingDeleted(bookingID: id)
      }
      // Sealed once, so that both stores hold the same bytes (each store seals with a random nonce).
      let sealed = try NewEvent(event).sealingPendingValues(with: { _ in [UInt8](repeating: 1, count: 32) })
      for store in [fast, simple] { try await store.append([sealed], to: "bookings") }
    }
    let live = try fast.read { try Self.tables($0.projection(BookingsProjection.name)) }
    #expect(live["by-id"]?.isEmpty == false)
    #expect(try simple.read { try Self.tables($0.projection(BookingsProjection.name)) } == live)
    #expect(try Self.tables(fast.replay().projection(BookingsProjection.name)) == live)
    #expect(try Self.tables(simple.replay().projection(BookingsProjection.name)) == live)
    #expect(try fast.verify().isClean && simple.verify().isClean)
  }
}
