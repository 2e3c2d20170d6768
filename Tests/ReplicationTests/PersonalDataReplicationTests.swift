import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Testing

/// What the superuser sees of an owner's personal data on the server.
struct ServerPersonalData: Equatable {
  /// The subjects of the owner's key rows.
  var keys: Set<UUID>
  /// The subjects of the owner's fences.
  var fences: Set<UUID>
}

extension ServerFixture {
  /// Runs `sql` as the superuser and reads its rows.
  func read<T>(
    _ sql: String, _ parameters: [PostgresValue] = [], _ body: (PostgresRows) throws -> T
  ) throws -> T {
    let connection = try PostgresConnection(PostgresConfiguration(url: server.url(database: database)))
    defer { connection.close() }
    return try body(try connection.query(sql, parameters, purpose: "inspect the server"))
  }

  /// The owner name of `role` on the server.
  func ownerName(of role: String) throws -> String {
    try read("SELECT 'role:' || oid::text AS owner FROM pg_roles WHERE rolname = $1", [.text(role)]) {
      try $0.string(0, "owner")
    }
  }

  /// `role`'s key rows and fences, as the superuser sees them.
  func personalData(of role: String) throws -> ServerPersonalData {
    let owner = try ownerName(of: role)
    let keys = try read("SELECT subject FROM eventlog.subject_keys WHERE owner = $1", [.text(owner)]) {
      rows in
      try (0..<rows.count).map { try rows.uuid($0, "subject") }
    }
    let fences = try read("SELECT subject FROM eventlog.erased_subjects WHERE owner = $1", [.text(owner)]) {
      rows in try (0..<rows.count).map { try rows.uuid($0, "subject") }
    }
    return ServerPersonalData(keys: Set(keys), fences: Set(fences))
  }

  /// How many rows of the server's tables hold `text` in clear, in any column (each row's text
  /// form, and its bytea columns' bytes).
  func rowsHolding(_ text: String) throws -> Int {
    try read(
      """
      SELECT (SELECT count(*) FROM eventlog.events e
                WHERE e::text LIKE '%' || $1 || '%' OR position(convert_to($1, 'UTF8') IN e.chain) > 0)
           + (SELECT count(*) FROM eventlog.subject_keys k
                WHERE k::text LIKE '%' || $1 || '%' OR position(convert_to($1, 'UTF8') IN k.key) > 0)
           + (SELECT count(*) FROM eventlog.erased_subjects f WHERE f::text LIKE '%' || $1 || '%') AS n
      """, [.text(text)]
    ) { try $0.integer(0, "n", as: Int.self) }
  }
}

@Suite("Personal data through the server", .needsPostgres)
struct PersonalDataReplicationTests {
  @Test func aBookingMadeOnOneDeviceIsReadableOnAnotherAndTheServerHoldsNoNameInClear() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let laptop = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.bookings.create(
      restaurantID: restaurant, date: Date().addingTimeInterval(86_400), partySize: 2,
      customerName: "Ada Lovelace", notes: "allergic to shellfish")
    let pushed = try await phone.push()
    #expect(pushed.keysPushed == 1)
    let subject = try #require(booking.customerID)

    _ = try await laptop.pull()
    let pulled = try #require(try await laptop.allBookings().first)
    #expect(pulled.customerName == "Ada Lovelace")
    #expect(pulled.notes == "allergic to shellfish")
    #expect(pulled.unavailableFields.isEmpty)
    // The pulled event lists its subject as the phone's record does.
    let created = try #require(try laptop.store.events(from: 1).first { $0.type == BookingCreated.eventType })
    #expect(created.subjects == [subject])
    #expect(try laptop.store.subjects().first { $0.id == subject }?.hasKey == true)

    #expect(try fixture.personalData(of: customer.role) == ServerPersonalData(keys: [subject], fences: []))
    #expect(
      try fixture.read("SELECT count(*) AS n FROM eventlog.events WHERE $1 = ANY(subjects)", [.uuid(subject)])
      {
        try $0.integer(0, "n", as: Int.self)
      } == 1)
    #expect(try fixture.rowsHolding("Ada Lovelace") == 0)
    #expect(try fixture.rowsHolding("shellfish") == 0)
    // The check itself finds a text that is there.
    #expect(try fixture.rowsHolding(booking.id.lowercasedString) > 0)
    // A second push sends no key again.
    #expect(try await phone.push().keysPushed == 0)
    try laptop.expectHealthy()
  }

  @Test func anErasureReachesTheServerAndEveryDeviceAndAStaleKeyIsRefused() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let laptop = try Device(customer)
    let tablet = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant, name: "Grace Hopper")
    let subject = try #require(booking.customerID)
    _ = try await phone.push()
    _ = try await laptop.pull()
    _ = try await tablet.pull()
    let staleKey = try #require(try tablet.store.subjectKeys().first { $0.subject == subject })

    // The tablet goes offline; the phone forgets the customer.
    #expect(try await phone.bookings.forget(customerName: "Grace Hopper", reason: "asked") == [subject])
    _ = try await phone.push()
    #expect(try fixture.personalData(of: customer.role) == ServerPersonalData(keys: [], fences: [subject]))

    _ = try await laptop.pull()
    #expect(try laptop.store.subjectKeys().isEmpty)
    let erased = try #require(try await laptop.allBookings().first)
    #expect(erased.customerName == nil)
    #expect(erased.erasedFields.contains("customerName"))

    // The tablet, back, sends its copy of the key: the server refuses it.
    let outcomes = try await tablet.transport.pushKeys(
      [SubjectKey(subject: subject, key: staleKey.key, createdAt: staleKey.createdAt)], device: UUID())
    #expect(outcomes == [.erased])
    // And a resync (which sends every key again) is refused the same way.
    try await tablet.replicator.resync()
    let pushed = try await tablet.push()
    #expect(pushed.keysRefused == 1)
    #expect(pushed.keysPushed == 0)
    #expect(try fixture.personalData(of: customer.role).keys.isEmpty)
    // Its pull brings the erasure: its own key goes.
    _ = try await tablet.pull()
    #expect(try tablet.store.subjectKeys().isEmpty)
    #expect(try await tablet.allBookings().first?.customerName == nil)
    #expect(try tablet.store.erasedSubjects().map(\.subject) == [subject])
    // A key pulled for an erased subject is refused locally as well.
    #expect(try await tablet.store.storeSubjectKeys([staleKey]) == 0)
    try tablet.expectHealthy()
    try laptop.expectHealthy()
  }

  @Test func anotherOwnerCanNeitherReadNorOverwriteTheKeys() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let mallory = try fixture.customer("mallory")
    let phone = try Device(alice)
    let booking = try await phone.book(try await phone.addRestaurant(), name: "Ada")
    let subject = try #require(booking.customerID)
    _ = try await phone.push()
    let original = try #require(try phone.store.subjectKeys().first)

    let intruder = try Device(mallory)
    // Mallory's pull of keys sees none of Alice's.
    #expect(try await intruder.transport.pullKeys(after: 0, limit: 100).isEmpty)
    // A key Mallory pushes for Alice's subject is Mallory's own: Alice's stays as it was.
    let forged = SubjectKey(subject: subject, key: Array(repeating: 7, count: 32), createdAt: Date())
    #expect(try await intruder.transport.pushKeys([forged], device: UUID()) == [.stored])
    let alicesKeys = try await phone.transport.pullKeys(after: 0, limit: 100)
    #expect(alicesKeys.map(\.key.key) == [original.key])
    // Mallory's erasure of the subject is Mallory's: Alice's key stays, and Alice has no fence.
    let erasure = try NewEvent(SubjectErased(subject: subject, reason: "no"))
    try await intruder.store.append([erasure], to: SubjectErased.stream(of: subject))
    _ = try await intruder.push()
    #expect(try fixture.personalData(of: alice.role) == ServerPersonalData(keys: [subject], fences: []))
    #expect(try fixture.personalData(of: mallory.role) == ServerPersonalData(keys: [], fences: [subject]))
    // The tables themselves are closed to a device's role.
    let connection = try PostgresConnection(PostgresConfiguration(url: mallory.url))
    defer { connection.close() }
    for table in ["eventlog.subject_keys", "eventlog.erased_subjects"] {
      #expect(throws: PostgresError.self) {
        try connection.query("SELECT * FROM \(table)", purpose: "read another owner's keys")
      }
    }
  }

  @Test func aMalformedSubjectListRefusesTheEventAndAMalformedKeyTheBatch() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let device = try Device(customer)
    _ = try await device.book(try await device.addRestaurant())
    let event = try #require(try device.outgoing().first)
    #expect(event.subjects.count == 1)
    let good = try await device.transport.push([event], device: .random(), through: 1)
    #expect(good.count == 1)
    // A subject list that is not UUIDs, sent by hand.
    let body = String(decoding: ReplicationWire.events([event]), as: UTF8.self)
      .replacingOccurrences(of: #""subjects":["#, with: #""subjects":[1,"#)
    let connection = try PostgresConnection(PostgresConfiguration(url: customer.url))
    defer { connection.close() }
    let rows = try connection.query(
      "SELECT outcome, reason FROM eventlog_api.push($1, $2, 1, $3::jsonb)",
      [.uuid(UUID()), .text(String(repeating: "k", count: 40)), .text(body)], purpose: "push by hand")
    #expect(try rows.string(0, "outcome") == "refused")
    #expect(try rows.string(0, "reason").contains("subjects"))
    #expect(throws: PostgresError.self) {
      try connection.query(
        "SELECT * FROM eventlog_api.push_keys($1, $2::jsonb)",
        [.uuid(UUID()), .text(#"[{"subject":"\#(UUID().lowercasedString)","key":"short","createdAt":1}]"#)],
        purpose: "push a malformed key")
    }
  }
}
