import Foundation
import HTTP
import HTTPTestSupport
import Testing

@Suite("HTTP client: POST, response headers, secrets")
struct HTTPPostTests {
  @Test(
    "a POST sends its method, headers in order and exactly its body bytes",
    arguments: [0, 1, 1_025, 300_000, 2_000_000])
  func roundTrip(length: Int) async throws {
    let server = try LoopbackHTTPServer { request in
      .respond(
        status: 201,
        headers: [("Content-Type", "application/json"), ("X-Echo-Length", "\(request.body.count)")],
        body: Array(#"{"ok":true}"#.utf8))
    }
    defer { server.stop() }
    // Every byte value, so a body is not taken for text anywhere on the way.
    let body = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    let request = HTTPRequest(
      url: server.baseURL.appending(path: "rest/v1/rpc/push"), method: .post,
      headers: [
        HTTPHeader("apikey", Self.apiKey), HTTPHeader("Authorization", "Bearer \(Self.token)"),
        HTTPHeader("Content-Type", "application/json"), HTTPHeader("Content-Profile", "eventlog_api"),
      ],
      body: body, usesEnvironmentProxy: false)
    let response = try await HTTPClient.send(request)
    #expect(response.status == 201)
    #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":true}"#)
    #expect(response.header("x-echo-length") == "\(length)", "response headers are matched without case")
    #expect(response.header("CONTENT-TYPE") == "application/json")
    #expect(response.header("missing") == nil)
    let received = try #require(server.requests.first)
    #expect(received.method == "POST")
    #expect(received.path == "/rest/v1/rpc/push")
    #expect(received.body == Array(body))
    #expect(received.headers["content-length"] == "\(length)")
    #expect(
      received.headers["content-type"] == "application/json", "the caller's type, not libcurl's default")
    #expect(received.headers["content-profile"] == "eventlog_api")
    #expect(received.headers["authorization"] == "Bearer \(Self.token)")
    // libcurl 7.88 asks for `100 Continue` before a body over 1 MiB and waits up to a second for
    // it; the client turns that off (the 2,000,000-byte case fails without it).
    #expect(received.headers["expect"] == nil, "no 100-continue round trip before a larger body")
  }

  @Test("a POST answered by a redirect gets the redirect back; nothing is sent again")
  func redirectNotFollowed() async throws {
    let server = try LoopbackHTTPServer { request in
      request.path == "/old" ? .redirect(to: "/new", status: 307) : .json("[]")
    }
    defer { server.stop() }
    let response = try await HTTPClient.send(
      HTTPRequest(
        url: server.baseURL.appending(path: "old"), method: .post, body: Data("{}".utf8),
        usesEnvironmentProxy: false))
    #expect(response.status == 307)
    #expect(response.redirectURL?.absoluteString == "\(server.baseURL.absoluteString)/new")
    #expect(server.requests.map(\.path) == ["/old"])
  }

  @Test("a POST keeps the response body cap, the timeout and cancellation")
  func bounds() async throws {
    let big = try LoopbackHTTPServer { _ in
      .endless(chunk: [UInt8](repeating: 0x20, count: 64 << 10), total: 64 << 20, declaredLength: nil)
    }
    defer { big.stop() }
    await #expect(throws: HTTPError.bodyTooLarge(limit: 1 << 20)) {
      try await HTTPClient.send(
        HTTPRequest(
          url: big.baseURL, method: .post, body: Data("{}".utf8), maximumBodyBytes: 1 << 20,
          usesEnvironmentProxy: false))
    }

    let slow = try LoopbackHTTPServer { _ in .delayed(.seconds(60), .json("[]")) }
    defer { slow.stop() }
    await #expect(throws: HTTPError.timedOut) {
      try await HTTPClient.send(
        HTTPRequest(
          url: slow.baseURL, method: .post, body: Data("{}".utf8), timeout: .milliseconds(300),
          usesEnvironmentProxy: false))
    }
    let task = Task {
      try await HTTPClient.send(
        HTTPRequest(url: slow.baseURL, method: .post, body: Data("{}".utf8), usesEnvironmentProxy: false))
    }
    let asked = ContinuousClock.now
    while slow.requests.count < 2 && ContinuousClock.now - asked < .seconds(30) {
      try await Task.sleep(for: .milliseconds(20))
    }
    let cancelled = ContinuousClock.now
    task.cancel()
    await #expect(throws: HTTPError.cancelled) { try await task.value }
    // Both exchanges closed their connection long before the server's 60 s, timed by the server
    // (see HTTPClientTests.timeout): the timed-out one from its request's arrival (the transfer's
    // own thread), the cancelled one from the cancel (this task may wait for a cooperative thread
    // for seconds before it cancels, when other suites keep both busy).
    let hangUps = await slow.hangUps(count: 2).sorted { $0.requestArrived < $1.requestArrived }
    #expect(hangUps.count == 2)
    if hangUps.count == 2 {
      #expect(hangUps[0].hungUp - hangUps[0].requestArrived < .seconds(10), "timed out, closed late")
      #expect(hangUps[1].hungUp - cancelled < .seconds(10), "cancelled, closed late")
    }
  }

  @Test("response headers past 64 KiB are a transport error, not kept")
  func headerCap() async throws {
    let server = try LoopbackHTTPServer { _ in
      .respond(
        status: 200, headers: (0..<40).map { ("X-Filler-\($0)", String(repeating: "f", count: 2_000)) },
        body: Array("{}".utf8))
    }
    defer { server.stop() }
    let error = try await #require(throws: HTTPError.self) {
      try await HTTPClient.send(
        HTTPRequest(url: server.baseURL, method: .post, body: Data("{}".utf8), usesEnvironmentProxy: false))
    }
    guard case .transport(_, let message) = error else {
      Issue.record("expected a transport error, got \(error)")
      return
    }
    #expect(message == "the response headers are larger than 65536 bytes")
  }

  @Test("a server that closes without answering a POST is a transport error, not a response")
  func closedWithoutAnswer() async throws {
    let server = try LoopbackHTTPServer { _ in .closeWithoutAnswer }
    defer { server.stop() }
    let error = try await #require(throws: HTTPError.self) {
      try await HTTPClient.send(
        HTTPRequest(url: server.baseURL, method: .post, body: Data("{}".utf8), usesEnvironmentProxy: false))
    }
    // CURLE_GOT_NOTHING (52): the request arrived, and nothing came back.
    guard case .transport(52, _) = error else {
      Issue.record("expected CURLE_GOT_NOTHING (52), got \(error)")
      return
    }
    #expect(server.requests.first?.body == Array("{}".utf8))
  }

  @Test("get(_:) refuses another method, and a GET refuses a body, before connecting")
  func methodMismatch() async throws {
    let server = try LoopbackHTTPServer { _ in .json("[]") }
    defer { server.stop() }
    let post = HTTPRequest(url: server.baseURL, method: .post, usesEnvironmentProxy: false)
    let wrongMethod = try await #require(throws: HTTPError.self) { try await HTTPClient.get(post) }
    let withBody = HTTPRequest(url: server.baseURL, body: Data("x".utf8), usesEnvironmentProxy: false)
    let getWithBody = try await #require(throws: HTTPError.self) { try await HTTPClient.send(withBody) }
    for error in [wrongMethod, getWithBody] {
      guard case .invalidRequest = error else {
        Issue.record("expected invalidRequest, got \(error)")
        continue
      }
    }
    #expect(server.connections == 0)
  }

  @Test("no error and no description repeats a header value")
  func secretsStayOut() async throws {
    let secretHeaders = [
      HTTPHeader("apikey", Self.apiKey), HTTPHeader("Authorization", "Bearer \(Self.token)"),
    ]
    let cases: [[HTTPHeader]] = [
      // The whole line given as a name: its token would be in any message that repeated the name.
      [HTTPHeader("Authorization: Bearer \(Self.token)", "")],
      [HTTPHeader("apikey", "\(Self.apiKey)\r\nX-Injected: 1")],
      [HTTPHeader("Authorization", "Bearer \(Self.token)\n")],
    ]
    var texts: [String] = []
    for headers in cases {
      let request = HTTPRequest(
        url: try #require(URL(string: "http://127.0.0.9:9/")), method: .post, headers: headers,
        usesEnvironmentProxy: false)
      let error = try await #require(throws: HTTPError.self) { try await HTTPClient.send(request) }
      guard case .invalidRequest = error else {
        Issue.record("expected invalidRequest, got \(error)")
        continue
      }
      texts += [error.description, error.localizedDescription, String(reflecting: error)]
    }
    // A transport failure of a request that carries both credentials.
    let refused = HTTPRequest(
      url: try #require(URL(string: "http://127.0.0.9:9/rest/v1/rpc/push?token=in-query")), method: .post,
      headers: secretHeaders, body: Data("{}".utf8), usesEnvironmentProxy: false)
    let error = try await #require(throws: HTTPError.self) { try await HTTPClient.send(refused) }
    texts += [error.description, String(reflecting: error)]
    // The request and its headers as print, debugPrint, interpolation and dump show them.
    var dumped = ""
    dump(refused, to: &dumped)
    texts += [refused.description, String(reflecting: refused), "\(refused)", dumped]
    texts += secretHeaders.map { "\($0)" } + secretHeaders.map { String(reflecting: $0) }
    #expect(refused.description.contains("apikey, Authorization"), "\(refused.description)")
    #expect(!refused.description.contains("in-query"), "\(refused.description)")
    for text in texts {
      #expect(!text.contains(Self.apiKey) && !text.contains(Self.token), "\(text)")
    }
  }

  static let apiKey = "anon-key-9f3a61c2"
  static let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXNlY3JldA"
}
