import Foundation
import HTTPTestSupport
import Postgres
import Synchronization

/// A stand-in for a Supabase project's REST API (its gateway and PostgREST) on a loopback port,
/// calling functions of a real PostgreSQL: what the HTTPS replication transport talks to in tests.
///
/// No PostgREST binary can be installed here, so this follows PostgREST's documented behaviour and
/// source (PostgREST 14, github.com/PostgREST/postgrest; the files are named where each rule is
/// implemented) for the part the transport uses:
///
/// - **Routes.** `POST /rest/v1/rpc/<function>` is the project URL's path through Supabase's
///   gateway, which checks the `apikey` header against the project's keys (missing: 401
///   `{"message":"No API key found in request","hint":…}`; wrong: 401
///   `{"message":"Invalid API key","hint":"Double check your Supabase `anon` or `service_role` API
///   key."}`, the hosted gateway's answers) and strips `/rest/v1` (Supabase's `kong.yml`: route
///   `rest-v1`, `strip_path: true`). `POST /rpc/<function>` is PostgREST itself, behind the gateway:
///   no `apikey` check. Either way the function sees `request.path` = `/rpc/<function>`. Tables,
///   `GET` and other methods are not served (404 `PGRST125`, 405 `PGRST117`).
/// - **Authentication** (docs: "Authentication"; `Auth/Jwt.hs`): `Authorization: Bearer <JWT>`
///   verified by ``JWTVerifier`` (HS256 under the JWT secret, `exp`/`nbf`/`iat` with a 30 s skew;
///   401 `PGRST301`/`PGRST303` with `WWW-Authenticate: Bearer error="invalid_token", …`); the role is
///   the `role` claim, or the anonymous role (`anon`) for a token without one and for a request
///   without a bearer token.
/// - **Schema** (docs: "Schemas"; `ApiRequest.hs` `getSchema`): a `POST` chooses it with
///   `Content-Profile`, which must name an exposed schema (else 406 `PGRST106`, "Invalid schema:
///   x", hint "Only the following schemas are exposed: …"); without one, the first exposed schema.
///   (`Accept-Profile` chooses for `GET`, which the stand-in does not serve.)
/// - **The call** (docs: "Functions as RPC"; `Plan.hs` `findProc`, `QueryBuilder.hs`
///   `callPlanToQuery`): the JSON object's keys pick the function among its overloads by parameter
///   names (none: 404 `PGRST202`; several: 300 `PGRST203`), arguments are bound by name with the
///   parameters' types from `pg_proc`, and the answer is the scalar, the object, or the array.
/// - **The transaction** (docs: "Transactions"; `MainTx.hs`, `Query/PreQuery.hs` `txVarQuery`):
///   one per request on a pooled connection logged in as `authenticator`: `BEGIN` (`READ WRITE`
///   for a volatile function, `READ ONLY` for a stable or immutable one), then in one statement
///   `set_config` of `search_path` (the schema, then `public`), the role's own settings (such as
///   Supabase's statement timeouts), `role` (PostgREST's `SET LOCAL ROLE`), `request.jwt.claims`
///   (the claims with `role` set), `request.method`, `request.path`, `request.headers` (a JSON
///   object, lower-case names) and `request.cookies`, all transaction-local; then the call; then
///   `COMMIT`, or `ROLLBACK` on an error.
/// - **Errors**: ``PostgRESTError``: PostgreSQL's SQLSTATE, message, detail and hint with PostgREST's
///   status for it; a lost database connection 503 `PGRST001` (the next request connects again).
///
/// Tests can make it misbehave (``Fault``), stop and start it on the same port, and read what it
/// was sent (``requests``: credentials redacted).
public final class PostgRESTStandIn: Sendable {
  /// How the stand-in is set up.
  public struct Configuration: Sendable {
    /// A libpq URL that logs in as the authenticator role (see ``SupabaseAuthSchema``).
    public var databaseURL: String
    /// The project's JWT secret (HS256).
    public var jwtSecret: String
    /// The API key the gateway accepts in `apikey` (the anon key).
    public var apiKeys: [String]
    /// The schemas PostgREST exposes (`db-schemas`), the first being the default.
    public var exposedSchemas: [String]
    /// Added to every request's `search_path` after its schema (`db-extra-search-path`; Supabase's
    /// default is `public`).
    public var extraSearchPath: [String] = ["public"]
    /// The role of a request without a token (`db-anon-role`; Supabase: `anon`).
    public var anonymousRole = "anon"
    /// How many connections the pool holds (`db-pool`).
    public var poolSize = 4
    /// How long a request waits for a pooled connection before a 504 (`db-pool-acquisition-timeout`,
    /// 10 s).
    public var acquisitionTimeout: Duration = .seconds(10)
    /// The clock skew allowed on the time claims, in seconds (PostgREST: 30).
    public var clockSkewSeconds: Int64 = 30
    /// The client-side deadline of one statement (the libpq wrapper cancels it after that); a
    /// function's own `statement_timeout` is the server's business.
    public var statementDeadline: Duration = .seconds(60)
    /// The loopback address to listen on.
    public var host = "127.0.0.1"
    /// The port, or 0 for one the system assigns (kept across ``stop()`` and ``start()``).
    public var port: UInt16 = 0
    /// Whether each request is kept for ``PostgRESTStandIn/requests`` (its body included). The
    /// benchmark turns it off: a long push's bodies would otherwise stay in memory.
    public var keepsRequests = true

    /// Creates a configuration with the defaults above.
    /// - Parameters:
    ///   - databaseURL: the authenticator's libpq URL.
    ///   - jwtSecret: the JWT secret.
    ///   - apiKeys: the keys the gateway accepts in `apikey`.
    ///   - exposedSchemas: the exposed schemas, the default first; not empty.
    public init(databaseURL: String, jwtSecret: String, apiKeys: [String], exposedSchemas: [String]) {
      precondition(!exposedSchemas.isEmpty, "PostgREST exposes at least one schema")
      self.databaseURL = databaseURL
      self.jwtSecret = jwtSecret
      self.apiKeys = apiKeys
      self.exposedSchemas = exposedSchemas
    }
  }

  /// A misbehaviour a test switches on, for the next request(s) it applies to.
  public enum Fault: Sendable, Equatable {
    /// A 502 with an HTML body (no JSON), as a gateway whose upstream is down answers; the request
    /// goes no further.
    case badGateway
    /// The connection is closed without an answer before the request reaches the database (a
    /// gateway that dies on receipt).
    case dropBeforeTransaction
    /// The request runs to its end (its transaction committed, or rolled back on an error), then
    /// the connection is closed without an answer: the client cannot know it was done.
    case dropAfterCommit
    /// The request runs to its end, and the answer is held back this long; a client that gives
    /// up meanwhile gets nothing, and what committed stays committed.
    case slowAnswer(Duration)
  }

  /// One request as the stand-in saw it, without credentials.
  public struct LoggedRequest: Sendable {
    /// The method, for example `POST`.
    public var method: String
    /// The path as sent, for example `/rest/v1/rpc/echo`.
    public var path: String
    /// The function the path names, if it names one.
    public var function: String?
    /// The header fields by lower-cased name; the values of `apikey`, `authorization` (after its
    /// scheme), `cookie` and `proxy-authorization` are replaced by `[redacted]`.
    public var headers: [String: String]
    /// The request body as text.
    public var body: String
    /// The role the request ran as (or would have), once its token was accepted.
    public var role: String?
    /// The token's `sub` claim, when it had one.
    public var subject: String?
    /// The status answered, or `nil` when the connection was closed without an answer.
    public var status: Int?
    /// The error's `code` (a SQLSTATE or `PGRST…`) when the answer was an error; `apikey` when the
    /// gateway refused the API key.
    public var errorCode: String?
    /// Whether the request's transaction committed.
    public var committed = false
    /// The fault applied to it, if any.
    public var fault: Fault?
  }

  /// The configuration it was created with (its `port` the one it listens on).
  public let configuration: Configuration
  private let core: StandInCore
  private let listener = Mutex<LoopbackHTTPServer?>(nil)

  /// Starts listening.
  /// - Throws: `POSIXError` when the port cannot be listened on, ``PostgRESTError`` `PGRST000`
  ///   when the database cannot be reached as the authenticator.
  public init(_ configuration: Configuration) throws {
    var databaseConfiguration = try PostgresConfiguration(url: configuration.databaseURL)
    databaseConfiguration.applicationName = "postgrest-stand-in"
    databaseConfiguration.statementTimeout = configuration.statementDeadline
    let pool = ConnectionPool(
      configuration: databaseConfiguration, size: configuration.poolSize,
      acquisitionTimeout: configuration.acquisitionTimeout)
    // Fails early on a wrong URL or password, as PostgREST does at start.
    try pool.withConnection { _ in }
    core = StandInCore(configuration: configuration, pool: pool)
    let server = try Self.listen(configuration, core: core, retryingFor: .zero)
    var listening = configuration
    listening.port = server.port
    self.configuration = listening
    listener.withLock { $0 = server }
  }

  /// `http://host:port`: the project URL a client is given (it appends `/rest/v1/rpc/<function>`).
  public var baseURL: URL {
    guard let url = URL(string: "http://\(configuration.host):\(configuration.port)") else {
      preconditionFailure("bad host \(configuration.host)")
    }
    return url
  }

  /// Whether it is listening.
  public var isRunning: Bool { listener.withLock { $0 != nil } }

  /// Stops listening (a gateway going away); requests under way run to their end. The pooled
  /// database connections are closed (those in use when their request ends).
  public func stop() {
    let server = listener.withLock { listener in
      defer { listener = nil }
      return listener
    }
    server?.stop()
    core.pool.close()
  }

  /// Listens again on the same port after ``stop()`` (waiting up to 5 s for the port to be free);
  /// does nothing while running.
  /// - Throws: `POSIXError` when the port stays taken.
  public func start() throws {
    try listener.withLock { listener in
      guard listener == nil else { return }
      core.pool.reopen()
      listener = try Self.listen(configuration, core: core, retryingFor: .seconds(5))
    }
  }

  /// Signs `user` in as Supabase Auth would: an access token valid for `lifetime`, and the
  /// refresh token that renews it once at `POST /auth/v1/token?grant_type=refresh_token`.
  public func signIn(
    _ user: UUID, lifetime: Duration = .seconds(3600)
  ) -> (accessToken: String, refreshToken: String) {
    core.auth.signIn(user, lifetime: lifetime)
  }

  /// How many sessions the refresh grant renewed.
  public var sessionRefreshes: Int { core.auth.refreshes.load(ordering: .relaxed) }

  /// Applies `fault` to the next `times` requests (to the function `function` only, when given),
  /// after the faults injected before it are used up.
  public func inject(_ fault: Fault, times: Int = 1, function: String? = nil) {
    core.inject(fault, times: times, function: function)
  }

  /// Removes the faults not yet applied.
  public func removeFaults() { core.removeFaults() }

  /// The requests seen so far, in the order their answers were decided.
  public var requests: [LoggedRequest] { core.log.withLock { $0 } }

  /// Forgets the requests seen so far.
  public func clearLog() { core.log.withLock { $0.removeAll() } }

  private static func listen(
    _ configuration: Configuration, core: StandInCore, retryingFor patience: Duration
  ) throws -> LoopbackHTTPServer {
    let deadline = ContinuousClock.now + patience
    while true {
      do {
        return try LoopbackHTTPServer(
          host: configuration.host, port: configuration.port, maximumConnections: .max,
          lifetime: .seconds(7 * 24 * 3600), recordsRequests: false
        ) { request in core.handle(request) }
      } catch let error as POSIXError where error.code == .EADDRINUSE && ContinuousClock.now < deadline {
        // The stopped listener's socket is closed by its accept thread within 50 ms.
        Thread.sleep(forTimeInterval: 0.05)
      }
    }
  }

  deinit { stop() }
}
