import Foundation
import PostgRESTTestSupport
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import ReplicationSupabase
import RestaurantBooking

/// A Supabase project's database on the benchmark's server, for `eventlog-https`: Supabase's auth
/// pieces (PostgRESTTestSupport's ``SupabaseAuthSchema``), the eventlog schema set up by its owner
/// in API mode (``ServerSchema/initialize``, as `eventlog remote init` does on such a database),
/// one signed-in user, and what a stand-in needs to serve it again in another process (its JWT
/// secret and anon key). Kept as JSON in a `replicate.pull` fixture (``ReplicationFixture``).
///
/// The owner of the user's events is `user:<auth.uid()>` (``ownerKey``), not a role: a device of a
/// Supabase app holds no database credentials; the PostgREST stand-in connects as `authenticator`
/// and switches to `authenticated` per request.
struct APIDatabase: Codable, Sendable {
  var database: String
  /// The database's owner, who ran `remote init` (Supabase's `postgres` role).
  var owner: BenchmarkServer.Role
  /// The project's JWT secret, which the stand-in verifies tokens with.
  var jwtSecret: String
  /// The `apikey` the stand-in's gateway accepts.
  var anonKey: String
  /// The signed-in user (`sub` of the access token, `auth.uid()` on the server).
  var user: UUID

  /// The user's owner key in `eventlog.events.owner`.
  var ownerKey: String { "user:" + user.uuidString.lowercased() }

  /// The same database as ``ReplicationDatabase`` sees one, for its outcome and clean-up: the
  /// role that connects is `authenticator` (the stand-in's pooled connections, whose backends
  /// ``ReplicationDatabase/backends(on:)`` then finds), the owner key the user's.
  var replicationDatabase: ReplicationDatabase {
    ReplicationDatabase(
      database: database,
      role: BenchmarkServer.Role(name: "authenticator", password: SupabaseAuthSchema.authenticatorPassword),
      owner: owner, ownerKey: ownerKey)
  }

  /// A new project on `server`: a database with Supabase's auth pieces, `remote init` run by its
  /// owner (which must set up API mode), and the stand-in in front of it, listening; the caller
  /// stops it (``APIProject/stop()``).
  /// - Throws: when the project cannot be set up, or `remote init` did not set up API mode.
  static func create(on server: PostgresTestServer) throws -> APIProject {
    // The stand-in's defaults (a pool of 4 connections: a push uses one at a time, a pull two, the
    // next page fetched while one is stored), without its log of requests.
    let project = try SupabaseTestProject(
      exposedSchemas: [SupabaseTransport.exposedSchema], server: server, configure: APIProject.configure)
    do {
      let connection = try PostgresConnection(PostgresConfiguration(url: project.ownerURL))
      defer { connection.close() }
      let report = try ServerSchema.initialize(
        on: connection, replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes)
      guard report.api else {
        throw BenchmarkServer.Failure(
          description: "remote init did not set up API mode on the stand-in's database")
      }
    } catch {
      project.stop()
      throw error
    }
    let record = APIDatabase(
      database: project.database,
      owner: BenchmarkServer.Role(name: project.owner, password: project.ownerPassword),
      jwtSecret: project.jwtSecret, anonKey: project.anonKey, user: UUID())
    return APIProject(record: record, standIn: project.standIn)
  }

  /// A stand-in in front of this database (made by ``create(on:)``, possibly in another process),
  /// listening; the caller stops it.
  /// - Throws: when it cannot listen or reach the database.
  func serve(on server: PostgresTestServer) throws -> APIProject {
    var configuration = PostgRESTStandIn.Configuration(
      databaseURL: server.url(
        user: "authenticator", password: SupabaseAuthSchema.authenticatorPassword, database: database),
      jwtSecret: jwtSecret, apiKeys: [anonKey], exposedSchemas: [SupabaseTransport.exposedSchema])
    APIProject.configure(&configuration)
    return APIProject(record: self, standIn: try PostgRESTStandIn(configuration))
  }
}

/// An ``APIDatabase`` with the PostgREST stand-in in front of it, in this process: what
/// `eventlog-https` talks to.
struct APIProject {
  let record: APIDatabase
  let standIn: PostgRESTStandIn

  /// The stand-in's configuration in the benchmark: its defaults, but no log of the requests (a
  /// push's bodies would stay in this process's memory, and in `eventlog-https`'s figures).
  static func configure(_ configuration: inout PostgRESTStandIn.Configuration) {
    configuration.keepsRequests = false
  }

  /// A transport to the stand-in with the user's access token (valid for an hour), as an app
  /// gives it: the project URL, the anon key, a token provider.
  func transport() throws -> SupabaseTransport {
    let token = TestJWT.accessToken(
      subject: record.user, expiresAt: Date().addingTimeInterval(3600), secret: record.jwtSecret)
    return try SupabaseTransport(projectURL: standIn.baseURL, apiKey: record.anonKey) { _ in token }
  }

  /// The CPU seconds of the server backends serving the stand-in (its pooled `authenticator`
  /// connections to the database), looked up at each call: the pool opens connections as
  /// requests need them.
  func backendCPU(on server: PostgresTestServer) -> () -> Double {
    let database = record.replicationDatabase
    return {
      guard let pids = try? database.backends(on: server) else { return 0 }
      return ReplicationDatabase.cpuSeconds(of: pids)
    }
  }

  /// Stops the stand-in and closes its pooled connections.
  func stop() { standIn.stop() }
}
