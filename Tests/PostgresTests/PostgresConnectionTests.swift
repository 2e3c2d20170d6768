import Foundation
import Postgres
import PostgresTestSupport
import Testing

/// The libpq wrapper against a real server of the test's own.
@Suite("Postgres connection", .needsPostgres)
struct PostgresConnectionTests {
  let server: PostgresTestServer
  let database: String
  let owner: String
  let password: String

  init() throws {
    server = try PostgresTestServer.shared()
    (database, owner, password) = try server.createDatabase()
  }

  func connect(statementTimeout: Duration = .seconds(30)) throws -> PostgresConnection {
    var configuration = try PostgresConfiguration(
      url: server.url(user: owner, password: password, database: database))
    configuration.statementTimeout = statementTimeout
    return try PostgresConnection(configuration)
  }

  @Test func parametersTravelApartFromTheText() throws {
    let connection = try connect()
    let hostile = "'); DROP TABLE x; --"
    let rows = try connection.query(
      "SELECT $1::text AS t, $2::bigint AS n, $3::uuid AS u, $4::bytea AS b, $5::text AS missing",
      [.text(hostile), .integer(-42), .uuid(Self.id), .bytes([0, 1, 0xfe, 0xff]), .null], purpose: "echo")
    #expect(rows.count == 1)
    #expect(try rows.string(0, "t") == hostile)
    #expect(try rows.integer(0, "n") == -42)
    #expect(try rows.uuid(0, "u") == Self.id)
    #expect(try rows.bytes(0, "b") == [0, 1, 0xfe, 0xff])
    #expect(try rows.value(0, "missing") == nil)
    let empty = try connection.query("SELECT $1::bytea AS b", [.bytes([])], purpose: "empty bytea")
    #expect(try empty.bytes(0, "b") == [])
  }

  @Test func resultErrorsNameTheColumnAndRow() throws {
    let rows = try connect().query("SELECT 'x'::text AS t", purpose: "shape")
    #expect(throws: PostgresError.self) { try rows.integer(0, "t") }
    let error = #expect(throws: PostgresError.self) { try rows.string(0, "nope") }
    #expect(error?.kind == .unexpectedResult)
    #expect(error?.description.contains("'nope'") == true)
    #expect(error?.description.contains("shape") == true)
  }

  @Test func uuidsAreReadAsTheServerWritesThemAndNothingElse() throws {
    let connection = try connect()
    let rows = try connection.query(
      "SELECT md5(n::text)::uuid AS u, md5(n::text)::uuid::text AS t FROM generate_series(1, 300) AS n",
      purpose: "many UUIDs")
    #expect(rows.count == 300)
    for row in 0..<rows.count {
      #expect(try rows.uuid(row, "u") == UUID(uuidString: try rows.string(row, "t")))
    }
    let upper = try connection.query("SELECT upper($1::text) AS u", [.uuid(Self.id)], purpose: "upper case")
    #expect(try upper.uuid(0, "u") == Self.id)
    for text in [
      "", "0f0e0d0c-0b0a-4908-8706-05040302010", "0f0e0d0c-0b0a-4908-8706-05040302010g",
      "0f0e0d0c0b0a-4908-8706-0504030201000", "{0f0e0d0c-0b0a-4908-8706-050403020100}",
    ] {
      let rows = try connection.query("SELECT $1::text AS u", [.text(text)], purpose: "not a UUID")
      #expect(throws: PostgresError.self, "\(text)") { try rows.uuid(0, "u") }
    }
  }

  @Test func serverErrorsCarrySQLStateConstraintAndPurpose() throws {
    let connection = try connect()
    try connection.execute(
      "CREATE TABLE things (id int CONSTRAINT things_pk PRIMARY KEY); INSERT INTO things VALUES (1);",
      purpose: "create a table")
    let error = #expect(throws: PostgresError.self) {
      try connection.query("INSERT INTO things VALUES ($1)", [.integer(1)], purpose: "insert a duplicate")
    }
    #expect(error?.kind == .server)
    #expect(error?.sqlState == "23505")
    #expect(error?.constraint == "things_pk")
    #expect(error?.purpose == "insert a duplicate")
    #expect(error?.isTransient == false)
    #expect(error?.description.contains("duplicate key") == true)
    // The connection is still usable.
    #expect(try connection.query("SELECT count(*) AS n FROM things", purpose: "count").integer(0, "n") == 1)
  }

  @Test func aScriptThatFailsKeepsNothingOfItsTransaction() throws {
    let connection = try connect()
    #expect(throws: PostgresError.self) {
      try connection.execute(
        "BEGIN; CREATE TABLE half (x int); SELECT 1/0; COMMIT;", purpose: "a failing script")
    }
    let rows = try connection.query("SELECT to_regclass('half') IS NULL AS gone", purpose: "look")
    #expect(try rows.string(0, "gone") == "t")
  }

  @Test func aStatementPastItsDeadlineIsCancelledAndTheNextCallReconnects() throws {
    let connection = try connect(statementTimeout: .milliseconds(300))
    let started = ContinuousClock.now
    let error = #expect(throws: PostgresError.self) {
      try connection.query("SELECT pg_sleep(20)", purpose: "sleep")
    }
    #expect(error?.kind == .timeout)
    #expect(error?.isTransient == true)
    #expect(ContinuousClock.now - started < .seconds(5))
    #expect(try connection.query("SELECT 1 AS one", purpose: "after").integer(0, "one") == 1)
  }

  @Test func aLostConnectionIsReportedAsTransientAndReconnected() throws {
    let connection = try connect()
    let pid = try connection.query("SELECT pg_backend_pid() AS pid", purpose: "pid").integer(0, "pid")
    try server.superuser("SELECT pg_terminate_backend(\(pid))")
    let error = #expect(throws: PostgresError.self) {
      try connection.query("SELECT 1", purpose: "after termination")
    }
    #expect(error?.isTransient == true)
    #expect(try connection.query("SELECT 2 AS two", purpose: "reconnected").integer(0, "two") == 2)
  }

  @Test func notificationsArriveAndWaitingEndsAtTheTimeout() throws {
    let listener = try connect()
    try listener.listen("eventlog test")
    let started = ContinuousClock.now
    #expect(try listener.notifications(waitingUpTo: .milliseconds(200)).isEmpty)
    #expect(ContinuousClock.now - started >= .milliseconds(190))
    let sender = try connect()
    try sender.query("SELECT pg_notify($1, $2)", [.text("eventlog test"), .text("hello")], purpose: "notify")
    let received = try listener.notifications(waitingUpTo: .seconds(5))
    #expect(received == [PostgresNotification(channel: "eventlog test", payload: "hello")])
  }

  @Test func listeningResumesAfterReconnecting() throws {
    let listener = try connect()
    try listener.listen("again")
    let pid = try listener.query("SELECT pg_backend_pid() AS pid", purpose: "pid").integer(0, "pid")
    try server.superuser("SELECT pg_terminate_backend(\(pid))")
    #expect(throws: PostgresError.self) { try listener.notifications(waitingUpTo: .seconds(2)) }
    // The next call reconnects and listens again.
    #expect(try listener.notifications(waitingUpTo: .milliseconds(50)).isEmpty)
    try connect().query("SELECT pg_notify('again', '')", purpose: "notify")
    #expect(try listener.notifications(waitingUpTo: .seconds(5)).map(\.channel) == ["again"])
  }

  @Test func aWrongPasswordIsPermanentAndNeverPrinted() throws {
    // No word of the server's message in it: every run of 8 of a password's characters is cut
    // from messages (SecretRedaction), so "not-the-password-…" would cut "password" out of
    // "password authentication failed" too.
    let secret = "not-the-secret-7c1e"
    let configuration = try PostgresConfiguration(
      url: server.url(user: owner, password: secret, database: database))
    let error = #expect(throws: PostgresError.self) { try PostgresConnection(configuration) }
    #expect(error?.kind == .connect)
    #expect(error?.isTransient == false)
    #expect(error?.description.contains("password authentication failed") == true)
    #expect(error?.description.contains(secret) == false)
    #expect(configuration.server.contains(secret) == false)
    #expect(configuration.server.contains(owner))
  }

  @Test func aServerThatIsNotThereIsTransient() throws {
    let configuration = try PostgresConfiguration(
      url: "postgresql://nobody:secret-9f@/db?host=/nonexistent-dir&port=1")
    let error = #expect(throws: PostgresError.self) { try PostgresConnection(configuration) }
    #expect(error?.kind == .connect)
    #expect(error?.isTransient == true)
    #expect(error?.description.contains("secret-9f") == false)
  }

  @Test(arguments: ["http://example.com", "postgres://%zz", "mysql://x"])
  func anInvalidURLIsRefusedWithoutRepeatingIt(url: String) throws {
    let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: url) }
    #expect(error?.kind == .invalidInput)
  }

  @Test func transientClassification() {
    func error(_ state: String?, _ kind: PostgresError.Kind = .server) -> PostgresError {
      PostgresError(kind: kind, sqlState: state, purpose: "p", message: "m", server: "s")
    }
    for state in ["40001", "40P01", "57P01", "08006", "08001", "53300"] {
      #expect(error(state).isTransient, "\(state)")
    }
    for state in ["23505", "42501", "28P01", "3D000", "P0001"] {
      #expect(!error(state).isTransient, "\(state)")
    }
    #expect(error(nil, .connectionLost).isTransient)
    #expect(error(nil, .timeout).isTransient)
    #expect(!error(nil, .unexpectedResult).isTransient)
  }

  static let id = UUID(uuidString: "0f0e0d0c-0b0a-4908-8706-050403020100") ?? UUID()
}
