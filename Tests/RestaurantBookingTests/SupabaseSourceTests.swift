import EventLog
import Foundation
import HTTPTestSupport
import TestKit
import Testing

@testable import RestaurantBooking

@Suite("Supabase client against a loopback PostgREST", .serialized)
struct SupabaseSourceTests {
  static let key = "test-anon-key-9f8e7d6c5b4a"

  func source(
    _ server: LoopbackHTTPServer, pageSize: Int = 1000, timeout: Duration = .seconds(10),
    maximumBytes: Int = 8 << 20
  ) -> SupabaseRestaurantSource {
    SupabaseRestaurantSource(
      baseURL: server.baseURL, apiKey: Self.key, pageSize: pageSize, timeout: timeout,
      maximumResponseBytes: maximumBytes)
  }

  /// Refreshes a store seeded with two restaurants through `source`, expecting a failure that
  /// appends nothing and never shows the key.
  func expectFailure(_ source: SupabaseRestaurantSource) async throws -> RestaurantSyncError {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    _ = try await EventSourcedRestaurantRepository(store: store, source: ScriptedSource([catalog(2)]))
      .refresh()
    let head = try store.head()
    let repository = EventSourcedRestaurantRepository(store: store, source: source)
    let error = try await #require(throws: RestaurantSyncError.self) { try await repository.refresh() }
    #expect(try store.head() == head, "nothing is appended")
    #expect(!error.description.contains(Self.key))
    #expect(!String(reflecting: error).contains(Self.key))
    try expectProjectionsMatchReplay(store)
    return error
  }

  @Test("2,500 rows arrive in pages of 1,000 with PostgREST's query and headers")
  func paging() async throws {
    let rows = catalog(2_500)
    let server = try LoopbackHTTPServer.postgrest(rows)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let repository = EventSourcedRestaurantRepository(store: store, source: source(server))
    #expect(try await repository.refresh() == RefreshSummary(added: 2_500))
    let requests = server.requests
    #expect(requests.map { $0.query["offset"] } == ["0", "1000", "2000"])
    for request in requests {
      #expect(request.method == "GET")
      #expect(request.path == "/rest/v1/restaurants")
      #expect(request.query["select"] == "id,name,cuisine")
      #expect(request.query["order"] == "id.asc")
      #expect(request.query["limit"] == "1000")
      #expect(request.headers["apikey"] == Self.key)
      #expect(request.headers["authorization"] == "Bearer \(Self.key)")
      #expect(request.headers["accept"] == "application/json")
    }
    #expect(try await repository.getAll().count == 2_500)
    let refreshed = try #require(try store.events(from: 1).last).decode(RestaurantsRefreshed.self)
    #expect(refreshed.source == server.baseURL.absoluteString)
    #expect(
      try store.events(from: 1).allSatisfy { !String(decoding: $0.payload, as: UTF8.self).contains(Self.key) }
    )
    try expectProjectionsMatchReplay(store)
  }

  @Test("an exact multiple of the page size ends with an empty page")
  func exactMultiple() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(20))
    defer { server.stop() }
    #expect(try await source(server, pageSize: 10).fetchAll().count == 20)
    #expect(server.requests.map { $0.query["offset"] } == ["0", "10", "20"])
  }

  @Test("a base URL with a path keeps it")
  func basePath() throws {
    let source = SupabaseRestaurantSource(
      baseURL: URL(string: "https://x.supabase.co/project/")!, apiKey: "k")
    #expect(
      source.pageURL(offset: 2000).absoluteString
        == "https://x.supabase.co/project/rest/v1/restaurants?select=id,name,cuisine&order=id.asc&limit=1000&offset=2000"
    )
  }

  @Test("401 and 500 fail with the status and PostgREST's message", arguments: [401, 500])
  func httpErrors(status: Int) async throws {
    let message = status == 401 ? "JWT expired" : "database is unavailable"
    let server = try LoopbackHTTPServer.postgrest(catalog(10)) { _ in
      .postgrestError(status, code: status == 401 ? "PGRST301" : "XX000", message: message)
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server))
    #expect(error == .httpStatus(status, message: message, offset: 0))
    #expect(error.description == "the server answered HTTP \(status) for the page at offset 0: \(message)")
  }

  @Test("a server echoing the key in its message has it redacted")
  func echoedKey() async throws {
    let server = try LoopbackHTTPServer.postgrest([]) { request in
      .postgrestError(401, code: "PGRST301", message: "bad key \(request.headers["apikey"] ?? "")")
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server))
    #expect(error == .httpStatus(401, message: "bad key [redacted]", offset: 0))
  }

  @Test("a failure on the second page appends nothing")
  func secondPageFails() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(2_500)) { request in
      request.query["offset"] == "1000" ? .postgrestError(500, code: "XX000", message: "boom") : nil
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server))
    #expect(error == .httpStatus(500, message: "boom", offset: 1000))
    #expect(server.requests.count == 2)
  }

  @Test("malformed JSON fails naming the page")
  func malformed() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(1_500)) { request in
      request.query["offset"] == "1000" ? .json(#"[{"id": "#) : nil
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server))
    guard case .malformedPage(let offset, _) = error else {
      Issue.record("unexpected \(error)")
      return
    }
    #expect(offset == 1000)
  }

  @Test(
    "a missing or mistyped field fails naming the row, its id and the field",
    arguments: [
      (#"[{"id":"00000000-0000-4000-8000-000000000001","name":"A"}]"#, "cuisine", "is missing"),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":7,"cuisine":"Thai"}]"#, "name",
        "is a number, not a string"
      ),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","cuisine":null}]"#, "cuisine",
        "is null, not a string"
      ),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","cuisine":["Thai"]}]"#, "cuisine",
        "is an array, not a string"
      ),
    ])
  func invalidField(body: String, field: String, reason: String) async throws {
    let server = try LoopbackHTTPServer.postgrest([]) { _ in .json(body) }
    defer { server.stop() }
    let error = try await expectFailure(source(server))
    #expect(
      error == .invalidRow(index: 0, id: "00000000-0000-4000-8000-000000000001", field: field, reason: reason)
    )
  }

  @Test("a row on a later page is named by its index in the snapshot")
  func rowIndexAcrossPages() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(15)) { request in
      request.query["offset"] == "10"
        ? .json(#"[{"id":"00000000-0000-4000-8000-0000000000aa","name":"","cuisine":"Thai"}]"#) : nil
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server, pageSize: 10))
    #expect(
      error
        == .invalidRow(
          index: 10, id: "00000000-0000-4000-8000-0000000000aa", field: "name", reason: "is empty"))
    #expect(error.description == "row 10 (id 00000000-0000-4000-8000-0000000000aa): field 'name' is empty")
  }

  @Test("a duplicate id, even across pages, fails naming both rows")
  func duplicate() async throws {
    var rows = catalog(15)
    rows[12].id = rows[3].id
    let server = try LoopbackHTTPServer.postgrest(rows)
    defer { server.stop() }
    let error = try await expectFailure(source(server, pageSize: 10))
    #expect(error == .duplicateID(rows[3].id, index: 12, firstIndex: 3))
  }

  @Test("a server too slow for the timeout fails with a timeout")
  func timeout() async throws {
    // The server would answer after 10 s: a failure well before that is the client's timeout (the
    // upper bound leaves room for a loaded machine; it is no measure of speed).
    let server = try LoopbackHTTPServer.postgrest(catalog(3)) { _ in .delayed(.seconds(10), .json("[]")) }
    defer { server.stop() }
    let clock = ContinuousClock()
    let start = clock.now
    let error = try await expectFailure(source(server, timeout: .milliseconds(500)))
    let elapsed = clock.now - start
    #expect(elapsed >= .milliseconds(450) && elapsed < .seconds(8), "took \(elapsed)")
    #expect(error.description == "the server did not answer the page at offset 0 within 0.5 s")
    guard case .timeout(_, let offset) = error else {
      Issue.record("unexpected \(error)")
      return
    }
    #expect(offset == 0)
  }

  @Test("a body over the cap fails", arguments: [true, false])
  func tooLarge(withLength: Bool) async throws {
    let big = Array(try body(catalog(2_000)))
    let server = try LoopbackHTTPServer.postgrest([]) { _ in
      .respond(
        status: 200, headers: [("Content-Type", "application/json")], body: big, sendsLength: withLength)
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server, maximumBytes: 10_000))
    #expect(error == .responseTooLarge(limit: 10_000, offset: 0))
  }

  @Test(
    "plain http is refused off loopback, before any traffic",
    arguments: [
      "http://example.com", "http://10.0.0.1:8080", "http://127.evil.com", "ftp://127.0.0.1",
      "http://user:pw@192.0.2.1/",
    ])
  func insecure(url: String) async throws {
    let source = SupabaseRestaurantSource(baseURL: URL(string: url)!, apiKey: Self.key)
    let error = try await #require(throws: RestaurantSyncError.self) { try await source.fetchAll() }
    guard case .insecureURL(let shown, _) = error else {
      Issue.record("unexpected \(error)")
      return
    }
    #expect(!shown.contains("pw"))
  }

  @Test("a redirect to a non-loopback http URL is refused, and not followed")
  func redirect() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(3)) { _ in
      .respond(
        status: 302, headers: [("Location", "http://192.0.2.1:9/rest/v1/restaurants")], body: [])
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server, timeout: .seconds(3)))
    #expect(error == .redirectRefused(to: "http://192.0.2.1:9/rest/v1/restaurants"))
    #expect(server.requests.count == 1)
  }

  @Test("a redirect to another host is refused, so the key stays on its host")
  func redirectOffHost() async throws {
    let server = try LoopbackHTTPServer.postgrest(catalog(3)) { request in
      request.path == "/rest/v1/restaurants"
        ? .respond(
          status: 302,
          headers: [
            (
              "Location",
              "http://localhost:\(request.headers["host"]?.split(separator: ":").last ?? "")/elsewhere"
            )
          ], body: [])
        : .json("[]")
    }
    defer { server.stop() }
    let error = try await expectFailure(source(server, timeout: .seconds(3)))
    #expect(error == .redirectRefused(to: "http://localhost:\(server.port)/elsewhere"))
    #expect(server.requests.count == 1)
  }

  @Test("a redirect on the same host is followed")
  func redirectSameHost() async throws {
    let rows = catalog(3)
    let server = try LoopbackHTTPServer.postgrest(rows) { request in
      request.path == "/old/rest/v1/restaurants"
        ? .respond(
          status: 302,
          headers: [
            (
              "Location",
              "/rest/v1/restaurants?\(request.query.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&"))"
            )
          ], body: [])
        : nil
    }
    defer { server.stop() }
    let source = SupabaseRestaurantSource(
      baseURL: server.baseURL.appendingPathComponent("old"), apiKey: Self.key, timeout: .seconds(3))
    #expect(try await source.fetchAll() == rows)
    #expect(server.requests.map(\.path) == ["/old/rest/v1/restaurants", "/rest/v1/restaurants"])
  }

  @Test("the key is in no description of the source")
  func keyNotShown() {
    let source = SupabaseRestaurantSource(baseURL: URL(string: "https://x.supabase.co")!, apiKey: Self.key)
    #expect(!String(describing: source).contains(Self.key))
    #expect(!String(reflecting: source).contains(Self.key))
    var dumped = ""
    dump(source, to: &dumped)
    #expect(!dumped.contains(Self.key))
    #expect(source.sourceDescription == "https://x.supabase.co")
  }
}
