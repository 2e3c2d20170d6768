import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Synchronization

/// The throwaway PostgreSQL server of the replicate workloads: PostgresTestSupport's
/// ``PostgresTestServer`` (initdb in a temporary directory, a Unix socket there, no TCP port;
/// `fsync` and `full_page_writes` off, for both systems alike).
///
/// The parent starts one for the run when a replicate workload is planned, and stops it (removing
/// its files) when the run ends; should the parent die first, the server's watchdog stops it. The
/// parent's children attach to it by its ``Endpoint``.
enum BenchmarkServer {
  /// Where the server listens: enough for a child process to attach.
  struct Endpoint: Codable, Sendable {
    var directory: String
    var port: Int
  }

  /// The server could not be used.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The server of this child process's request (set by ``ChildMain``).
  // nonisolated(unsafe): written once, at the start of a child process, before any task or thread
  // that reads it exists (ChildMain.run); only read afterwards.
  nonisolated(unsafe) static var endpoint: Endpoint?

  /// The options of every replicator the benchmark makes: the library's, but with 5 minutes
  /// without progress before a push or pull gives up instead of 30 s. The workloads measure
  /// throughput on an idle machine, where nothing is retried; the benchmark's own tests run them
  /// beside the whole test suite, whose load once held one of their statements past the 30 s
  /// ("gave up after retrying for 30 s … push 144 data subjects' keys").
  static let replicationOptions: ReplicationOptions = {
    var options = ReplicationOptions()
    options.retryFor = .seconds(300)
    return options
  }()

  /// Starts the run's server (the parent).
  /// - Throws: ``Failure`` naming the cause: no PostgreSQL binaries (install the `postgresql`
  ///   package: `bash .ci/setup`), or initdb or the start failing.
  static func start() throws -> PostgresTestServer {
    if let reason = PostgresTestServer.unavailableReason {
      throw Failure(description: "the replicate workloads need a PostgreSQL server: \(reason)")
    }
    do {
      return try PostgresTestServer()
    } catch {
      throw Failure(description: "cannot start the benchmark's PostgreSQL server: \(error)")
    }
  }

  /// The parent's server, attached to from this child (one instance per process).
  static func attached() throws -> PostgresTestServer {
    try attachedServer.withLock { attached in
      if let attached { return attached }
      guard let endpoint else {
        throw Failure(
          description: "no PostgreSQL server was started for this run (a replicate workload needs one)")
      }
      let server = try PostgresTestServer(attachingTo: endpoint.directory, port: endpoint.port)
      attached = server
      return server
    }
  }

  private static let attachedServer = Mutex<PostgresTestServer?>(nil)

  /// The login role this child process connects as, created on first use: a customer, as on a
  /// shared server, neither the database's owner nor a superuser (row-level security applies).
  static func customer(on server: PostgresTestServer) throws -> Role {
    try customerRole.withLock { role in
      if let role { return role }
      let made = Role(
        name: server.uniqueName("bench"), password: "pw" + UUID().uuidString.prefix(12).lowercased())
      try server.createRole(made.name, password: made.password)
      role = made
      return made
    }
  }

  private static let customerRole = Mutex<Role?>(nil)

  /// A login role and its password.
  struct Role: Codable, Sendable {
    var name: String
    var password: String
  }
}

/// A database of the benchmark's server with the eventlog schema (``ServerSchema/initialize``,
/// run by the database's owner with the domain's replicated stream prefixes, as `eventlog remote
/// init` is), used by one customer role.
///
/// `eventlog` connects as the customer, as a device does: the tables are out of its reach, and
/// the functions of `eventlog_api` derive its owner key (`role:<OID>`). `libpq-raw` connects as
/// the database's owner, who owns the tables (the only role besides a superuser that can write
/// them under schema version 3), and names the customer's owner key (``ownerKey``) itself.
struct ReplicationDatabase: Codable, Sendable {
  var database: String
  /// The customer: the role `eventlog` connects as.
  var role: BenchmarkServer.Role
  /// The database's owner, who ran `remote init` and owns the tables: the role `libpq-raw`
  /// connects as.
  var owner: BenchmarkServer.Role
  /// The customer's owner key in `eventlog.events.owner`: `role:<its OID>`.
  var ownerKey: String

  /// A fresh database, owned by a new role that initializes its schema; `role` will use it.
  static func create(
    on server: PostgresTestServer, for role: BenchmarkServer.Role
  ) throws -> ReplicationDatabase {
    let (database, owner, password) = try server.createDatabase()
    let connection = try PostgresConnection(
      PostgresConfiguration(url: server.url(user: owner, password: password, database: database)))
    defer { connection.close() }
    try ServerSchema.initialize(
      on: connection, replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes)
    let oid = try connection.query(
      "SELECT oid::text AS oid FROM pg_catalog.pg_roles WHERE rolname = $1", [.text(role.name)],
      purpose: "find the customer's role"
    ).string(0, "oid")
    return ReplicationDatabase(
      database: database, role: role, owner: BenchmarkServer.Role(name: owner, password: password),
      ownerKey: "role:" + oid)
  }

  /// The URL the customer connects with.
  func url(on server: PostgresTestServer) -> String {
    server.url(user: role.name, password: role.password, database: database)
  }

  /// The URL the database's owner connects with.
  func ownerURL(on server: PostgresTestServer) -> String {
    server.url(user: owner.name, password: owner.password, database: database)
  }

  /// Runs `body` on a superuser connection to this database (which sees every owner's rows).
  func asSuperuser<R>(on server: PostgresTestServer, _ body: (PostgresConnection) throws -> R) throws -> R {
    let connection = try PostgresConnection(PostgresConfiguration(url: server.url(database: database)))
    defer { connection.close() }
    return try body(connection)
  }

  /// Drops the database (closing whatever is still connected to it).
  func drop(on server: PostgresTestServer) throws {
    try server.superuser("DROP DATABASE IF EXISTS \"\(database)\" WITH (FORCE)")
  }

  /// The process IDs of the customer's server backends on this database (its connections).
  func backends(on server: PostgresTestServer) throws -> [Int32] {
    let connection = try PostgresConnection(PostgresConfiguration(url: server.url()))
    defer { connection.close() }
    let rows = try connection.query(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND usename = $2 AND backend_type = 'client backend'",
      [.text(database), .text(role.name)], purpose: "find the benchmark's server backends")
    return try (0..<rows.count).map { try rows.integer($0, "pid", as: Int32.self) }
  }

  /// The CPU seconds (user + system) the processes `pids` have used so far, from `/proc`
  /// (10 ms ticks); a process that ended counts 0.
  static func cpuSeconds(of pids: [Int32]) -> Double {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return pids.reduce(0) { total, pid in
      guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
      else { return total }
      // After "pid (comm) ": state is field 3, utime and stime fields 14 and 15.
      let fields = text[text.index(after: close)...].split(separator: " ")
      guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
        return total
      }
      return total + (user + system) / max(1, ticks)
    }
  }

  /// What the server holds after a push of `device` (whose secret key is `deviceKey`), as one
  /// outcome line:
  ///
  /// - `serverEvents=` every event the server holds, `owned=` those under the customer's owner
  ///   key, `binary=` those whose payload is `{"$binary": …}` (no JSON form: 0 when the pusher
  ///   converted every payload), `owners=` the customer's rows of `eventlog.owners`;
  /// - `marks=` the rows of `eventlog.device_marks`, `mark=` the pushed mark kept for the
  ///   customer's device under the SHA-256 of its key, `markLast=` the last sequence and event ID
  ///   that mark acknowledges;
  /// - `fingerprint=` the server's MD5 of every column of every event but the owner and
  ///   `stored_at` (position, ID, origin device and sequence, stream, type, schema version, the
  ///   MD5 of the payload's `jsonb` text, the metadata's, recorded-at to the microsecond), in
  ///   position order.
  func pushOutcome(on server: PostgresTestServer, device: UUID, deviceKey: String) throws -> String {
    try asSuperuser(on: server) { connection in
      let events = try connection.query(
        """
        SELECT count(*) AS n, count(*) FILTER (WHERE owner = $1) AS owned,
          count(*) FILTER (WHERE payload ? '$binary') AS binary,
          (SELECT count(*) FROM eventlog.owners o WHERE o.owner = $1) AS owners,
          coalesce(md5(string_agg(concat_ws('|', position, id, origin_device, origin_sequence, pushed_by,
            pushed_sequence, stream, type, schema_version, md5(payload::text), metadata::text,
            (extract(epoch FROM recorded_at) * 1000000)::bigint, pg_catalog.array_to_string(subjects, ' ')),
            ',' ORDER BY position)), '-') AS hash
        FROM eventlog.events
        """, [.text(ownerKey)], purpose: "fingerprint the pushed events")
      // The data subjects' keys stored under the customer's owner key (server schema version 6).
      let keys = try connection.query(
        """
        SELECT count(*) AS n,
          coalesce(md5(string_agg(subject::text || ':' || encode(key, 'hex'), ',' ORDER BY subject)), '-') AS hash
        FROM eventlog.subject_keys WHERE owner = $1
        """, [.text(ownerKey)], purpose: "fingerprint the pushed keys")
      // The server's chain (its values depend on the owner, which differs between systems) must
      // recompute from the rows; the heads attested under the device's key are the local log's.
      let breaks = try connection.query(ServerSchema.chainBreaksSQL, purpose: "recompute the server's chain")
      let attested = try connection.query(
        """
        SELECT count(*) AS n, coalesce(string_agg(sequence || ':' || encode(head, 'hex') || '@' || server_position,
          ',' ORDER BY attestation), '-') AS heads
        FROM eventlog.attested_heads
        WHERE owner = $1 AND device = $2 AND key_hash = sha256(convert_to($3, 'UTF8'))
        """, [.text(ownerKey), .uuid(device), .text(deviceKey)], purpose: "read the attested heads")
      let marks = try connection.query(
        """
        SELECT count(*) AS n, coalesce(max(pushed_through) FILTER (WHERE mine), 0) AS mark,
          coalesce(max(last_sequence) FILTER (WHERE mine)::text, '-') AS last_sequence,
          coalesce(max(last_id::text) FILTER (WHERE mine), '-') AS last_id
        FROM (
          SELECT d.*, d.owner = $1 AND d.device = $2
            AND d.key_hash = sha256(convert_to($3, 'UTF8')) AS mine
          FROM eventlog.device_marks d
        ) d
        """, [.text(ownerKey), .uuid(device), .text(deviceKey)], purpose: "read the device marks")
      return "serverEvents=\(try events.string(0, "n")) owned=\(try events.string(0, "owned")) "
        + "binary=\(try events.string(0, "binary")) owners=\(try events.string(0, "owners")) "
        + "marks=\(try marks.string(0, "n")) mark=\(try marks.string(0, "mark")) "
        + "markLast=\(try marks.string(0, "last_sequence"))/\(try marks.string(0, "last_id")) "
        + "fingerprint=\(try events.string(0, "hash")) chainBreaks=\(try breaks.string(0, "breaks")) "
        + "attested=\(try attested.string(0, "n")) heads=\(try attested.string(0, "heads")) "
        + "keys=\(try keys.string(0, "n")) keysHash=\(try keys.string(0, "hash"))"
    }
  }
}
