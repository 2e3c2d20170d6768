import Foundation
import HTTP
import HTTPTestSupport
import Testing

@Suite("HTTP client over libcurl")
struct HTTPClientTests {
  @Test("a GET sends its headers in order and returns status and body")
  func roundTrip() async throws {
    let server = try LoopbackHTTPServer { request in
      .json(#"{"path":"\#(request.path)"}"#, status: request.query["fail"] == "1" ? 500 : 200)
    }
    defer { server.stop() }
    let request = HTTPRequest(
      url: server.baseURL.appending(path: "rest/v1/things").appending(queryItems: [
        .init(name: "a", value: "1")
      ]),
      headers: [HTTPHeader("apikey", "k-1"), HTTPHeader("Accept", "application/json")],
      usesEnvironmentProxy: false)
    let response = try await HTTPClient.get(request)
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == #"{"path":"/rest/v1/things"}"#)
    #expect(response.redirectURL == nil)
    let received = try #require(server.requests.first)
    #expect(received.method == "GET")
    #expect(received.query == ["a": "1"])
    #expect(received.headers["apikey"] == "k-1")
    #expect(received.headers["accept"] == "application/json")
    #expect(received.headers["accept-encoding"] == nil, "content decoding must stay off")

    var failing = request
    failing.url = server.baseURL.appending(queryItems: [.init(name: "fail", value: "1")])
    let failed = try await HTTPClient.get(failing)
    #expect(failed.status == 500, "a non-2xx answer is a response, not an error")
  }

  @Test(
    "the body cap: exactly the cap is accepted, one byte more is refused",
    arguments: [(100, true), (101, true), (100, false), (101, false)])
  func cap(length: Int, declared: Bool) async throws {
    let body = [UInt8](repeating: UInt8(ascii: "x"), count: length)
    let server = try LoopbackHTTPServer { _ in
      .respond(status: 200, headers: [], body: body, sendsLength: declared)
    }
    defer { server.stop() }
    let request = HTTPRequest(url: server.baseURL, maximumBodyBytes: 100, usesEnvironmentProxy: false)
    if length <= 100 {
      #expect(try await HTTPClient.get(request).body == Data(body))
    } else {
      await #expect(throws: HTTPError.bodyTooLarge(limit: 100)) { try await HTTPClient.get(request) }
    }
  }

  @Test("an endless body is cut off at the cap: the server cannot send much more")
  func endless() async throws {
    let cap = 1 << 20
    let total = 1 << 30
    let server = try LoopbackHTTPServer { _ in
      .endless(chunk: [UInt8](repeating: 0x20, count: 64 << 10), total: total, declaredLength: nil)
    }
    defer { server.stop() }
    let request = HTTPRequest(url: server.baseURL, maximumBodyBytes: cap, usesEnvironmentProxy: false)
    await #expect(throws: HTTPError.bodyTooLarge(limit: cap)) { try await HTTPClient.get(request) }
    // Only the cap and what the sockets buffer: the transfer ends at the first byte past the cap.
    #expect(server.bodyBytesSent < cap + (32 << 20), "the server sent \(server.bodyBytesSent) bytes")
  }

  @Test("a declared Content-Length over the cap is refused before the body is read")
  func declaredOverCap() async throws {
    let server = try LoopbackHTTPServer { _ in
      .endless(chunk: [UInt8](repeating: 0x20, count: 64 << 10), total: 256 << 20, declaredLength: 256 << 20)
    }
    defer { server.stop() }
    let request = HTTPRequest(url: server.baseURL, maximumBodyBytes: 1 << 20, usesEnvironmentProxy: false)
    await #expect(throws: HTTPError.bodyTooLarge(limit: 1 << 20)) { try await HTTPClient.get(request) }
    #expect(server.bodyBytesSent < 32 << 20, "the server sent \(server.bodyBytesSent) bytes")
  }

  @Test("a redirect is returned, not followed, with its Location resolved")
  func redirect() async throws {
    let server = try LoopbackHTTPServer { request in
      request.path == "/old" ? .redirect(to: "/new?x=1") : .json("[]")
    }
    defer { server.stop() }
    let response = try await HTTPClient.get(
      HTTPRequest(url: server.baseURL.appending(path: "old"), usesEnvironmentProxy: false))
    #expect(response.status == 302)
    #expect(response.redirectURL?.absoluteString == "\(server.baseURL.absoluteString)/new?x=1")
    #expect(server.requests.map(\.path) == ["/old"])
  }

  @Test("a server slower than the timeout: timedOut, on time")
  func timeout() async throws {
    let server = try LoopbackHTTPServer { _ in .delayed(.seconds(60), .json("[]")) }
    defer { server.stop() }
    await #expect(throws: HTTPError.timedOut) {
      try await HTTPClient.get(
        HTTPRequest(url: server.baseURL, timeout: .milliseconds(300), usesEnvironmentProxy: false))
    }
    // Timed by the server, from the request's arrival to the client's close: the transfer runs on
    // a thread of its own, while the awaiting task can wait tens of seconds for a cooperative
    // thread when other suites keep both busy (it did in CI), which says nothing about the client.
    let hangUps = await server.hangUps(count: 1)
    #expect(hangUps.count == 1)
    if let hangUp = hangUps.first {
      let waited = hangUp.hungUp - hangUp.requestArrived
      #expect(waited < .seconds(5), "the client closed \(waited) after its request")
    }
  }

  @Test("a timeout far beyond a C long is clamped, not a crash")
  func hugeTimeout() async throws {
    let server = try LoopbackHTTPServer { _ in .json("[]") }
    defer { server.stop() }
    let request = HTTPRequest(url: server.baseURL, timeout: .seconds(Int64.max), usesEnvironmentProxy: false)
    #expect(try await HTTPClient.get(request).status == 200)
  }

  @Test("cancelling the calling task ends the exchange with cancelled")
  func cancellation() async throws {
    let server = try LoopbackHTTPServer { _ in .delayed(.seconds(60), .json("[]")) }
    defer { server.stop() }
    let clock = ContinuousClock()
    let task = Task {
      try await HTTPClient.get(
        HTTPRequest(url: server.baseURL, timeout: .seconds(300), usesEnvironmentProxy: false))
    }
    // Cancelled once the exchange is under way (the server holds the request): in the full suite
    // the task can wait many seconds for a cooperative thread before it even connects (over 30 s
    // once, on a machine loaded by other builds), and a task cancelled before that never opens a
    // connection to close. The bounds are far beyond any wait and mean no speed.
    let asked = ContinuousClock.now
    while server.requests.isEmpty && ContinuousClock.now - asked < .seconds(240) {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(server.requests.count == 1)
    let cancelled = clock.now
    task.cancel()
    await #expect(throws: HTTPError.cancelled) { try await task.value }
    // libcurl asks the progress callback at least once a second while it waits; timed by the
    // server's view of the close (see `timeout`), far below the request's 300 s timeout (room for
    // a loaded machine: it shows the cancel, not the timeout, ended the exchange).
    let hangUps = await server.hangUps(count: 1)
    #expect(hangUps.count == 1)
    if let hangUp = hangUps.first {
      #expect(
        hangUp.hungUp - cancelled < .seconds(30), "closed \(hangUp.hungUp - cancelled) after the cancel")
    }
  }

  @Test(
    "requests libcurl must never send are refused before connecting",
    arguments: [
      ("ftp", HTTPHeader("Accept", "application/json")),
      ("http", HTTPHeader("apikey", "a\r\nX-Injected: 1")),
      ("http", HTTPHeader("Bad Name", "v")),
      ("http", HTTPHeader("", "v")),
    ])
  func invalid(scheme: String, header: HTTPHeader) async throws {
    let server = try LoopbackHTTPServer { _ in .json("[]") }
    defer { server.stop() }
    let url = try #require(URL(string: "\(scheme)://127.0.0.1:\(server.port)/"))
    let error = try await #require(throws: HTTPError.self) {
      try await HTTPClient.get(HTTPRequest(url: url, headers: [header], usesEnvironmentProxy: false))
    }
    guard case .invalidRequest = error else {
      Issue.record("expected invalidRequest, got \(error)")
      return
    }
    #expect(server.connections == 0)
  }

  @Test("transport failures carry libcurl's code and message")
  func transport() async throws {
    // Nothing listens on 127.0.0.9 (the test servers bind 127.0.0.1 and 127.0.0.2 only); a port
    // just freed on 127.0.0.1 could be taken again by a server of a test running in parallel.
    let refused = try await #require(throws: HTTPError.self) {
      try await HTTPClient.get(
        HTTPRequest(url: try #require(URL(string: "http://127.0.0.9:9/")), usesEnvironmentProxy: false))
    }
    guard case .transport(7, let message) = refused else {
      Issue.record("expected CURLE_COULDNT_CONNECT (7), got \(refused)")
      return
    }
    #expect(message.contains("127.0.0.9"), "\(message)")

    let short = try LoopbackHTTPServer { _ in .cutShort(prefix: Array("[1,2".utf8), declaredLength: 100) }
    defer { short.stop() }
    let cut = try await #require(throws: HTTPError.self) {
      try await HTTPClient.get(HTTPRequest(url: short.baseURL, usesEnvironmentProxy: false))
    }
    // Usually CURLE_PARTIAL_FILE (18); what matters is that a body cut short is an error, never a
    // response holding the part that arrived.
    guard case .transport = cut else {
      Issue.record("expected a transport error, got \(cut)")
      return
    }
  }
}
