import EventLog
import Foundation
import HTTPTestSupport
import RestaurantBooking
import TestKit
import Testing

/// Item 8: a canary API key used for successful and failing syncs appears in no output, error,
/// export, log or LMDB file; with `umask 000` the environment is still 0700 and its files 0600.
@Suite("Secrets and permissions")
struct SecretsTests {
  /// A server that serves three restaurants to requests carrying `key` and answers every other
  /// request, and every request after `failAfter` requests, with a 401 whose message echoes the
  /// key it was sent (as a careless server might).
  static func server(key: String) throws -> LoopbackHTTPServer {
    var generator = SplitMix64(seed: 5)
    let rows = [
      RemoteRestaurant(id: generator.uuid(), name: "Pasta Palace", cuisine: "Italian"),
      RemoteRestaurant(id: generator.uuid(), name: "Sushi Sensation", cuisine: "Japanese"),
      RemoteRestaurant(id: generator.uuid(), name: "Burger Bonanza", cuisine: "American"),
    ]
    return try LoopbackHTTPServer.postgrest(rows) { request in
      if request.query["offset"] == "fail" || request.path.hasPrefix("/fail") {
        let sent = request.headers["apikey"] ?? ""
        return .json(
          #"{"code":"PGRST301","message":"JWT \#(sent) is invalid: Bearer \#(sent)"}"#, status: 401)
      }
      return nil
    }
  }

  /// Whether `text` contains the key or a telling part of it (its random part).
  static func leaks(_ text: String, _ key: String) -> Bool {
    text.contains(key) || text.contains(String(key.dropFirst("canary-".count).prefix(18)))
  }

  static func leaks(_ bytes: [UInt8], _ key: String) -> Bool {
    !occurrences(of: Array(key.utf8), in: bytes).isEmpty
      || !occurrences(of: Array(key.dropFirst("canary-".count).prefix(18).utf8), in: bytes).isEmpty
  }

  /// The LMDB files of the environment at `path`.
  static func environmentFiles(_ path: String) throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    for name in ["data.mdb", "lock.mdb"] {
      files[name] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path).appendingPathComponent(name)))
    }
    return files
  }

  @Test("through the repository: no error, description, event or LMDB file shows the key")
  func repository() async throws {
    let key = "canary-\(UUID().uuidString)"
    let server = try Self.server(key: key)
    let scratch = TemporaryDirectory("secrets")
    let path = scratch.path("store")
    var store: EventStore? = try openDomainStore(path)
    var texts: [String] = []
    do {
      let good = SupabaseRestaurantSource(baseURL: server.baseURL, apiKey: key, timeout: .seconds(10))
      let repository = EventSourcedRestaurantRepository(store: try #require(store), source: good)
      texts += ["\(good)", String(reflecting: good), good.sourceDescription]
      var dumped = ""
      dump(good, to: &dumped)
      texts.append(dumped)
      let summary = try await repository.refresh()
      #expect(summary.added == 3)
      // The key was really used: the server saw it in both headers.
      let request = try #require(server.requests.last)
      #expect(request.headers["apikey"] == key)
      #expect(request.headers["authorization"] == "Bearer \(key)")
      #expect(!Self.leaks(request.path + "\(request.query)", key), "the key is in the URL")

      // Failing syncs: a 401 echoing the key, a refused redirect, a closed port, a bad URL.
      let failing: [URL] = [
        server.baseURL.appendingPathComponent("fail"),
        URL(string: "http://127.0.0.1:1")!,
        URL(string: "http://user:\(key)@192.0.2.1/")!,
      ]
      for url in failing {
        let source = SupabaseRestaurantSource(baseURL: url, apiKey: key, timeout: .seconds(10))
        let failingRepository = EventSourcedRestaurantRepository(store: try #require(store), source: source)
        do {
          _ = try await failingRepository.refresh()
          Issue.record("the sync from \(url) succeeded")
        } catch {
          texts += [
            "\(error)", String(reflecting: error), error.localizedDescription, "\(source)",
            String(reflecting: source),
          ]
        }
      }
    }
    for text in texts {
      #expect(!Self.leaks(text, key), "the key leaked: \(text)")
    }
    // The events: payloads, metadata, stream names.
    for event in try #require(try store?.events(from: 1)) {
      #expect(!Self.leaks(event.payload, key) && !Self.leaks("\(event)", key))
    }
    await release(&store)
    for (name, bytes) in try Self.environmentFiles(path) {
      #expect(!Self.leaks(bytes, key), "the key is in \(name)")
    }
  }

  @Test(
    "through the eventlog binary (--api-key and SUPABASE_ANON_KEY): no output, export or file shows the key")
  func binary() async throws {
    let key = "canary-\(UUID().uuidString)"
    let server = try Self.server(key: key)
    let scratch = TemporaryDirectory("secrets")
    let path = scratch.path("store")
    let url = server.baseURL.absoluteString
    var runs: [(String, ChildRun)] = []
    func run(_ arguments: [String], environment: [String: String] = [:], expect status: Int32) throws {
      let result = try EventLogBinary.run(["--db", path] + arguments, environment: environment)
      #expect(!result.crashed && result.status == status, "\(arguments): \(result)")
      runs.append((arguments.joined(separator: " "), result))
    }
    try run(["restaurants", "sync", "--from", url, "--api-key", key], expect: 0)
    try run(["restaurants", "sync", "--from", url, "--api-key", key, "--json"], expect: 0)
    try run(["restaurants", "sync", "--from", url], environment: ["SUPABASE_ANON_KEY": key], expect: 0)
    #expect(server.requests.count == 3 && server.requests.allSatisfy { $0.headers["apikey"] == key })
    try run(["restaurants", "sync", "--from", url + "/fail", "--api-key", key], expect: 1)
    try run(
      ["restaurants", "sync", "--from", url + "/fail"], environment: ["SUPABASE_ANON_KEY": key], expect: 1)
    try run(["restaurants", "sync", "--from", "http://127.0.0.1:1", "--api-key", key], expect: 1)
    try run(["restaurants", "sync", "--from", "http://192.0.2.1/", "--api-key", key], expect: 1)
    try run(["restaurants", "sync", "--from", url, "--api-key", key, "--bogus"], expect: 64)
    #expect(server.requests.filter { $0.path.hasPrefix("/fail") }.count == 2)
    let exportFile = scratch.path("export.jsonl")
    try run(["log", "--json"], expect: 0)
    try run(["log"], expect: 0)
    try run(["export"], expect: 0)
    try run(["export", "--output", exportFile], expect: 0)
    try run(["show", "1", "--json"], expect: 0)
    try run(["stats", "--json"], expect: 0)
    try run(["verify", "--json"], expect: 0)
    try run(["replay", "--json"], expect: 0)
    #expect(runs.first { $0.0 == "export" }.map { $0.1.stdout.contains("RestaurantsRefreshed") } == true)
    for (command, result) in runs {
      #expect(!Self.leaks(result.stdoutBytes, key), "the key is on the stdout of \(command)")
      #expect(!Self.leaks(result.stderr, key), "the key is on the stderr of \(command): \(result.stderr)")
    }
    #expect(!Self.leaks([UInt8](try Data(contentsOf: URL(fileURLWithPath: exportFile))), key))
    for (name, bytes) in try Self.environmentFiles(path) {
      #expect(!Self.leaks(bytes, key), "the key is in \(name)")
    }
  }

  @Test("with umask 000 the environment directory is 0700 and its files 0600")
  func permissions() throws {
    let key = "canary-\(UUID().uuidString)"
    let server = try Self.server(key: key)
    let scratch = TemporaryDirectory("umask")
    let path = scratch.path("store")
    let run = try EventLogBinary.run(
      ["--db", path, "restaurants", "sync", "--from", server.baseURL.absoluteString, "--api-key", key],
      umask: "000")
    #expect(run.status == 0 && !run.crashed, "\(run)")
    // A second command (a reader and another writer) must not loosen anything either.
    let file = try EventLogBinary.run(["--db", path, "bookings", "list"], umask: "000")
    #expect(file.status == 0, "\(file)")
    func mode(_ path: String) throws -> Int {
      let attributes = try FileManager.default.attributesOfItem(atPath: path)
      return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
    let directoryMode = try mode(path)
    #expect(directoryMode == 0o700, "directory mode \(String(directoryMode, radix: 8))")
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      let fileMode = try mode(URL(fileURLWithPath: path).appendingPathComponent(name).path)
      #expect(fileMode == 0o600, "\(name) mode \(String(fileMode, radix: 8))")
    }
    #expect(Set(try FileManager.default.contentsOfDirectory(atPath: path)) == ["data.mdb", "lock.mdb"])
  }
}
