import Foundation
import HTTPTestSupport
import Postgres
import Synchronization

/// What ``PostgRESTStandIn`` does with one request, on the connection's thread: the gateway, the
/// authentication, the schema, the call in its transaction, the answer; faults and the log. Kept
/// apart from the listener so that a restart listens with the same pool, faults and log.
final class StandInCore: Sendable {
  typealias Fault = PostgRESTStandIn.Fault
  typealias LoggedRequest = PostgRESTStandIn.LoggedRequest

  let configuration: PostgRESTStandIn.Configuration
  let pool: ConnectionPool
  let verifier: JWTVerifier
  /// Supabase Auth's refresh grant, beside the API.
  let auth: AuthTokenEndpoint
  let log = Mutex<[LoggedRequest]>([])
  private let faults = Mutex<[(fault: Fault, remaining: Int, function: String?)]>([])

  init(configuration: PostgRESTStandIn.Configuration, pool: ConnectionPool) {
    self.configuration = configuration
    self.pool = pool
    verifier = JWTVerifier(secret: configuration.jwtSecret, clockSkewSeconds: configuration.clockSkewSeconds)
    auth = AuthTokenEndpoint(secret: configuration.jwtSecret)
  }

  func inject(_ fault: Fault, times: Int, function: String?) {
    guard times > 0 else { return }
    faults.withLock { $0.append((fault, times, function)) }
  }

  func removeFaults() { faults.withLock { $0.removeAll() } }

  /// The first pending fault for `function`, used once.
  private func takeFault(for function: String?) -> Fault? {
    faults.withLock { faults in
      guard let index = faults.firstIndex(where: { $0.function == nil || $0.function == function }) else {
        return nil
      }
      let fault = faults[index].fault
      faults[index].remaining -= 1
      if faults[index].remaining == 0 { faults.remove(at: index) }
      return fault
    }
  }

  // MARK: One request

  /// An answer before it is sent.
  private struct Answer {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    static func json(_ text: String, status: Int = 200) -> Answer {
      Answer(
        status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: Array(text.utf8)
      )
    }

    static func error(_ error: PostgRESTError) -> Answer {
      var answer = json(error.body, status: error.status)
      if let challenge = error.wwwAuthenticate { answer.headers.append(("WWW-Authenticate", challenge)) }
      return answer
    }

    var reply: LoopbackHTTPServer.Reply { .respond(status: status, headers: headers, body: body) }
  }

  func handle(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Reply {
    // Supabase Auth behind the same gateway (`/auth/v1`, Supabase's `kong.yml`: route `auth-v1`).
    if request.path == "/auth/v1/token" {
      if let refusal = gatewayRefusal(apiKey: request.headers["apikey"]) { return refusal.reply }
      guard request.method == "POST" else {
        return Answer.json(#"{"code":405,"msg":"the stand-in serves POST /auth/v1/token only"}"#, status: 405)
          .reply
      }
      let (status, body) = auth.answer(query: request.query, body: request.body)
      return Answer.json(body, status: status).reply
    }
    let route = Route(request.path)
    var entry = LoggedRequest(
      method: request.method, path: request.path, function: route.function,
      headers: Self.redacted(request.headers),
      body: configuration.keepsRequests ? String(decoding: request.body, as: UTF8.self) : "")
    let fault = takeFault(for: route.function)
    entry.fault = fault
    switch fault {
    case .badGateway:
      let page =
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        + "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
      entry.status = 502
      record(entry)
      return .respond(status: 502, headers: [("Content-Type", "text/html")], body: Array(page.utf8))
    case .dropBeforeTransaction:
      record(entry)
      return .closeWithoutAnswer
    case .dropAfterCommit, .slowAnswer, nil:
      break
    }
    let answer = respond(to: request, route: route, entry: &entry)
    switch fault {
    case .dropAfterCommit:
      record(entry)
      return .closeWithoutAnswer
    case .slowAnswer(let delay):
      entry.status = answer.status
      record(entry)
      return .delayed(delay, answer.reply)
    default:
      entry.status = answer.status
      record(entry)
      return answer.reply
    }
  }

  private func record(_ entry: LoggedRequest) {
    guard configuration.keepsRequests else { return }
    log.withLock { $0.append(entry) }
  }

  /// The answer to `request`, noting in `entry` the role, the subject, the error code and whether
  /// it committed.
  private func respond(
    to request: LoopbackHTTPServer.Request, route: Route, entry: inout LoggedRequest
  ) -> Answer {
    do throws(PostgRESTError) {
      return try call(request, route: route, entry: &entry)
    } catch {
      entry.errorCode = error.code
      return .error(error)
    }
  }

  private func call(
    _ request: LoopbackHTTPServer.Request, route: Route, entry: inout LoggedRequest
  ) throws(PostgRESTError) -> Answer {
    if route.throughGateway, let refusal = gatewayRefusal(apiKey: request.headers["apikey"]) {
      entry.errorCode = "apikey"
      return refusal
    }
    guard let function = route.function else {
      throw PostgRESTError(
        status: 404, code: "PGRST125", message: "Invalid path specified in request URL",
        details: "the stand-in serves POST /rest/v1/rpc/<function> and POST /rpc/<function> only")
    }
    guard request.method == "POST" else {
      throw PostgRESTError(
        status: 405, code: "PGRST117", message: "Unsupported HTTP method: \(request.method)",
        details: "the stand-in calls functions with POST only")
    }
    let (role, claims) = try authenticate(request.headers["authorization"], entry: &entry)
    let authenticated = role != configuration.anonymousRole
    let schema = try schema(request.headers["content-profile"])
    let arguments = try arguments(request)
    return try pool.withConnection { (connection) throws(PostgRESTError) -> Answer in
      let routine = try findRoutine(schema: schema, name: function, keys: Set(arguments.keys), on: connection)
      return try run(
        routine, arguments: arguments.text, keys: Set(arguments.keys), role: role, claims: claims,
        authenticated: authenticated, request: request, function: function, on: connection, entry: &entry)
    }
  }

  /// Supabase's gateway: the `apikey` header must be one of the project's keys, else a 401 of
  /// the gateway's own, `{"message","hint"}` without a `code` (the hosted platform's bodies, as
  /// reported in nuxt-modules/supabase#195 for a wrong key and s0ooo0k/TIL#22 for a missing one).
  private func gatewayRefusal(apiKey key: String?) -> Answer? {
    let message: String
    let hint: String
    if let key, !key.isEmpty {
      guard !configuration.apiKeys.contains(key) else { return nil }
      (message, hint) = ("Invalid API key", "Double check your Supabase `anon` or `service_role` API key.")
    } else {
      (message, hint) = ("No API key found in request", "No `apikey` request header or url param was found.")
    }
    return .json(TestJWT.json(["message": message, "hint": hint]), status: 401)
  }

  /// The role and the claims (a JSON object's text, `role` set) of a request with this
  /// `Authorization` header. Like wai's `extractBearerAuth`, which PostgREST uses: a header that is
  /// not `Bearer <token>` (scheme in any case) counts as no token.
  private func authenticate(
    _ authorization: String?, entry: inout LoggedRequest
  ) throws(PostgRESTError) -> (role: String, claims: String) {
    var token: String?
    if let authorization {
      // wai: `break isSpace`, the scheme compared without case, then the rest without its leading
      // spaces ("Bearer" alone is an empty token).
      let space = authorization.firstIndex(where: \.isWhitespace) ?? authorization.endIndex
      if authorization[..<space].lowercased() == "bearer" {
        token = authorization[space...].trimmingCharacters(in: .whitespaces)
      }
    }
    guard let token else {
      entry.role = configuration.anonymousRole
      return (configuration.anonymousRole, TestJWT.json(["role": configuration.anonymousRole]))
    }
    let verified: JWTVerifier.Verified
    do {
      verified = try verifier.verify(token)
    } catch {
      throw PostgRESTError(
        status: 401, code: error.code, message: error.message, details: error.details,
        wwwAuthenticate: "Bearer error=\"invalid_token\", error_description=\"\(error.message)\"")
    }
    let role = verified.role ?? configuration.anonymousRole
    entry.role = role
    entry.subject = verified.subject
    // PostgREST's txVarQuery: the claims with "role" set to the role used.
    var claims =
      (try? JSONSerialization.jsonObject(with: Data(verified.claimsJSON.utf8))) as? [String: Any] ?? [:]
    claims["role"] = role
    return (role, TestJWT.json(claims))
  }

  /// The request's schema: `Content-Profile` when given (a `POST`), else the first exposed one.
  private func schema(_ profile: String?) throws(PostgRESTError) -> String {
    guard let profile else { return configuration.exposedSchemas[0] }
    guard configuration.exposedSchemas.contains(profile) else {
      throw PostgRESTError(
        status: 406, code: "PGRST106", message: "Invalid schema: \(profile)",
        hint: "Only the following schemas are exposed: "
          + configuration.exposedSchemas.joined(separator: ", "))
    }
    return profile
  }

  /// The body's keys and text: a JSON object (an empty body is `{}`).
  private func arguments(
    _ request: LoopbackHTTPServer.Request
  ) throws(PostgRESTError) -> (keys: [String], text: String) {
    if let type = request.headers["content-type"],
      type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        != "application/json"
    {
      throw PostgRESTError(
        status: 415, code: "PGRST102", message: "Content-Type not acceptable: \(type)",
        details: "the stand-in reads application/json bodies only (PostgREST would read this one otherwise)")
    }
    let text = request.body.isEmpty ? "{}" : String(decoding: request.body, as: UTF8.self)
    guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
      throw PostgRESTError(
        status: 400, code: "PGRST102", message: "Empty or invalid json",
        details: "the stand-in takes a JSON object of named arguments")
    }
    return (object.keys.sorted(), text)
  }

  /// The one function `keys` call, or PostgREST's 404 `PGRST202` / 300 `PGRST203`.
  private func findRoutine(
    schema: String, name: String, keys: Set<String>, on connection: PostgresConnection
  ) throws(PostgRESTError) -> RPCRoutine {
    let rows: PostgresRows
    do {
      rows = try firstStatement(on: connection) { () throws(PostgresError) in
        try connection.query(
          RPCRoutine.lookupSQL, [.text(schema), .text(name)], purpose: "look up \(schema).\(name)")
      }
    } catch {
      throw PostgRESTError.from(error, authenticated: false)
    }
    let routines: [RPCRoutine]
    do {
      routines = try RPCRoutine.routines(rows, schema: schema, name: name)
    } catch {
      throw PostgRESTError.from(error, authenticated: false)
    }
    let candidates = routines.filter { $0.matches(keys) }
    guard candidates.count <= 1 else {
      throw PostgRESTError(
        status: 300, code: "PGRST203",
        message: "Could not choose the best candidate function between: "
          + candidates.map(\.signature).joined(separator: ", "),
        hint:
          "Try renaming the parameters or the function itself in the database so function overloading can be resolved"
      )
    }
    guard let routine = candidates.first else {
      let sorted = keys.sorted()
      let withParameters =
        sorted.isEmpty
        ? " without parameters"
        : " with parameter\(sorted.count > 1 ? "s" : "") " + sorted.joined(separator: ", ")
      // PostgREST's noRpcHint suggests an overload of the same name (its fuzzy search of other
      // names is left out).
      let hint = routines.first.map {
        "Perhaps you meant to call the function \(schema).\(name)("
          + $0.parameters.map(\.name).joined(separator: ", ")
          + ")"
      }
      throw PostgRESTError(
        status: 404, code: "PGRST202",
        message: "Could not find the function \(schema).\(name)"
          + (sorted.isEmpty ? " without parameters" : "(" + sorted.joined(separator: ", ") + ")")
          + " in the schema cache",
        details:
          "Searched for the function \(schema).\(name)\(withParameters) or with a single unnamed json/jsonb "
          + "parameter, but no matches were found in the schema cache.",
        hint: hint)
    }
    return routine
  }

  /// The request's transaction: begin, the transaction-scoped settings, the call, commit.
  private func run(
    _ routine: RPCRoutine, arguments: String, keys: Set<String>, role: String, claims: String,
    authenticated: Bool,
    request: LoopbackHTTPServer.Request, function: String, on connection: PostgresConnection,
    entry: inout LoggedRequest
  ) throws(PostgRESTError) -> Answer {
    let access = routine.volatility == "v" ? "READ WRITE" : "READ ONLY"
    do {
      try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED, \(access)", purpose: "begin a request")
    } catch {
      throw PostgRESTError.from(error, authenticated: authenticated)
    }
    do throws(PostgresError) {
      var headers = request.headers
      headers["cookie"] = nil
      let searchPath = ([routine.schema] + configuration.extraSearchPath).map(quote).joined(separator: ", ")
      try connection.query(
        Self.settingsSQL,
        [
          .text(searchPath), .text(role), .text(claims), .text(request.method), .text("/rpc/\(function)"),
          .text(TestJWT.json(headers)), .text("{}"),
        ], purpose: "set the request's settings")
      let rows = try connection.query(
        routine.callSQL(keys: keys), keys.isEmpty ? [] : [.text(arguments)], purpose: "call \(routine.name)")
      let body = try rows.string(0, "body")
      try connection.execute("COMMIT", purpose: "commit a request")
      entry.committed = true
      if routine.returnsVoid { return Answer(status: 204, headers: [], body: []) }
      return .json(body)
    } catch {
      // Whatever failed: a connection must not go back to the pool inside a transaction. (After a
      // lost connection this runs on a new one, where there is nothing to roll back.)
      try? connection.execute("ROLLBACK", purpose: "roll back a request")
      throw PostgRESTError.from(error, authenticated: authenticated)
    }
  }

  /// PostgREST's transaction-scoped settings in one statement, in its order: the search path, the
  /// role's own settings (`rolconfig` of user context, as its `queryRoleSettings` reads them),
  /// the role, the claims, the method, the path, the headers, the cookies.
  static let settingsSQL = """
    SELECT set_config('search_path', $1, true),
           (SELECT count(set_config(s.key, s.value, true))
            FROM (SELECT substr(setting, 1, strpos(setting, '=') - 1) AS key,
                         substr(setting, strpos(setting, '=') + 1) AS value
                  FROM pg_catalog.pg_roles r, unnest(r.rolconfig) AS setting
                  WHERE r.rolname = $2) s
            JOIN pg_catalog.pg_settings ps ON ps.name = s.key AND ps.context = 'user'
            WHERE s.key <> 'default_transaction_isolation'),
           set_config('role', $2, true),
           set_config('request.jwt.claims', $3, true),
           set_config('request.method', $4, true),
           set_config('request.path', $5, true),
           set_config('request.headers', $6, true),
           set_config('request.cookies', $7, true)
    """

  /// Runs a request's first statement, once more on a new connection if the pooled one turns out
  /// to have been lost while idle (nothing of the request has run then).
  private func firstStatement<R>(
    on connection: PostgresConnection, _ body: () throws(PostgresError) -> R
  ) throws(PostgresError) -> R {
    do {
      return try body()
    } catch let error where error.kind == .connectionLost {
      return try body()
    }
  }

  /// The header fields with credential values replaced (the scheme of `authorization` kept).
  static func redacted(_ headers: [String: String]) -> [String: String] {
    var shown = headers
    for name in ["apikey", "cookie", "proxy-authorization"] where shown[name] != nil {
      shown[name] = "[redacted]"
    }
    if let authorization = shown["authorization"] {
      let scheme = authorization.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
      shown["authorization"] =
        scheme.isEmpty || scheme == authorization ? "[redacted]" : "\(scheme) [redacted]"
    }
    return shown
  }
}

/// Where a request goes: through the gateway (`/rest/v1/rpc/<function>`), to PostgREST directly
/// (`/rpc/<function>`), or nowhere the stand-in serves.
struct Route {
  var function: String?
  var throughGateway: Bool

  init(_ path: String) {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    if parts.count == 5, parts[0].isEmpty, parts[1] == "rest", parts[2] == "v1", parts[3] == "rpc",
      !parts[4].isEmpty
    {
      function = parts[4].removingPercentEncoding ?? parts[4]
      throughGateway = true
    } else if parts.count == 3, parts[0].isEmpty, parts[1] == "rpc", !parts[2].isEmpty {
      function = parts[2].removingPercentEncoding ?? parts[2]
      throughGateway = false
    } else {
      // Supabase's gateway answers paths outside its routes itself; under /rest/v1 it checks the
      // key first, as for a function.
      function = nil
      throughGateway = path.hasPrefix("/rest/v1/")
    }
  }
}
