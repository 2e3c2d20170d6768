import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Testing

/// The server, not the client, keeps the log append-only and each owner's rows their own.
@Suite("Owner isolation and append-only, enforced by the server", .needsPostgres)
struct IsolationTests {
  func connection(_ customer: Customer) throws -> PostgresConnection {
    try PostgresConnection(PostgresConfiguration(url: customer.url))
  }

  @Test func aDevicesRoleCannotChangeOrRemoveAnEvent() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = try Device(alice)
    _ = try await phone.book(try await phone.addRestaurant())
    _ = try await phone.push()
    let sql = try connection(alice)
    for statement in [
      "UPDATE eventlog.events SET type = 'Forged'", "DELETE FROM eventlog.events", "TRUNCATE eventlog.events",
    ] {
      let error = #expect(throws: PostgresError.self, "\(statement)") {
        try sql.query(statement, purpose: "tamper")
      }
      #expect(error?.sqlState == "42501", "\(statement): \(String(describing: error))")
    }
    // The tables' owner (whose functions write them) meets the trigger, and so does a superuser.
    let owner = try PostgresConnection(PostgresConfiguration(url: fixture.ownerURL))
    let asOwner = #expect(throws: PostgresError.self) {
      try owner.query("DELETE FROM eventlog.events", purpose: "tamper as the owner")
    }
    #expect(asOwner?.message.contains("append-only") == true)
    let error = #expect(throws: PostgresError.self) { try fixture.superuser("DELETE FROM eventlog.events") }
    #expect(error?.sqlState == "42501")
    #expect(error?.message.contains("append-only") == true)
    #expect(throws: PostgresError.self) {
      try fixture.superuser("UPDATE eventlog.events SET type = 'Forged'")
    }
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 1)
  }

  @Test func anotherOwnerSeesNoneOfTheEventsAndCannotAppendAsTheFirst() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let bob = try fixture.customer("bob")
    let phone = try Device(alice)
    let restaurant = try await phone.addRestaurant()
    for index in 0..<3 { _ = try await phone.book(restaurant, name: "Alice \(index)") }
    _ = try await phone.push()

    let bobsPhone = try Device(bob)
    let pulled = try await bobsPhone.pull()
    #expect(pulled.pulled == 0 && pulled.cursor == 0)
    #expect(try await bobsPhone.allBookings().isEmpty)
    let sql = try connection(bob)
    // No role reads or writes the tables: only the functions do.
    for table in ["events", "device_marks", "owners"] {
      let peek = #expect(throws: PostgresError.self) {
        try sql.query("SELECT count(*) AS n FROM eventlog.\(table)", purpose: "peek")
      }
      #expect(peek?.sqlState == "42501", "\(table)")
    }
    // Nor the statistics, which showed other owners' values (role names, IDs) to anyone with SELECT.
    try fixture.superuser("ANALYZE eventlog.events")
    let stats = try sql.query(
      "SELECT count(*) AS n FROM pg_stats WHERE schemaname = 'eventlog'", purpose: "peek at the statistics")
    #expect(try stats.integer(0, "n") == 0)
    // Bob names Alice as the owner: refused.
    let forged = #expect(throws: PostgresError.self) {
      try sql.query(
        """
        INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
          schema_version, payload, recorded_at)
        VALUES ($1, 4, gen_random_uuid(), gen_random_uuid(), 1, 'booking-x', 'BookingDeleted', 1, '{}', now())
        """, [.text(alice.role)], purpose: "append as alice")
    }
    #expect(forged?.sqlState == "42501")
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 3)
  }

  @Test func noRoleWritesTheTablesAndAnOperatorsInsertMustContinueThePositions() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let sql = try connection(alice)
    let direct = #expect(throws: PostgresError.self) {
      try sql.query(
        """
        INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
          schema_version, payload, recorded_at)
        VALUES ('role:1', 1, gen_random_uuid(), gen_random_uuid(), 1, 'booking-x', 'T', 1, '{}', now())
        """, purpose: "insert directly")
    }
    #expect(direct?.sqlState == "42501")
    // An operator's insert by hand still keeps positions gap-free.
    func insert(_ position: Int) throws {
      try fixture.superuser(
        """
        INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
          schema_version, payload, recorded_at)
        VALUES ('role:1', \(position), gen_random_uuid(), gen_random_uuid(), 1, 'booking-x', 'T', 1, '{}', now())
        """)
    }
    try insert(1)
    let gap = #expect(throws: PostgresError.self) { try insert(3) }
    #expect(gap?.constraint == "events_positions_gap_free")
    try insert(2)
  }

  @Test func thePasswordIsNowhereInTheEnvironment() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = try Device(alice)
    _ = try await phone.book(try await phone.addRestaurant())
    _ = try await phone.push()
    _ = try await phone.pull()
    let needle = Array(alice.password.utf8)
    for file in ["data.mdb", "lock.mdb"] {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: phone.store.path + "/" + file)))
      let found = bytes.indices.dropLast(needle.count).contains {
        bytes[$0..<($0 + needle.count)].elementsEqual(needle)
      }
      #expect(!found, "the password is in \(file)")
    }
    let status = try phone.replicator.status()
    #expect(!"\(status)".contains(alice.password))
    #expect(!phone.transport.server.contains(alice.password))
  }
}
