import Foundation
import HTTP
import PostgRESTTestSupport
import Postgres
import PostgresTestSupport
import Testing

/// The stand-in, called through the package's own HTTP client, against a database of each test's
/// own on the shared throwaway PostgreSQL.
@Suite("PostgREST stand-in", .needsPostgres)
struct StandInTests {
  @Test("named arguments in any key order; overloads chosen by the keys; defaults and jsonb")
  func namedArguments() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    for body in [#"{"p_text":"a","p_n":7}"#, #"{"p_n":7,"p_text":"a"}"#, #"{ "p_n" : 7 , "p_text" : "a" }"#] {
      let response = try await fixture.post("echo", body)
      #expect(response.status == 200)
      #expect(response.header("content-type") == "application/json; charset=utf-8")
      #expect(String(decoding: response.body, as: UTF8.self) == #""a:7""#)
    }
    let one = try await fixture.post("echo", #"{"p_text":"b"}"#)
    #expect(String(decoding: one.body, as: UTF8.self) == #""one:b""#, "the overload with only p_text")
    // A JSON object reaches a jsonb parameter as it is; an array a text[] one; a default may be left out.
    let doc = try fixture.json(
      try await fixture.post("doc", #"{"p_doc":{"k":[1,{"x":null}]},"p_tags":["t1","t2"]}"#))
    let expected = try JSONSerialization.jsonObject(
      with: Data(#"{"doc":{"k":[1,{"x":null}]},"tags":["t1","t2"]}"#.utf8))
    #expect(doc as? NSDictionary == expected as? NSDictionary)
    let defaulted = try fixture.json(try await fixture.post("doc", #"{"p_doc":true}"#)) as? [String: Any]
    #expect((defaulted?["tags"] as? [Any])?.isEmpty == true)
    // A text that looks like SQL stays a value.
    let hostile = try await fixture.post("echo", #"{"p_text":"'); DROP TABLE api.notes; --","p_n":1}"#)
    #expect(String(decoding: hostile.body, as: UTF8.self) == #""'); DROP TABLE api.notes; --:1""#)
    #expect(try fixture.count("SELECT count(*) FROM api.notes") == 0)
  }

  @Test("result shapes: table → array of objects, setof scalar → array, void → 204")
  func shapes() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let rows = try fixture.json(try await fixture.post("rows", #"{"p_count":3}"#)) as? [[String: Any]]
    #expect(rows?.map { $0["n"] as? Int } == [1, 2, 3])
    #expect(rows?.map { $0["label"] as? String } == ["row 1", "row 2", "row 3"])
    let none = try await fixture.post("rows", #"{"p_count":0}"#)
    #expect(String(decoding: none.body, as: UTF8.self) == "[]")
    let numbers = try fixture.json(try await fixture.post("numbers", #"{"p_count":4}"#)) as? [Int]
    #expect(numbers == [1, 2, 3, 4])
    let touched = try await fixture.post("touch", "")
    #expect(touched.status == 204)
    #expect(touched.body.isEmpty)
    #expect(try fixture.count("SELECT count(*) FROM api.notes WHERE text = 'touched'") == 1)
  }

  @Test("a RAISE's SQLSTATE becomes PostgREST's status and body; the call rolls back")
  func raised() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let cases: [(String, Int)] = [
      ("P0001", 400), ("23505", 409), ("23503", 409), ("40001", 500), ("22P02", 400), ("PT402", 402),
      ("54000", 500), ("08006", 503), ("42P01", 404), ("42883", 404), ("XX000", 500), ("53300", 503),
      ("57014", 500), ("28000", 403), ("0P000", 403), ("2D000", 500), ("P0002", 500), ("12345", 400),
    ]
    let token = fixture.project.accessToken(for: UUID())
    for (sqlState, status) in cases {
      let response = try await fixture.post(
        "fail", #"{"p_state":"\#(sqlState)","p_message":"it failed"}"#, token: token)
      #expect(response.status == status, "\(sqlState)")
      let body = try #require(try fixture.json(response) as? [String: Any])
      #expect(body["code"] as? String == sqlState)
      #expect(body["message"] as? String == "it failed")
      #expect(body["details"] as? String == "the detail")
      #expect(body["hint"] as? String == "the hint")
      #expect(Set(body.keys) == ["code", "message", "details", "hint"])
      #expect(fixture.project.standIn.requests.last?.committed == false)
    }
    #expect(try fixture.count("SELECT count(*) FROM api.notes") == 0, "every failed call rolled back")
  }

  @Test("RAISE SQLSTATE 'PGRST' sets the status and the body; a STABLE function runs read-only (25006, 405)")
  func customAndReadOnly() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let custom = try await fixture.post("custom", "")
    #expect(custom.status == 402)
    let body = try fixture.json(custom) as? [String: Any]
    #expect(body?["code"] as? String == "E402")
    #expect(body?["message"] as? String == "pay first")
    let readOnly = try await fixture.post("sneaky_write", "")
    #expect(readOnly.status == 405)
    #expect((try fixture.json(readOnly) as? [String: Any])?["code"] as? String == "25006")
  }

  @Test("42501 (no EXECUTE): 401 as anon, 403 as an authenticated user")
  func insufficientPrivilege() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let anonymous = try await fixture.post("secret", "")
    #expect(anonymous.status == 401)
    #expect(anonymous.header("www-authenticate") == "Bearer")
    #expect((try fixture.json(anonymous) as? [String: Any])?["code"] as? String == "42501")
    let signedIn = try await fixture.post("secret", "", token: fixture.project.accessToken(for: UUID()))
    #expect(signedIn.status == 403)
    #expect((try fixture.json(signedIn) as? [String: Any])?["code"] as? String == "42501")
  }

  @Test("Content-Profile: an exposed schema, the first by default, 406 PGRST106 for another")
  func profiles() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let other = try await fixture.post("hello", "", profile: "other")
    #expect(String(decoding: other.body, as: UTF8.self) == #""from other""#)
    let byDefault = try await fixture.post("echo", #"{"p_text":"x"}"#, profile: nil)
    #expect(byDefault.status == 200, "api is the first exposed schema")
    let wrongSchema = try await fixture.post("hello", "", profile: nil)
    #expect(wrongSchema.status == 404, "hello is not in the default schema")
    for hidden in ["auth", "public", "pg_catalog", "API"] {
      let refused = try await fixture.post("uid", "", profile: hidden)
      #expect(refused.status == 406)
      let body = try #require(try fixture.json(refused) as? [String: Any])
      #expect(body["code"] as? String == "PGRST106")
      #expect(body["message"] as? String == "Invalid schema: \(hidden)")
      #expect(body["hint"] as? String == "Only the following schemas are exposed: api, other")
    }
  }

  @Test(
    "request.jwt.claims reach auth.uid() and auth.role(); the role, path, headers and its timeout are set")
  func claims() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let user = UUID()
    let signedIn = try #require(
      try fixture.json(try await fixture.post("whoami", "", token: fixture.project.accessToken(for: user)))
        as? [[String: Any]])
    #expect(signedIn.count == 1)
    let row = try #require(signedIn.first)
    #expect(row["uid"] as? String == user.uuidString.lowercased())
    #expect(row["db_role"] as? String == "authenticated")
    #expect(row["jwt_role"] as? String == "authenticated")
    #expect(row["method"] as? String == "POST")
    #expect(row["path"] as? String == "/rpc/whoami", "as PostgREST sees it behind the gateway")
    #expect(row["profile"] as? String == "api")
    #expect(row["timeout"] as? String == "8s", "Supabase's timeout of the authenticated role")
    #expect(row["search_path"] as? String == #""api", "public""#)
    // Through the gateway's path and PostgREST's own: the same call.
    let direct = try await fixture.post(
      "whoami", "", token: fixture.project.accessToken(for: user), apiKey: nil, path: "/rpc/whoami")
    #expect(
      ((try fixture.json(direct) as? [[String: Any]])?.first?["uid"] as? String)
        == user.uuidString.lowercased())
    // A note written through a function is the user's.
    _ = try await fixture.post(
      "add_note", #"{"p_text":"mine"}"#, token: fixture.project.accessToken(for: user))
    #expect(
      try fixture.count("SELECT count(*) FROM api.notes WHERE owner = '\(user.uuidString.lowercased())'") == 1
    )
  }

  @Test("without Authorization the request runs as anon, with no user")
  func anonymous() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let rows = try #require(try fixture.json(try await fixture.post("whoami", "")) as? [[String: Any]])
    let row = try #require(rows.first)
    #expect(row["db_role"] as? String == "anon")
    #expect(row["jwt_role"] as? String == "anon")
    #expect(row["uid"] is NSNull)
    #expect(row["timeout"] as? String == "3s")
    // The anon key as the bearer (what a client without a session sends) is anon too.
    let asKey = try #require(
      try fixture.json(try await fixture.post("whoami", "", token: fixture.project.anonKey))
        as? [[String: Any]])
    #expect(asKey.first?["db_role"] as? String == "anon")
  }

  @Test("refused before the database: API key, expired, forged and unsigned tokens, missing functions")
  func refusals() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let project = fixture.project
    let missingKey = try await fixture.post("touch", "", apiKey: nil)
    #expect(missingKey.status == 401)
    #expect(
      (try fixture.json(missingKey) as? [String: Any])?["message"] as? String == "No API key found in request"
    )
    let wrongKey = try await fixture.post("touch", "", apiKey: "not-the-key")
    #expect(wrongKey.status == 401)
    let refusal: NSDictionary = [
      "message": "Invalid API key", "hint": "Double check your Supabase `anon` or `service_role` API key.",
    ]
    #expect(try fixture.json(wrongKey) as? NSDictionary == refusal, "the gateway's body: no code")
    let user = UUID()
    let expired = TestJWT.accessToken(
      subject: user, expiresAt: Date().addingTimeInterval(-120), issuedAt: Date().addingTimeInterval(-3720),
      secret: project.jwtSecret)
    let forged = TestJWT.accessToken(
      subject: user, expiresAt: Date().addingTimeInterval(600), secret: "guess")
    let unsigned = TestJWT.unsigned(payload: #"{"sub":"\#(user)","role":"authenticated","exp":4102444800}"#)
    let cases: [(String, String, String)] = [
      (expired, "PGRST303", "JWT expired"), (forged, "PGRST301", "JWT cryptographic operation failed"),
      (unsigned, "PGRST301", "Wrong or unsupported encoding algorithm"),
    ]
    for (token, code, message) in cases {
      let response = try await fixture.post("touch", "", token: token)
      #expect(response.status == 401)
      let body = try #require(try fixture.json(response) as? [String: Any])
      #expect(body["code"] as? String == code)
      #expect(body["message"] as? String == message)
      #expect(response.header("www-authenticate")?.hasPrefix("Bearer error=\"invalid_token\"") == true)
    }
    let missing = try await fixture.post("nothing_here", #"{"a":1}"#)
    #expect(missing.status == 404)
    #expect((try fixture.json(missing) as? [String: Any])?["code"] as? String == "PGRST202")
    let wrongArguments = try await fixture.post("echo", #"{"p_txt":"a"}"#)
    #expect(wrongArguments.status == 404)
    let body = try #require(try fixture.json(wrongArguments) as? [String: Any])
    #expect(body["message"] as? String == "Could not find the function api.echo(p_txt) in the schema cache")
    #expect((body["hint"] as? String)?.hasPrefix("Perhaps you meant to call the function api.echo(") == true)
    let notJSON = try await fixture.post("touch", "p_text=a")
    #expect(notJSON.status == 400)
    #expect(try fixture.count("SELECT count(*) FROM api.notes") == 0, "nothing ran")
    #expect(project.standIn.requests.allSatisfy { !$0.committed })
  }

  @Test("faults: a 502 page, a drop before and after the commit, a slow answer; each applied as asked")
  func faults() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let standIn = fixture.project.standIn
    let notes = "SELECT count(*) FROM api.notes WHERE text = 'touched'"

    standIn.inject(.badGateway, times: 2)
    for _ in 0..<2 {
      let response = try await fixture.post("touch", "")
      #expect(response.status == 502)
      #expect(response.header("content-type") == "text/html")
      #expect(String(decoding: response.body, as: UTF8.self).contains("502 Bad Gateway"))
      #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil, "no JSON from the gateway")
    }
    #expect(try await fixture.post("touch", "").status == 204, "two faults, used up")
    #expect(try fixture.count(notes) == 1)

    standIn.inject(.dropBeforeTransaction)
    await fixture.expectNoAnswer { try await fixture.post("touch", "") }
    #expect(try fixture.count(notes) == 1, "dropped before the database: nothing ran")

    standIn.inject(.dropAfterCommit)
    await fixture.expectNoAnswer { try await fixture.post("touch", "") }
    #expect(try fixture.count(notes) == 2, "dropped after the commit: it ran, once")
    let dropped = try #require(standIn.requests.last)
    #expect(dropped.status == nil && dropped.committed && dropped.fault == .dropAfterCommit)

    standIn.inject(.slowAnswer(.seconds(3)))
    await #expect(throws: HTTPError.timedOut) {
      try await fixture.post("touch", "", timeout: .milliseconds(500))
    }
    #expect(try fixture.count(notes) == 3, "the client gave up; the commit stands")

    standIn.inject(.badGateway, function: "touch")
    #expect(
      try await fixture.post("echo", #"{"p_text":"x"}"#).status == 200, "the fault waits for its function")
    #expect(try await fixture.post("touch", "").status == 502)
    standIn.inject(.badGateway, times: 5)
    standIn.removeFaults()
    #expect(try await fixture.post("touch", "").status == 204)
  }

  @Test("stop and start on the same port; a lost database connection is replaced")
  func restartAndReconnect() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let standIn = fixture.project.standIn
    let url = standIn.baseURL
    #expect(try await fixture.post("touch", "").status == 204)
    standIn.stop()
    #expect(!standIn.isRunning)
    // A stopped stand-in holds no database connection (a backend leaves a moment after its client).
    let held =
      "SELECT count(*) FROM pg_stat_activity WHERE usename = 'authenticator' AND datname = current_database()"
    let stopped = ContinuousClock.now
    while try fixture.count(held) > 0 && ContinuousClock.now - stopped < .seconds(10) {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(try fixture.count(held) == 0)
    let refused = try await #require(throws: HTTPError.self) { try await fixture.post("touch", "") }
    guard case .transport(7, _) = refused else {
      Issue.record("expected a refused connection (7), got \(refused)")
      return
    }
    try standIn.start()
    #expect(standIn.baseURL == url)
    #expect(try await fixture.post("touch", "").status == 204)

    // The stand-in's database connections are terminated (as a server restart would); the next
    // requests connect again.
    try fixture.project.superuser(
      """
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE usename = 'authenticator' AND datname = current_database()
      """)
    for _ in 0..<3 { #expect(try await fixture.post("touch", "").status == 204) }
    #expect(try fixture.count("SELECT count(*) FROM api.notes WHERE text = 'touched'") == 5)
  }

  @Test("concurrent requests each see their own user; a pool wait past its timeout is 504 PGRST003")
  func concurrency() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let users = (0..<12).map { _ in UUID() }
    let seen = try await withThrowingTaskGroup(of: (UUID, String).self) { group in
      for user in users {
        group.addTask {
          let response = try await fixture.post(
            "nap", #"{"p_seconds":0.05}"#, token: fixture.project.accessToken(for: user))
          return (user, String(decoding: response.body, as: UTF8.self))
        }
      }
      return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
    }
    #expect(seen.count == users.count)
    for user in users { #expect(seen[user] == "\"\(user.uuidString.lowercased())\"") }

    let narrow = try Fixture { configuration in
      configuration.poolSize = 1
      configuration.acquisitionTimeout = .milliseconds(200)
    }
    defer { narrow.stop() }
    // The only connection is held by a call that naps until it is cancelled.
    async let held = narrow.post("nap", #"{"p_seconds":60}"#, timeout: .seconds(60))
    let napping =
      "SELECT count(*) FROM pg_stat_activity"
      + " WHERE usename = 'authenticator' AND datname = current_database() AND state = 'active'"
    let asked = ContinuousClock.now
    while try narrow.count(napping) == 0 && ContinuousClock.now - asked < .seconds(30) {
      try await Task.sleep(for: .milliseconds(20))
    }
    let waited = try await narrow.post("echo", #"{"p_text":"x"}"#)
    #expect(waited.status == 504)
    #expect((try narrow.json(waited) as? [String: Any])?["code"] as? String == "PGRST003")
    try narrow.project.superuser(napping.replacingOccurrences(of: "count(*)", with: "pg_cancel_backend(pid)"))
    let cancelled = try await held
    #expect(cancelled.status == 500, "57014, a cancelled statement")
    #expect((try narrow.json(cancelled) as? [String: Any])?["code"] as? String == "57014")
    #expect(
      try await narrow.post("echo", #"{"p_text":"x"}"#).status == 200, "the connection is back in the pool")
  }

  @Test("with keepsRequests off, requests are answered and none is kept")
  func noLog() async throws {
    let fixture = try Fixture { $0.keepsRequests = false }
    defer { fixture.stop() }
    let token = fixture.project.accessToken(for: UUID())
    let response = try await fixture.post("echo", #"{"p_text":"x"}"#, token: token)
    #expect(response.status == 200)
    #expect(fixture.project.standIn.requests.isEmpty)
  }

  @Test("the request log names headers but never shows a credential")
  func log() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let user = UUID()
    let token = fixture.project.accessToken(for: user)
    _ = try await fixture.post("echo", #"{"p_text":"x"}"#, token: token)
    let entry = try #require(fixture.project.standIn.requests.last)
    #expect(entry.method == "POST")
    #expect(entry.path == "/rest/v1/rpc/echo")
    #expect(entry.function == "echo")
    #expect(entry.body == #"{"p_text":"x"}"#)
    #expect(entry.role == "authenticated")
    #expect(entry.subject == user.uuidString.lowercased())
    #expect(entry.status == 200 && entry.committed)
    #expect(entry.headers["content-profile"] == "api")
    #expect(entry.headers["content-type"] == "application/json")
    #expect(entry.headers["apikey"] == "[redacted]")
    #expect(entry.headers["authorization"] == "Bearer [redacted]")
    for value in entry.headers.values {
      #expect(!value.contains(token) && !value.contains(fixture.project.anonKey))
    }
  }
}

/// A project with the test functions in `api` and `other`, and a client for it.
struct Fixture {
  let project: SupabaseTestProject

  init(configure: (inout PostgRESTStandIn.Configuration) -> Void = { _ in }) throws {
    project = try SupabaseTestProject(exposedSchemas: ["api", "other"], configure: configure)
    try project.superuser(Self.sql)
  }

  func stop() { project.stop() }

  /// `POST` through the package's HTTP client, as the HTTPS transport sends it.
  func post(
    _ function: String, _ body: String, token: String? = nil, apiKey: String?? = .some(nil),
    profile: String? = "api", timeout: Duration = .seconds(20), path: String? = nil
  ) async throws -> HTTPResponse {
    var headers = [HTTPHeader("Content-Type", "application/json")]
    // `.some(nil)`, the default, is the project's key; `nil` sends none.
    if let key = apiKey.map({ $0 ?? project.anonKey }) { headers.append(HTTPHeader("apikey", key)) }
    if let token { headers.append(HTTPHeader("Authorization", "Bearer \(token)")) }
    if let profile { headers.append(HTTPHeader("Content-Profile", profile)) }
    let url = project.baseURL.appending(path: path ?? "/rest/v1/rpc/\(function)")
    return try await HTTPClient.send(
      HTTPRequest(
        url: url, method: .post, headers: headers, body: Data(body.utf8), timeout: timeout,
        usesEnvironmentProxy: false))
  }

  func json(_ response: HTTPResponse) throws -> Any {
    try JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed])
  }

  /// The integer a query returns, as the superuser.
  func count(_ sql: String) throws -> Int {
    let connection = try PostgresConnection(
      PostgresConfiguration(url: project.server.url(database: project.database)))
    defer { connection.close() }
    return try connection.query(sql, purpose: "count").integer(0, "count", as: Int.self)
  }

  /// `body` fails with a connection closed without an answer (libcurl's "empty reply", 52).
  func expectNoAnswer(_ body: () async throws -> HTTPResponse) async {
    do {
      let response = try await body()
      Issue.record("expected no answer, got \(response.status)")
    } catch let error as HTTPError {
      guard case .transport(52, _) = error else {
        Issue.record("expected CURLE_GOT_NOTHING (52), got \(error)")
        return
      }
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  static let sql = """
    CREATE SCHEMA api;
    CREATE SCHEMA other;
    GRANT USAGE ON SCHEMA api, other TO anon, authenticated;
    CREATE TABLE api.notes (id bigserial PRIMARY KEY, text text NOT NULL, owner uuid);
    GRANT INSERT, SELECT ON api.notes TO anon, authenticated;
    GRANT USAGE ON SEQUENCE api.notes_id_seq TO anon, authenticated;

    CREATE FUNCTION api.echo(p_text text, p_n int) RETURNS text LANGUAGE sql
      AS $$ SELECT p_text || ':' || p_n $$;
    CREATE FUNCTION api.echo(p_text text) RETURNS text LANGUAGE sql AS $$ SELECT 'one:' || p_text $$;
    CREATE FUNCTION api.doc(p_doc jsonb, p_tags text[] DEFAULT '{}') RETURNS jsonb LANGUAGE sql
      AS $$ SELECT jsonb_build_object('doc', p_doc, 'tags', to_jsonb(p_tags)) $$;
    CREATE FUNCTION api.rows(p_count int) RETURNS TABLE (n int, label text) LANGUAGE sql
      AS $$ SELECT g, 'row ' || g FROM generate_series(1, p_count) AS g $$;
    CREATE FUNCTION api.numbers(p_count int) RETURNS SETOF int LANGUAGE sql
      AS $$ SELECT generate_series(1, p_count) $$;
    CREATE FUNCTION api.fail(p_state text, p_message text) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO api.notes (text) VALUES ('before the failure');
      RAISE EXCEPTION USING ERRCODE = p_state, MESSAGE = p_message, DETAIL = 'the detail', HINT = 'the hint';
    END $$;
    CREATE FUNCTION api.custom() RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      RAISE SQLSTATE 'PGRST' USING MESSAGE = '{"code":"E402","message":"pay first"}',
        DETAIL = '{"status":402,"headers":{}}';
    END $$;
    CREATE FUNCTION api.sneaky_write() RETURNS bigint LANGUAGE sql STABLE
      AS $$ SELECT nextval('api.notes_id_seq') $$;
    CREATE FUNCTION api.secret() RETURNS text LANGUAGE sql AS $$ SELECT 'hidden' $$;
    REVOKE EXECUTE ON FUNCTION api.secret() FROM PUBLIC;
    CREATE FUNCTION api.whoami()
      RETURNS TABLE (uid uuid, db_role text, jwt_role text, method text, path text, profile text, timeout text,
                     search_path text)
      LANGUAGE sql STABLE AS $$
        SELECT auth.uid(), current_user::text, auth.role(), current_setting('request.method'),
               current_setting('request.path'), current_setting('request.headers')::json->>'content-profile',
               current_setting('statement_timeout'), current_setting('search_path')
      $$;
    CREATE FUNCTION api.add_note(p_text text) RETURNS bigint LANGUAGE sql
      AS $$ INSERT INTO api.notes (text, owner) VALUES (p_text, auth.uid()) RETURNING id $$;
    CREATE FUNCTION api.touch() RETURNS void LANGUAGE sql AS $$ INSERT INTO api.notes (text) VALUES ('touched') $$;
    CREATE FUNCTION api.nap(p_seconds float8) RETURNS uuid LANGUAGE sql
      AS $$ SELECT pg_sleep(p_seconds); SELECT auth.uid() $$;
    CREATE FUNCTION other.hello() RETURNS text LANGUAGE sql AS $$ SELECT 'from other' $$;
    """
}
