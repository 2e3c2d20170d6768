import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import Testing

/// `remote init`'s schema: created once, upgraded in order, a newer one refused; operations
/// on a server without it name `eventlog remote init`.
@Suite("Server schema", .needsPostgres)
struct ServerSchemaTests {
  @Test func initIsIdempotent() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let transport = try PostgresTransport(url: fixture.ownerURL)
    defer { transport.close() }
    let first = try await transport.initializeSchema()
    #expect(first.from == 0 && first.to == ServerSchema.latestVersion)
    let second = try await transport.initializeSchema()
    #expect(second.from == ServerSchema.latestVersion && second.to == ServerSchema.latestVersion)
    try await transport.checkSchema()
  }

  @Test func anOlderSchemaIsUpgradedAndAnOlderClientIsToldToUpgradeWhenTheFunctionsChanged() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let transport = try PostgresTransport(url: fixture.ownerURL)
    defer { transport.close() }
    // A next version that changes what the functions take: it raises clients_from to itself.
    let next = """
      ALTER TABLE eventlog.device_marks ADD COLUMN label text;
      UPDATE eventlog.schema_info SET clients_from = \(ServerSchema.latestVersion + 1);
      """
    _ = try await transport.initializeSchema(migrations: ServerSchema.migrations)
    let upgrade = try await transport.initializeSchema(migrations: ServerSchema.migrations + [next])
    #expect(upgrade.from == ServerSchema.latestVersion && upgrade.to == ServerSchema.latestVersion + 1)
    // This build's schema is now older than the server's.
    await #expect(
      throws: ReplicationError.schemaTooNew(
        server: transport.server, found: ServerSchema.latestVersion + 1, supported: ServerSchema.latestVersion
      )
    ) {
      try await transport.checkSchema()
    }
  }

  @Test func aNewerSchemaThatKeepsTheFunctionsServesThisBuild() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let transport = try PostgresTransport(url: fixture.ownerURL)
    defer { transport.close() }
    // A next version that changes only how things work: clients_from stays.
    let next = "ALTER TABLE eventlog.device_marks ADD COLUMN label text"
    _ = try await transport.initializeSchema(migrations: ServerSchema.migrations + [next])
    try await transport.checkSchema()
    let device = try Device(try fixture.customer())
    let restaurant = try await device.addRestaurant()
    _ = try await device.book(restaurant)
    #expect(try await device.push().pushed == 1)
  }

  /// Version 3 changed what the functions take and return: a version 2 server is refused as
  /// too old (nothing is marked), and `remote init` upgrades it in place: its events keep their
  /// positions, their binary payloads become `{"$binary": …}` and come back as the same bytes,
  /// and their owner moves from the role's name to its OID.
  @Test func aVersion2ServerIsRefusedThenUpgradedInPlaceWithItsEvents() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    _ = try await owner.initializeSchema(migrations: Array(ServerSchema.migrations.prefix(2)))
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let first = try await phone.book(restaurant, name: "Ada")
    // What a version 2 client sent: the binary payload in base64, the time in microseconds.
    let event = try #require(try phone.store.events(from: 1).last)
    let sql = try PostgresConnection(PostgresConfiguration(url: customer.url))
    try sql.query(
      """
      SELECT * FROM eventlog.push($1::uuid, 2, jsonb_build_array(jsonb_build_object('id', $2::text, 'seq', 2,
        'stream', $3::text, 'type', $4::text, 'schemaVersion', 1, 'payload', $5::text,
        'recordedAt', $6::bigint, 'metadata', jsonb_strip_nulls(jsonb_build_object('origin', $7::text,
        'correlationID', $8::text)))))
      """,
      [
        .uuid(UUID()), .uuid(event.id), .text(event.stream.rawValue), .text(event.type),
        .text(Data(event.payload).base64EncodedString()), .integer(event.recordedAt.microsecondsSince1970),
        .text(event.metadata.origin), event.metadata.correlationID.map(PostgresValue.uuid) ?? .null,
      ], purpose: "push as a version 2 client")
    await #expect(
      throws: ReplicationError.schemaTooOld(server: phone.transport.server, found: 2, required: 3)
    ) { try await phone.push() }

    let upgrade = try await owner.initializeSchema()
    #expect(upgrade.from == 2 && upgrade.to == ServerSchema.latestVersion && !upgrade.api)
    let tablet = try Device(customer)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    let status = try tablet.replicator.status()
    #expect(pulled.pulled == 1 && pulled.unreadable == 0, "\(pulled) \(status)")
    #expect(try tablet.store.event(at: 2)?.payload == event.payload)
    #expect(try await tablet.allBookings().map(\.id) == [first.id])
    // The phone's mark of version 2 is gone: it pushes again, and the server knows the event (its
    // payload as JSON now, the server's as binary: not a conflict).
    let push = try await phone.push()
    #expect(push.pushed == 0 && push.alreadyStored == 1 && push.rejected == 0, "\(push)")
    #expect(try serverEventIDs(fixture, owner: customer.role) == [event.id])
  }

  /// The schema's push looks each ID of a batch up on its own. Version 1's lookup, planned by
  /// PL/pgSQL from a small table's statistics, read every row of the owner on every batch (a
  /// first push of a large outbox was quadratic): the rows a push reads say which plan ran.
  @Test(
    "a push reads a few rows besides its batch's, not the owner's whole log, with stale statistics",
    arguments: [ServerSchema.latestVersion])
  func pushLookupDoesNotScanTheOwnersLog(version: Int) async throws {
    let fixture = try await ServerFixture(initialized: false)
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    _ = try await owner.initializeSchema(migrations: Array(ServerSchema.migrations.prefix(version)))
    // Statistics stay those of the empty table, as they do for minutes after a first large push.
    try fixture.superuser("ALTER TABLE eventlog.events SET (autovacuum_enabled = false)")
    let connection = try PostgresConnection(PostgresConfiguration(url: try fixture.customer().url))
    let device = UUID()
    let batch = 500
    let key = String(repeating: "k", count: 64)
    let push = """
      SELECT count(*) AS outcomes FROM eventlog_api.push($1::uuid, '\(key)', $2::bigint, (
        SELECT jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'seq', g, 'stream', 'booking-' || g,
          'type', 'BookingCreated', 'schemaVersion', 1, 'payload', '{}'::jsonb, 'recordedAt', 0,
          'metadata', jsonb_build_object('origin', 'test')) ORDER BY g)
        FROM generate_series($3::bigint, $2::bigint) g))
      """
    func pushBatch(_ index: Int) throws {
      let rows = try connection.query(
        push,
        [.text(device.uuidString), .integer(Int64((index + 1) * batch)), .integer(Int64(index * batch + 1))],
        purpose: "push batch \(index + 1)")
      #expect(try rows.integer(0, "outcomes") == Int64(batch))
    }
    for index in 0..<40 { try pushBatch(index) }
    // PostgreSQL 15's pg_stat_xact_* show the backend's pending counts, which may still hold
    // earlier transactions' (they are flushed when the backend is idle for a second): the push's
    // own are the difference across it, inside one transaction.
    func rowsRead() throws -> Int64 {
      let read = try connection.query(
        """
        SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS tuples
        FROM pg_stat_xact_user_tables WHERE schemaname = 'eventlog' AND relname = 'events'
        """, purpose: "the rows read so far")
      return try read.integer(0, "tuples")
    }
    try connection.execute("BEGIN", purpose: "measure one push")
    let before = try rowsRead()
    try pushBatch(40)
    let tuples = try rowsRead() - before
    try connection.execute("COMMIT", purpose: "measure one push")
    // 20,000 rows of the owner before the batch: a scan reads them all; the lookups read none
    // (the IDs are new), the head and the gap check a few.
    #expect(tuples < Int64(batch), "a push of \(batch) events into a log of 20,000 read \(tuples) rows")
  }

  @Test func aNewerSchemaIsRefusedAndLeftAsItIs() async throws {
    let fixture = try await ServerFixture()
    try fixture.superuser("UPDATE eventlog.schema_info SET version = 99")
    let transport = try PostgresTransport(url: fixture.ownerURL)
    defer { transport.close() }
    let error = await #expect(throws: ServerSchema.InitError.self) { try await transport.initializeSchema() }
    #expect(error?.description.contains("newer than this build's") == true)
    let rows = try PostgresConnection(PostgresConfiguration(url: fixture.ownerURL)).query(
      "SELECT version FROM eventlog.schema_info", purpose: "check")
    #expect(try rows.integer(0, "version") == 99)
  }

  @Test func aServerWithoutTheSchemaNamesRemoteInit() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let customer = try fixture.customer()
    let transport = try PostgresTransport(url: customer.url)
    defer { transport.close() }
    let error = await #expect(throws: ReplicationError.self) { try await transport.checkSchema() }
    #expect(error?.description.contains("eventlog remote init") == true)
  }

  @Test func aRoleThatMayNotCreateSchemasCannotInit() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let customer = try fixture.customer()
    let transport = try PostgresTransport(url: customer.url)
    defer { transport.close() }
    let error = await #expect(throws: PostgresError.self) { try await transport.initializeSchema() }
    #expect(error?.sqlState == "42501")
  }
}
