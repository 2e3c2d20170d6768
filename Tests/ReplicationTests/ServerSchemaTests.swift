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

  @Test func anOlderSchemaIsUpgradedAndAnOlderClientIsToldToUpgradeTheServer() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let transport = try PostgresTransport(url: fixture.ownerURL)
    defer { transport.close() }
    let version2 = "ALTER TABLE eventlog.devices ADD COLUMN label text"
    _ = try await transport.initializeSchema(migrations: ServerSchema.migrations)
    let upgrade = try await transport.initializeSchema(migrations: ServerSchema.migrations + [version2])
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
