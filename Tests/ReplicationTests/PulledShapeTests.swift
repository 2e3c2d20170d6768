import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// Issue 28: payloads of any shape that a co-device pushes, through a real PostgreSQL. What a
/// pull stores, a backup restores (finding 2), and a pulled payload keeps every field the
/// server holds (finding 5).
@Suite("Pulled payloads of any shape", .needsPostgres)
struct PulledShapeTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")

  /// A device that pushed one booking, and the JSON its push sent for it.
  private func bookedPhone(
    _ customer: Customer
  ) async throws -> (phone: Device, restaurant: UUID, json: String) {
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    _ = try await phone.book(restaurant, name: "Ada")
    #expect(try await phone.push().pushed == 1)
    let created = try #require(try phone.store.events(from: 1).last)
    return (phone, restaurant, String(decoding: PayloadConversionProbe.json(created), as: UTF8.self))
  }

  /// Pushes, as a co-device of the phone's would, a `BookingCreated` of a new booking by the
  /// customer of the phone's booking, its name sealed for the new event under the customer's key
  /// (which the phone pushed), its payload's JSON edited by `edit`; returns the new booking's ID.
  private func pushCreated(from phone: Device, editing edit: (String) -> String) async throws -> UUID {
    let created = try #require(try phone.store.events(from: 1).last).decode(BookingCreated.self)
    let customer = try #require(created.customerID)
    let key = try #require(try phone.store.subjectKeys().first { $0.subject == customer }).key
    let booking = UUID()
    var copy = created
    copy.bookingID = booking
    copy.customerName = Personal("Ada", subject: customer)
    let sealed = try NewEvent(copy).sealingPendingValues(with: { _ in key })
    let recorded = RecordedEvent(
      sequence: 1, id: sealed.id, stream: RestaurantBookingStreams.booking(booking), version: 1,
      type: sealed.type, schemaVersion: sealed.schemaVersion, recordedAt: Date(), metadata: sealed.metadata,
      payload: sealed.payload)
    let json = String(decoding: PayloadConversionProbe.json(recorded), as: UTF8.self)
    #expect(json.hasPrefix("{") && !json.contains("$binary"), "\(json)")
    let event = OutgoingEvent(
      localSequence: 1, id: sealed.id, stream: RestaurantBookingStreams.booking(booking),
      type: BookingCreated.eventType, schemaVersion: BookingCreated.schemaVersion,
      payload: Array(edit(json).utf8), metadata: EventMetadata(origin: "co-device"), recordedAt: Date(),
      subjects: sealed.subjects)
    let outcomes = try await phone.transport.push([event], device: .random(), through: 1)
    #expect(outcomes.first.map { if case .stored = $0 { true } else { false } } == true, "\(outcomes)")
    return booking
  }

  /// Exports `device`, imports the export into an empty environment, exports that: both exports
  /// succeed and are the same bytes, and the restored log holds the same records (payloads,
  /// JSON flags) and skips the same events the same way.
  private func expectBackupRestores(
    _ device: Device, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let exported = try runChild(Self.binary, ["--db", device.store.path, "export"])
    #expect(exported.status == 0, "\(exported)", sourceLocation: sourceLocation)
    let file = try device.directory.file("backup.jsonl", Data(exported.stdout.utf8))
    let restored = TemporaryDirectory("restored")
    let imported = try runChild(Self.binary, ["--db", restored.environment(), "import", file])
    #expect(imported.status == 0, "\(imported)", sourceLocation: sourceLocation)
    let again = try runChild(Self.binary, ["--db", restored.environment(), "export"])
    #expect(
      again.status == 0 && exportedEvents(again.stdout) == exportedEvents(exported.stdout), "\(again)",
      sourceLocation: sourceLocation)
    #expect(
      try runChild(Self.binary, ["--db", restored.environment(), "verify"]).status == 0,
      sourceLocation: sourceLocation)
    guard imported.status == 0 else { return }
    let copy = try EventStore(path: restored.environment(), options: .restoredCopy)
    #expect(try copy.events(from: 1) == device.store.events(from: 1), sourceLocation: sourceLocation)
    #expect(
      try copy.skippedEvents().map { "\($0.sequence) \($0.kind) \($0.reason)" }
        == device.store.skippedEvents().map { "\($0.sequence) \($0.kind) \($0.reason)" },
      sourceLocation: sourceLocation)
  }

  /// Finding 2: a pulled `BookingCreated` whose party size is `2.0`, `"2"` or `null` was kept as
  /// JSON (skipped as unreadable), exported without a mark, and judged again by `import`, which
  /// refused the whole file: a backup that `export` and `verify` passed, and that nothing
  /// restored. Now the export says the payload is stored as JSON, and the import stores it so.
  @Test(arguments: ["2.0", #""2""#, "null"])
  func aPulledPayloadOfTheWrongTypeIsRestoredFromABackup(partySize: String) async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, restaurant, json) = try await bookedPhone(ada)
    #expect(json.contains(#""partySize":2,"#))
    _ = try await pushCreated(from: phone) {
      $0.replacingOccurrences(of: #""partySize":2,"#, with: #""partySize":\#(partySize),"#)
    }

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 1, "\(pulled)")
    #expect(try tablet.store.events(from: 1).map(\.payloadEncoding) == [.binary, .binary, .json])
    #expect(try tablet.store.skippedEvents().map(\.kind) == [.unreadable])
    try tablet.expectHealthy()
    try expectBackupRestores(tablet)
  }

  /// Finding 5: a pulled event of a known type with a key its type does not read was stored in
  /// binary, without the key, and `verify` was clean on both sides: the device's copy differed
  /// from the server's, silently. Now it is stored as the server holds it (as JSON), folded by
  /// what the type reads, and exported and restored with the key.
  @Test func aPulledPayloadWithKeysItsTypeDoesNotReadKeepsThem() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, restaurant, _) = try await bookedPhone(ada)
    let booking = try await pushCreated(from: phone) {
      #"{"table":4,"vip":{"since":[2020,{"x":null}]},"# + $0.dropFirst()
    }

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 0, "\(pulled)")
    // Folded: the booking is there, with what its type reads (its name opens with the
    // customer's key, which the pull brought).
    let folded = try await tablet.allBookings().first { $0.id == booking }
    #expect(folded?.customerName == "Ada" && folded?.unavailableFields == [], "\(String(describing: folded))")
    let stored = try #require(try tablet.store.events(from: 1).last)
    #expect(stored.payloadEncoding == .json)
    // The device's copy is the server's.
    let local = try tablet.store.payloadJSON(of: stored).json
    let server = try PostgresConnection(
      PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
    defer { server.close() }
    let row = try server.query(
      "SELECT payload::text AS payload FROM eventlog.events WHERE id = $1", [.uuid(stored.id)],
      purpose: "the server's payload")
    let held = Data(try row.string(0, "payload").utf8)
    #expect(
      try JSONSerialization.jsonObject(with: local) as? NSDictionary
        == JSONSerialization.jsonObject(with: held) as? NSDictionary)
    #expect(String(decoding: local, as: UTF8.self).contains(#""table":4"#))
    try tablet.expectHealthy()
    try expectBackupRestores(tablet)
  }

  /// Issue 28: a booking whose customer name holds a NUL in clear (as builds before sealing stored
  /// names, and as a co-device may send one) cannot be on the server as JSON (`jsonb` refuses
  /// `\u0000`), so one that entered a device was refused there for good. A co-device can still
  /// push it as `$binary`; the pulling device stores it and skips it as invalid (the domain's
  /// rules), counts it in `remote status`, lists it in `verify`, and its backup restores it
  /// skipped.
  @Test func aBookingWithANULInItsNameIsKeptOutOfTheProjections() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, restaurant, json) = try await bookedPhone(ada)
    let created = try #require(try phone.store.events(from: 1).last)
    var nul = try created.decode(BookingCreated.self)
    // The phone's name is sealed (Base64 in its JSON): the co-device's is in clear.
    let sealedName = Data(try #require(nul.customerName.storedBytes)).base64EncodedString()
    nul.customerName = Personal(storedBytes: Array("A\u{0}da".utf8))
    let asJSON = OutgoingEvent(
      localSequence: 1, id: UUID(), stream: created.stream, type: created.type, schemaVersion: 1,
      payload: Array(
        json.replacingOccurrences(
          of: #""customerName":"\#(sealedName)""#, with: #""customerName":"A\u0000da""#
        ).utf8),
      metadata: EventMetadata(origin: "co-device"), recordedAt: Date())
    #expect(asJSON.payload != Array(json.utf8))
    // The server cannot hold it as JSON: PostgreSQL refuses the text (a push records it rejected).
    let refusal = await #expect(throws: PostgresError.self) {
      try await phone.transport.push([asJSON], device: .random(), through: 1)
    }
    #expect(refusal?.sqlState == "22P05", "\(String(describing: refusal))")
    nul.bookingID = UUID()
    let binary = OutgoingEvent(
      localSequence: 1, id: UUID(), stream: RestaurantBookingStreams.booking(nul.bookingID),
      type: created.type,
      schemaVersion: 1,
      payload: Array(#"{"$binary":"\#(Data(try BinaryEncoder().encode(nul)).base64EncodedString())"}"#.utf8),
      metadata: EventMetadata(origin: "co-device"), recordedAt: Date())
    let stored = try await phone.transport.push([binary], device: .random(), through: 1)
    #expect(stored.first.map { if case .stored = $0 { true } else { false } } == true, "\(stored)")

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 1, "\(pulled)")
    #expect(try await tablet.allBookings().map(\.customerName) == ["Ada"])
    let skipped = try tablet.store.skippedEvents()
    #expect(skipped.map(\.kind) == [.invalid])
    #expect(skipped.first?.reason.contains("customerName holds a NUL") == true, "\(skipped)")
    #expect(try tablet.replicator.status().unreadable == 1)
    #expect(try tablet.store.verify().skipped.count == 1)
    try tablet.expectHealthy()
    try expectBackupRestores(tablet)
  }
}

extension EventStore.Options {
  /// A restored copy, opened read-only to compare it.
  static var restoredCopy: EventStore.Options {
    var options = EventStore.Options.fast
    options.readOnly = true
    return options
  }
}
