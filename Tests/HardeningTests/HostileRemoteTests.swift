import EventLog
import Foundation
import HTTPTestSupport
import RestaurantBooking
import TestKit
import Testing

/// Item 7: a hostile PostgREST (a loopback server of ours) gets a clear error, bounded memory and
/// nothing appended, through `EventSourcedRestaurantRepository.refresh()`.
@Suite("Hostile remote", .serialized)
struct HostileRemoteTests {
  /// The body cap the client is created with in these tests.
  static let cap = HardeningMode.pick(quick: 1 << 20, full: 4 << 20)

  /// A store with a catalog of three restaurants, synced from memory; then one refresh from
  /// `server` that must fail. Checks the head and the catalog did not change and returns the error.
  static func refreshFails(
    from server: LoopbackHTTPServer, timeout: Duration = .seconds(10), key: String = "hostile-key"
  ) async throws -> RestaurantSyncError {
    let scratch = TemporaryDirectory("hostile")
    var store: EventStore? = try openDomainStore(scratch.path("store"))
    defer { _ = scratch }
    let seeded = InMemoryRestaurantSource()
    var generator = SplitMix64(seed: 3)
    seeded.set([
      RemoteRestaurant(id: generator.uuid(), name: "Pasta Palace", cuisine: "Italian"),
      RemoteRestaurant(id: generator.uuid(), name: "Sushi Sensation", cuisine: "Japanese"),
      RemoteRestaurant(id: generator.uuid(), name: "Burger Bonanza", cuisine: "American"),
    ])
    let seededRepository = EventSourcedRestaurantRepository(store: try #require(store), source: seeded)
    _ = try await seededRepository.refresh()
    let headBefore = try store?.head()
    let catalogBefore = try await seededRepository.getAll()

    let source = SupabaseRestaurantSource(
      baseURL: server.baseURL, apiKey: key, pageSize: 100, timeout: timeout, maximumResponseBytes: cap)
    let repository = EventSourcedRestaurantRepository(store: try #require(store), source: source)
    var thrown: (any Error)?
    do {
      let summary = try await repository.refresh()
      Issue.record("the refresh succeeded: \(summary)")
    } catch {
      thrown = error
    }
    #expect(try store?.head() == headBefore, "a failed refresh appended events")
    #expect(try await seededRepository.getAll() == catalogBefore)
    let error = try #require(
      thrown as? RestaurantSyncError, "not a RestaurantSyncError: \(String(describing: thrown))")
    #expect(!"\(error)".contains(key) && !String(reflecting: error).contains(key))
    #expect(!"\(error)".isEmpty)
    store = nil
    return error
  }

  @Test("a body over the cap, declared by Content-Length: refused before it is read")
  func declaredOverCap() async throws {
    let server = try LoopbackHTTPServer { _ in
      .endless(
        chunk: Array(repeating: UInt8(ascii: " "), count: 64 << 10), total: 64 << 20, declaredLength: 64 << 20
      )
    }
    let error = try await Self.refreshFails(from: server)
    #expect(error == .responseTooLarge(limit: Self.cap, offset: 0), "\(error)")
    // Refused at the header: the client hangs up before reading the body.
    #expect(server.bodyBytesSent < 16 << 20, "the client read \(server.bodyBytesSent) bytes")
  }

  @Test("an endless body without Content-Length: refused at the cap, memory bounded")
  func endlessBody() async throws {
    let total = HardeningMode.pick(quick: 1 << 30, full: 8 << 30)
    let server = try LoopbackHTTPServer { _ in
      .endless(chunk: Array(repeating: UInt8(ascii: "["), count: 64 << 10), total: total, declaredLength: nil)
    }
    let before = peakRSSBytes()
    let error = try await Self.refreshFails(from: server)
    let growth = peakRSSBytes() - before
    #expect(error == .responseTooLarge(limit: Self.cap, offset: 0), "\(error)")
    // The client never buffers past the cap: libcurl's write callback refuses the first byte past
    // it and the transfer ends there, so the server cannot send much more than the cap plus what
    // the sockets buffer, and the peak RSS grows by little more than the cap.
    print(
      "hardening: endless body: the server sent \(server.bodyBytesSent >> 20) MiB before the client hung up; "
        + "peak RSS grew \(growth >> 20) MiB")
    #expect(server.bodyBytesSent < Self.cap + (16 << 20), "the server sent \(server.bodyBytesSent) bytes")
    #expect(growth < 128 << 20, "peak RSS grew by \(growth) bytes")
  }

  @Test("100,000 nested arrays: a malformed page, no stack overflow")
  func deepNesting() async throws {
    let depth = HardeningMode.pick(quick: 100_000, full: 1_000_000)
    let body = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    #expect(body.utf8.count <= Self.cap * 2)
    let server = try LoopbackHTTPServer { _ in .json(String(body.prefix(Self.cap - 1))) }
    let unclosed = try await Self.refreshFails(from: server)
    guard case .malformedPage(offset: 0, _) = unclosed else {
      Issue.record("expected a malformed page, got \(unclosed)")
      return
    }
    let balanced = String(repeating: "[", count: Self.cap / 4) + String(repeating: "]", count: Self.cap / 4)
    let server2 = try LoopbackHTTPServer { _ in .json(balanced) }
    let error = try await Self.refreshFails(from: server2)
    guard case .malformedPage(offset: 0, _) = error else {
      Issue.record("expected a malformed page, got \(error)")
      return
    }
  }

  @Test("invalid UTF-8 in a row: a clear error naming the page or row")
  func invalidUTF8() async throws {
    let prefix = Array(#"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"Bad "#.utf8)
    let body = prefix + [0xFF, 0xFE, 0xC3] + Array(#"","cuisine":"Thai"}]"#.utf8)
    let server = try LoopbackHTTPServer { _ in
      .respond(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }
    let error = try await Self.refreshFails(from: server)
    switch error {
    case .malformedPage(offset: 0, _), .invalidRow(index: 0, _, _, _): break
    default: Issue.record("expected a malformed page or invalid row 0, got \(error)")
    }
  }

  static let wrongTypes: [(body: String, check: @Sendable (RestaurantSyncError) -> Bool)] = [
    (#"{"rows":[]}"#, { if case .malformedPage = $0 { true } else { false } }),
    (#""restaurants""#, { if case .malformedPage = $0 { true } else { false } }),
    ("null", { if case .malformedPage = $0 { true } else { false } }),
    ("[1,2]", { if case .invalidRow(0, nil, "(row)", _) = $0 { true } else { false } }),
    (
      #"[{"id":42,"name":"A","cuisine":"B"}]"#,
      { if case .invalidRow(0, _, "id", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":true,"cuisine":"B"}]"#,
      { if case .invalidRow(0, _, "name", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"A","cuisine":["x"]}]"#,
      { if case .invalidRow(0, _, "cuisine", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"A","cuisine":null}]"#,
      { if case .invalidRow(0, _, "cuisine", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"not-a-uuid","name":"A","cuisine":"B"}]"#,
      { if case .invalidRow(0, _, "id", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"  ","cuisine":"B"}]"#,
      { if case .invalidRow(0, _, "name", _) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"A","cuisine":"B"},{"id":"5B0E8B0C-6F43-4C3A-9E55-0C1C5B6F7A01","name":"C","cuisine":"D"}]"#,
      { if case .duplicateID(_, 1, 0) = $0 { true } else { false } }
    ),
    (
      #"[{"id":"5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01","name":"A","cuisine":"B"}"#,
      { if case .malformedPage = $0 { true } else { false } }
    ),
  ]

  @Test("wrong types and shapes: an error naming the page, row and field", arguments: 0..<wrongTypes.count)
  func wrongType(_ index: Int) async throws {
    let (body, check) = Self.wrongTypes[index]
    let server = try LoopbackHTTPServer { _ in .json(body) }
    let error = try await Self.refreshFails(from: server)
    #expect(check(error), "body \(body): \(error)")
  }

  @Test("a redirect to a non-loopback http URL or another host: refused without connecting")
  func redirects() async throws {
    // An observable other host: a second loopback address (Linux routes all of 127/8 to lo).
    let elsewhere = try LoopbackHTTPServer(host: "127.0.0.2") { _ in .json("[]") }
    let targets = [
      "http://192.0.2.1:\(elsewhere.port)/rest/v1/restaurants?select=id,name,cuisine&order=id.asc&limit=100&offset=0",
      "http://10.255.255.1/rest/v1/restaurants",
      "http://127.0.0.2:\(elsewhere.port)/rest/v1/restaurants?select=id,name,cuisine&order=id.asc&limit=100&offset=0",
      "http://localhost:\(elsewhere.port)/rest/v1/restaurants",
      "ftp://127.0.0.1/restaurants",
    ]
    for target in targets {
      let server = try LoopbackHTTPServer { _ in .redirect(to: target) }
      let clock = ContinuousClock()
      let start = clock.now
      let error = try await Self.refreshFails(from: server, timeout: .seconds(60))
      guard case .redirectRefused = error else {
        Issue.record("redirect to \(target): expected redirectRefused, got \(error)")
        continue
      }
      // Refused without connecting: a connection attempt to an unroutable address would wait out
      // the 60 s timeout. (The time includes the scratch store's set-up, seconds on a loaded
      // machine: the bound is no measure of speed.)
      #expect(clock.now - start < .seconds(30))
      #expect(server.requests.count == 1)
    }
    #expect(elsewhere.connections == 0, "the client connected to the redirect's host")
  }

  @Test("a connection dropped mid-body: an error, even when the part received is valid JSON")
  func droppedMidBody() async throws {
    var generator = SplitMix64(seed: 11)
    let rows = (0..<20).map { RemoteRestaurant(id: generator.uuid(), name: "R\($0)", cuisine: "Thai") }
    let full = Array(restaurantsJSON(rows).utf8)
    let validPrefix = Array(restaurantsJSON(Array(rows.prefix(5))).utf8)
    let replies: [LoopbackHTTPServer.Reply] = [
      .cutShort(prefix: Array(full.prefix(full.count / 2)), declaredLength: full.count),
      .cutShort(prefix: validPrefix, declaredLength: full.count),
      .chunkedCutShort(prefix: Array(full.prefix(full.count / 2))),
      .chunkedCutShort(prefix: validPrefix),
    ]
    for (index, reply) in replies.enumerated() {
      let server = try LoopbackHTTPServer { _ in reply }
      let error = try await Self.refreshFails(from: server)
      switch error {
      case .transport(_, 0), .malformedPage(0, _): break
      default: Issue.record("reply \(index): expected a transport error or a malformed page, got \(error)")
      }
    }
  }

  @Test("a slow server: a timeout error naming the page, nothing appended")
  func slowServer() async throws {
    let server = try LoopbackHTTPServer { _ in .stall(seconds: 5) }
    let error = try await Self.refreshFails(from: server, timeout: .milliseconds(700))
    switch error {
    case .timeout(_, 0), .transport(_, 0): break
    default: Issue.record("expected a timeout, got \(error)")
    }
  }
}
