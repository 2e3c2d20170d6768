import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

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

  /// The key the checks seal personal values with.
  static let key = [UInt8](repeating: 7, count: 32)

  static func check<E: EventPayload & Equatable>(_ value: E) throws {
    // Written as a new event (`encode(binary:)`, a type's own path or the default): the bytes and
    // the pending seals of the `Codable` path.
    let id = UUID()
    let written = try NewEvent(value, id: id)
    let (encoded, seals) = try BinaryEncoder().encodeForSealing(value, eventID: id)
    #expect(written.payload == encoded, "\(E.self)")
    #expect(written.pendingSeals == seals, "\(E.self)")
    // As the log stores it: personal values sealed.
    let bytes = try NewEvent(value).sealingPendingValues(with: { _ in key }).payload
    let stored = try BinaryDecoder().decode(E.self, from: bytes)
    #expect(try fast(E.self, bytes) == stored, "\(E.self)")
    #expect(try BinaryEncoder().encode(stored) == bytes)
    if let created = value as? BookingCreated, let read = stored as? BookingCreated {
      let keyring = SubjectKeyring(keys: [testCustomerID: key], erased: [])
      #expect(keyring.reveal(read.customerName) == keyring.reveal(created.customerName))
      #expect(read.notes.map(keyring.reveal) == created.notes.map(keyring.reveal))
      #expect(read.customerName.isSealed && read.customerID == testCustomerID)
    } else {
      #expect(stored == value)
    }
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
        partySize: Int.random(in: Int.min...Int.max, using: &random), customerID: testCustomerID,
        customerName: text(),
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
        .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    }
    #expect(all.map(\.name) == ["Zeta"])
    #expect(all.first?.cuisine.rawValue == "Thai")
    #expect(try store.firstDifference(from: store.replay()) == nil)
  }

  /// Version 1's layout: version 2's tables, and a `meta` table holding the catalog stream's
  /// version after each catalog event (`catalog-version`, 8 bytes big-endian), which nothing read.
  struct VersionOne: Projection {
    static let catalogVersionKey = Array("catalog-version".utf8)
    var name: String { RestaurantsProjection.name }
    /// Version 1, with the table engine's convergent rule in the top byte, as it was stored.
    var version: UInt32 { 0x0100_0001 }
    var tables: [String] { RestaurantsProjection.table.tables + ["meta"] }

    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      try RestaurantsProjection.table.apply(event, to: state)
      if event.stream == RestaurantBookingStreams.catalog {
        try state.put(TableKey.uint(event.version).bytes, forKey: Self.catalogVersionKey, in: "meta")
      }
    }
  }

  @Test("a store of version 1, with its meta table, is rebuilt on open and lists the same restaurants")
  func upgrade() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let snapshots = [RestaurantSyncTests.snapshotA, RestaurantSyncTests.snapshotB]
    var listed: [Restaurant] = []
    var old: EventStore? = try EventStore(
      path: path, projections: [VersionOne(), BookingsProjection.table], options: .fast)
    if let store = old {
      let repository = EventSourcedRestaurantRepository(store: store, source: ScriptedSource(snapshots))
      _ = try await repository.refresh()
      _ = try await repository.refresh()
      listed = try await repository.getAll()
      let stored = try store.read {
        try $0.projection(RestaurantsProjection.name).value(forKey: VersionOne.catalogVersionKey, in: "meta")
      }
      #expect(stored == TableKey.uint(try store.head()).bytes)
    }
    // Closed before the environment is opened again.
    await old?.close()
    old = nil
    // Read-only, the rows read as they are, and verify names the stored version.
    do {
      var options = EventStore.Options.fast
      options.readOnly = true
      let store = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: options)
      #expect(
        try await EventSourcedRestaurantRepository(store: store, source: ScriptedSource([])).getAll()
          == listed)
      #expect(
        try store.verify().problems.contains {
          $0.problem.contains("stored at version \(0x0100_0001), code is at \(0x0200_0002)")
        })
      await store.close()
    }
    // The first writable open rebuilds it.
    let store = try makeStore(dir)
    let repository = EventSourcedRestaurantRepository(store: store, source: ScriptedSource([snapshots[0]]))
    #expect(try await repository.getAll() == listed)
    #expect(listed.count == snapshots[1].count)
    // Rebuilt at version 2: the comparison with a replay checks the checkpoint's version too.
    try expectProjectionsMatchReplay(store)
    #expect(try store.verify().isClean)
    // The upgraded store refreshes as any other: back to snapshot A.
    #expect(try await repository.refresh() == RefreshSummary(added: 1, updated: 2, removed: 1, unchanged: 3))
    #expect(try await repository.getAll() == RestaurantSyncTests.snapshotA.map(Restaurant.init))
    try expectProjectionsMatchReplay(store)
  }
}
