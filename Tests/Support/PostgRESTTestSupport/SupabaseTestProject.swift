import Foundation
import PostgresTestSupport

/// A Supabase project for a test: a database of its own on a throwaway PostgreSQL (the process's
/// shared server by default) with Supabase's auth pieces, a JWT secret and anon key, and the
/// PostgREST stand-in in front of it.
///
/// ```swift
/// let project = try SupabaseTestProject(exposedSchemas: ["eventlog_api"])
/// defer { project.stop() }
/// try project.superuser("CREATE SCHEMA eventlog_api; …")      // or `eventlog remote init`
/// let token = project.accessToken(for: userID)                // a signed-in user's JWT
/// // POST \(project.baseURL)/rest/v1/rpc/<function> with apikey: project.anonKey,
/// // Authorization: Bearer token, Content-Profile: eventlog_api.
/// project.standIn.inject(.dropAfterCommit)
/// ```
public final class SupabaseTestProject: Sendable {
  /// The PostgreSQL server.
  public let server: PostgresTestServer
  /// The project's database.
  public let database: String
  /// The database's owner (not a superuser, as Supabase's `postgres` role): the role that runs
  /// `eventlog remote init`.
  public let owner: String
  /// The owner's password.
  public let ownerPassword: String
  /// The JWT secret the stand-in verifies tokens with.
  public let jwtSecret: String
  /// The anon key: the `apikey` the gateway accepts (a token of role `anon`, as Supabase's legacy
  /// keys are).
  public let anonKey: String
  /// The stand-in, listening.
  public let standIn: PostgRESTStandIn

  /// Makes the database, installs the auth pieces (``SupabaseAuthSchema``) and starts the
  /// stand-in.
  /// - Parameters:
  ///   - exposedSchemas: the schemas PostgREST exposes, the default first (they need not exist
  ///     yet: functions are looked up per request).
  ///   - server: the server, or `nil` for ``PostgresTestServer/shared()``.
  ///   - configure: changes to the stand-in's configuration (pool size, clock skew…).
  /// - Throws: when the server, the database or the stand-in cannot be set up.
  public init(
    exposedSchemas: [String], server: PostgresTestServer? = nil,
    configure: (inout PostgRESTStandIn.Configuration) -> Void = { _ in }
  ) throws {
    let server = try server ?? PostgresTestServer.shared()
    self.server = server
    (database, owner, ownerPassword) = try server.createDatabase()
    try SupabaseAuthSchema.install(on: server, database: database)
    // The database's owner stands for Supabase's `postgres` role, which may use the schema `auth`
    // and its functions (supabase/supabase, docker/volumes/db/init/
    // 20211115181400-update-auth-permissions.sql: `GRANT USAGE ON SCHEMA auth TO postgres`,
    // `GRANT ALL ON ALL ROUTINES IN SCHEMA auth TO postgres`).
    try server.superuser(
      """
      GRANT USAGE ON SCHEMA auth TO "\(owner)";
      GRANT ALL ON ALL ROUTINES IN SCHEMA auth TO "\(owner)";
      """, database: database)
    jwtSecret = "stand-in-jwt-secret-" + UUID().uuidString.lowercased()
    anonKey = TestJWT.anonKey(secret: jwtSecret)
    var configuration = PostgRESTStandIn.Configuration(
      databaseURL: server.url(
        user: "authenticator", password: SupabaseAuthSchema.authenticatorPassword, database: database),
      jwtSecret: jwtSecret, apiKeys: [anonKey], exposedSchemas: exposedSchemas)
    configure(&configuration)
    standIn = try PostgRESTStandIn(configuration)
  }

  /// The project URL a client is given (`http://127.0.0.1:port`).
  public var baseURL: URL { standIn.baseURL }

  /// The libpq URL of the database's owner.
  public var ownerURL: String { server.url(user: owner, password: ownerPassword, database: database) }

  /// A signed-in user's access token: role `authenticated`, `sub` = `user`, expiring `expiresIn`
  /// from now.
  public func accessToken(
    for user: UUID, expiresIn: Duration = .seconds(3600), role: String = "authenticated"
  ) -> String {
    let seconds = Double(expiresIn.components.seconds)
    return TestJWT.accessToken(
      subject: user, role: role, expiresAt: Date().addingTimeInterval(seconds), secret: jwtSecret)
  }

  /// Runs `sql` as the superuser on the project's database.
  /// - Throws: the server's error.
  public func superuser(_ sql: String) throws {
    try server.superuser(sql, database: database)
  }

  /// Stops the stand-in (the database stays, with the server).
  public func stop() { standIn.stop() }
}
