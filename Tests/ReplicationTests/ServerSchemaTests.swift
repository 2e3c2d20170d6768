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
      ALTER TABLE eventlog.devices ADD COLUMN label text;
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
    let next = "ALTER TABLE eventlog.devices ADD COLUMN label text"
    _ = try await transport.initializeSchema(migrations: ServerSchema.migrations + [next])
    try await transport.checkSchema()
    let device = try Device(try fixture.customer())
    let restaurant = try await device.addRestaurant()
    _ = try await device.book(restaurant)
    #expect(try await device.push().pushed == 1)
  }

  @Test func aVersion1ServerServesThisBuildAndIsUpgradedInPlace() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    _ = try await owner.initializeSchema(migrations: Array(ServerSchema.migrations.prefix(1)))
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let first = try await phone.book(restaurant, name: "Ada")
    #expect(try await phone.push().pushed == 1)

    let upgrade = try await owner.initializeSchema()
    #expect(upgrade.from == 1 && upgrade.to == ServerSchema.latestVersion)
    let second = try await phone.book(restaurant, name: "Grace")
    #expect(try await phone.push().pushed == 1)
    let tablet = try Device(customer)
    try await tablet.addRestaurant(id: restaurant)
    #expect(try await tablet.pull().pulled == 2)
    #expect(Set(try await tablet.allBookings().map(\.id)) == [first.id, second.id])
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
    let push = """
      SELECT count(*) AS outcomes FROM eventlog.push($1::uuid, $2::bigint, (
        SELECT jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'seq', g, 'stream', 'booking-' || g,
          'type', 'BookingCreated', 'schemaVersion', 1, 'payload', '', 'recordedAt', 0) ORDER BY g)
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
    try connection.execute("BEGIN", purpose: "measure one push")
    try pushBatch(40)
    let read = try connection.query(
      """
      SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS tuples
      FROM pg_stat_xact_user_tables WHERE schemaname = 'eventlog' AND relname = 'events'
      """, purpose: "the rows the push read")
    try connection.execute("COMMIT", purpose: "measure one push")
    let tuples = try read.integer(0, "tuples")
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
