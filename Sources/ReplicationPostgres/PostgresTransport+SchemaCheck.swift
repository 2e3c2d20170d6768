import Postgres
import Replication

extension PostgresTransport {
  /// Reads `eventlog.schema_info` and checks that this build speaks the server's schema version.
  /// - Throws: `ReplicationError.schemaMissing` when the server has no `eventlog` schema,
  ///   `ReplicationError.schemaTooOld` or `ReplicationError.schemaTooNew`, or a ``PostgresError``.
  public func checkSchema() async throws {
    let server = self.server
    let found: (version: Int, clientsFrom: Int?)
    do {
      found = try await query("read the eventlog schema version") { connection, timeout in
        // `clients_from` arrived with version 2: read through the row's JSON so that a version 1
        // server answers too (null).
        let rows = try connection.query(
          """
          SELECT s.version, (to_jsonb(s) ->> 'clients_from')::integer AS clients_from
          FROM eventlog.schema_info s
          """, purpose: "read the eventlog schema version", timeout: timeout)
        guard !rows.isEmpty else { return (0, nil) }
        let version = Int(try rows.integer(0, "version", as: Int64.self))
        guard try rows.value(0, "clients_from") != nil else { return (version, nil) }
        return (version, Int(try rows.integer(0, "clients_from", as: Int64.self)))
      }
    } catch let error as PostgresError where ["3F000", "42P01"].contains(error.sqlState ?? "") {
      throw ReplicationError.schemaMissing(server: server)
    }
    try Self.check(server: server, version: found.version, clientsFrom: found.clientsFrom)
  }

  /// Whether this build may use a server whose schema is `version`, which says that clients of
  /// schema `clientsFrom` and later may use it (`nil`: the server predates the column, and only
  /// clients of its own version or later may).
  static func check(server: String, version: Int, clientsFrom: Int?) throws {
    if version == 0 { throw ReplicationError.schemaMissing(server: server) }
    if version > ServerSchema.latestVersion && (clientsFrom ?? version) > ServerSchema.latestVersion {
      throw ReplicationError.schemaTooNew(
        server: server, found: version, supported: ServerSchema.latestVersion)
    }
    if version < ServerSchema.oldestServerVersion {
      throw ReplicationError.schemaTooOld(
        server: server, found: version, required: ServerSchema.oldestServerVersion)
    }
  }
}
