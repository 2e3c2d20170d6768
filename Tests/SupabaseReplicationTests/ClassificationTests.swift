import EventLog
import Foundation
import HTTPTestSupport
import Replication
import ReplicationSupabase
import Synchronization
import Testing

/// What each answer of a project's API means to the transport, by PostgREST's `code` first and
/// the HTTP status only without one; and which project URLs it takes. Against a loopback server
/// that answers as each case says (no database needed).
@Suite("Supabase transport: errors and URLs")
struct ClassificationTests {
  /// What a call should end with.
  enum Expected: Sendable, CustomStringConvertible {
    case failure(TransportFailureKind)
    case apiMissing
    case signInAgain
    case serverChanged
    case protocolViolation

    var description: String {
      switch self {
      case .failure(let kind): "\(kind)"
      case .apiMissing: "apiMissing"
      case .signInAgain: "signInAgain"
      case .serverChanged: "serverChanged"
      case .protocolViolation: "protocolViolation"
      }
    }
  }

  static func error(_ code: String, _ message: String = "it failed") -> String {
    let quoted = message.replacingOccurrences(of: "\"", with: #"\""#)
    return #"{"code":"\#(code)","details":"the detail","hint":null,"message":"\#(quoted)"}"#
  }

  static let gateway502 = "<html><head><title>502 Bad Gateway</title></head><body>502</body></html>"

  /// (status, body, whether the call is a push, what it ends with)
  static let cases: [(Int, String, Bool, Expected)] = [
    (503, error("PGRST000", "Database connection error."), false, .failure(.transient)),
    (503, error("PGRST001", "Database client error. Retrying the connection."), false, .failure(.transient)),
    (503, error("PGRST002"), false, .failure(.transient)),
    (
      504, error("PGRST003", "Timed out acquiring connection from connection pool."), true,
      .failure(.transient)
    ),
    (500, error("40001", "could not serialize access"), true, .failure(.transient)),
    (500, error("40P01", "deadlock detected"), true, .failure(.transient)),
    (500, error("57014", "canceling statement due to statement timeout"), true, .failure(.transient)),
    (500, error("55P03", "canceling statement due to lock timeout"), true, .failure(.transient)),
    (503, error("08006"), false, .failure(.transient)),
    (503, error("53300", "too many connections"), false, .failure(.transient)),
    (502, gateway502, true, .failure(.transient)),
    (503, "", false, .failure(.transient)),
    (504, "upstream timed out", false, .failure(.transient)),
    (429, #"{"message":"Too many requests"}"#, false, .failure(.transient)),
    (
      404, error("PGRST202", "Could not find the function eventlog_api.head without parameters"), false,
      .apiMissing
    ),
    (406, error("PGRST106", "Invalid schema: eventlog_api"), false, .apiMissing),
    (404, error("42883", "function eventlog.pull_events does not exist"), false, .apiMissing),
    (400, error("3F000", "schema \"eventlog\" does not exist"), false, .apiMissing),
    (404, "<html>Not Found</html>", false, .apiMissing),
    (400, error("EL001", "the server holds event x at position 3"), false, .serverChanged),
    (400, error("EL002", "the server holds 2 events of this owner"), false, .serverChanged),
    (401, error("PGRST301", "JWT cryptographic operation failed"), false, .signInAgain),
    (401, error("PGRST302", "Anonymous access is disabled"), false, .signInAgain),
    (401, error("PGRST303", "JWT expired"), true, .signInAgain),
    (401, error("42501", "the role anon owns no events"), false, .signInAgain),
    (
      401,
      #"{"message":"Invalid API key","hint":"Double check your Supabase `anon` or `service_role` API key."}"#,
      false, .signInAgain
    ),
    (403, error("42501", "permission denied for function head"), false, .failure(.fatal)),
    (400, error("22023", "p_after must be 0 or more"), false, .failure(.fatal)),
    (400, error("22023", "p_events must be a JSON array"), true, .failure(.rejected)),
    (
      409, error("23505", "duplicate key value violates unique constraint \"events_id_key\""), true,
      .failure(.rejected)
    ),
    (
      409, error("23505", "duplicate key value violates unique constraint \"events_pkey\""), true,
      .failure(.transient)
    ),
    (500, error("54000", "the batch is over 32 MiB"), true, .failure(.rejected)),
    (500, error("XX000", "internal error"), true, .failure(.fatal)),
    (500, error("25006", "cannot execute INSERT in a read-only transaction"), true, .failure(.fatal)),
    (200, "not json", false, .protocolViolation),
    (200, #"{"head": 1}"#, true, .protocolViolation),
  ]

  @Test func eachAnswerMeansWhatItsCodeSays() async throws {
    let answer = Mutex<(Int, String)>((200, ""))
    let server = try LoopbackHTTPServer(maximumConnections: 1_000, recordsRequests: false) { _ in
      let (status, body) = answer.withLock { $0 }
      return .respond(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
    defer { server.stop() }
    let (key, token) = ("key-\(UUID())", "token-\(UUID())")
    let transport = try SupabaseTransport(projectURL: server.baseURL, apiKey: key) { _ in token }
    let event = OutgoingEvent(
      localSequence: 1, id: UUID(), stream: StreamID("booking-x"), type: "T", schemaVersion: 1,
      payload: Array("{}".utf8), metadata: EventMetadata(origin: "test"), recordedAt: Date())
    for (status, body, isPush, expected) in Self.cases {
      answer.withLock { $0 = (status, body) }
      let label = "HTTP \(status) \(body.prefix(60)) (push: \(isPush)): \(expected)"
      do {
        if isPush {
          _ = try await transport.push([event], device: .random(), through: 1)
        } else {
          _ = try await transport.head()
        }
        Issue.record("\(label): no error")
      } catch let error as SupabaseError {
        switch (expected, error) {
        case (.failure(let kind), .server): #expect(error.failureKind == kind, "\(label): \(error)")
        case (.failure(.transient), .unreachable): break
        case (.apiMissing, .apiMissing), (.signInAgain, .signInAgain): break
        default: Issue.record("\(label): \(error)")
        }
        #expect(!error.description.contains(token) && !error.description.contains(key), "\(error)")
      } catch let error as ReplicationError {
        switch (expected, error) {
        case (.serverChanged, .serverChanged), (.protocolViolation, .protocolViolation): break
        default: Issue.record("\(label): \(error)")
        }
      }
    }
  }

  @Test("an answer that is not rows says what it is, and which element is not a row")
  func aMalformedAnswerIsNamed() async throws {
    let answer = Mutex("")
    let server = try LoopbackHTTPServer(maximumConnections: 100, recordsRequests: false) { _ in
      .respond(
        status: 200, headers: [("Content-Type", "application/json")], body: Array(answer.withLock { $0 }.utf8)
      )
    }
    defer { server.stop() }
    let transport = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in "token" }
    let event = OutgoingEvent(
      localSequence: 1, id: UUID(), stream: StreamID("booking-x"), type: "T", schemaVersion: 1,
      payload: Array("{}".utf8), metadata: EventMetadata(origin: "test"), recordedAt: Date())
    for (body, named) in [
      (#"[{"event_position": 1}, 2]"#, "its element 1 is the number 2"),
      (#"{"rows": []}"#, "it is an object"),
    ] {
      answer.withLock { $0 = body }
      let error = try await #require(throws: ReplicationError.self) {
        _ = try await transport.push([event], device: .random(), through: 1)
      }
      guard case .protocolViolation(_, let reason) = error else {
        Issue.record("\(body): \(error)")
        continue
      }
      #expect(
        reason.hasPrefix("push: the answer is not a JSON array of objects") && reason.contains(named),
        "\(reason)")
    }
  }

  /// A pull that times out is asked again smaller: a statement timeout and a gateway's timeout
  /// say so; an exhausted pool (the request never ran), a lock timeout and a 502 do not.
  @Test func aTimeoutIsToldApartFromOtherTransientFailures() async throws {
    let answer = Mutex<(Int, String)>((200, ""))
    let server = try LoopbackHTTPServer(maximumConnections: 100, recordsRequests: false) { _ in
      let (status, body) = answer.withLock { $0 }
      return .respond(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
    defer { server.stop() }
    let transport = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in "token" }
    for (status, body, timeout) in [
      (500, Self.error("57014", "canceling statement due to statement timeout"), true),
      (504, "upstream timed out", true),
      (504, Self.error("PGRST003", "Timed out acquiring connection from connection pool."), false),
      (500, Self.error("55P03", "canceling statement due to lock timeout"), false),
      (502, Self.gateway502, false),
    ] {
      answer.withLock { $0 = (status, body) }
      let error = await #expect(throws: SupabaseError.self) {
        _ = try await transport.pull(
          after: PullCursor(position: 0, eventID: nil), limit: 10, maxBytes: 1_024, wait: .zero)
      }
      #expect(error?.failureKind == .transient, "\(status) \(body)")
      #expect(error?.isTimeout == timeout, "\(status) \(body)")
    }
  }

  @Test func aServerThatCannotBeReachedIsTransient() async throws {
    // A port nobody listens on: a server that was stopped.
    let server = try LoopbackHTTPServer { _ in .closeWithoutAnswer }
    let url = server.baseURL
    server.stop()
    try await Task.sleep(for: .milliseconds(100))
    let transport = try SupabaseTransport(projectURL: url, apiKey: "key") { _ in "token" }
    let error = await #expect(throws: SupabaseError.self) { _ = try await transport.head() }
    #expect(error?.failureKind == .transient, "\(String(describing: error))")
  }

  @Test("https://, or http:// on a loopback host; no user or password; the server named without a query")
  func projectURLs() throws {
    for good in [
      "https://abcdefgh.supabase.co", "https://abcdefgh.supabase.co/", "HTTPS://Example.com:8443/base/",
      "http://127.0.0.1:54321", "http://localhost:54321", "http://[::1]:54321", "http://127.8.9.10",
    ] {
      let transport = try SupabaseTransport(
        projectURL: try #require(URL(string: good)), apiKey: "key", accessToken: { _ in nil })
      #expect(!transport.server.hasSuffix("/"), "\(good): \(transport.server)")
    }
    let shown = try SupabaseTransport(
      projectURL: try #require(URL(string: "https://x.supabase.co/?apikey=secret#frag")), apiKey: "key"
    ) { _ in nil }
    #expect(shown.server == "https://x.supabase.co", "\(shown.server)")
    #expect("\(shown)" == "SupabaseTransport(https://x.supabase.co)")
    for bad in [
      "http://x.supabase.co", "http://128.0.0.1", "ftp://x.supabase.co", "https://me:pw@x.supabase.co",
      "https://me@x.supabase.co", "https:///nohost", "http://localhost.example.com",
    ] {
      guard let url = URL(string: bad) else { continue }
      let error = #expect(throws: SupabaseError.self, "\(bad)") {
        try SupabaseTransport(projectURL: url, apiKey: "key", accessToken: { _ in nil })
      }
      #expect(error?.description.contains("pw") == false)
    }
    #expect(SupabaseTransport.handles("HTTPS://x") && SupabaseTransport.handles("http://127.0.0.1"))
    #expect(!SupabaseTransport.handles("postgres://x") && !SupabaseTransport.handles("httpx://x"))
  }

  @Test("a token provider's failure: fatal, or what a ReplicationTransportError says; cancellation stays one")
  func providerFailures() async throws {
    struct Offline: ReplicationTransportError {
      var failureKind: TransportFailureKind { .transient }
      var description: String { "the network is down" }
    }
    struct Broken: Error {}
    let server = try LoopbackHTTPServer(recordsRequests: true) { _ in .json("0") }
    defer { server.stop() }
    let offline = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in throw Offline() }
    let transient = await #expect(throws: SupabaseError.self) { _ = try await offline.head() }
    #expect(
      transient?.failureKind == .transient && transient?.description.contains("network is down") == true)
    let broken = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in throw Broken() }
    let fatal = await #expect(throws: SupabaseError.self) { _ = try await broken.head() }
    #expect(fatal?.failureKind == .fatal)
    let cancelled = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in
      throw CancellationError()
    }
    await #expect(throws: CancellationError.self) { _ = try await cancelled.head() }
    #expect(server.requests.isEmpty)
    let fine = try SupabaseTransport(projectURL: server.baseURL, apiKey: "key") { _ in " token\n" }
    #expect(try await fine.head() == 0)
    #expect(server.requests.first?.headers["authorization"] == "Bearer token")
  }
}
