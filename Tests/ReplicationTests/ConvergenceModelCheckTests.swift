import Foundation
import Postgres
import PostgresTestSupport
import TestKit
import Testing

/// A model check of convergence through the built `eventlog`: several devices of one customer
/// and one of another make random bookings and deletes (double deletes from two devices among
/// them), push and pull, are killed with SIGKILL mid-push or mid-pull, and the server crashes
/// and restarts in the middle of a push. After a final push and pull everywhere:
///
/// - every device of the customer holds the same bookings;
/// - every local event of a replicated stream is on the server exactly once, and every server
///   event of the owner is in each of the owner's devices exactly once;
/// - the other customer's device holds none of it, and the server none of its events for the first;
/// - `verify` and `replay` are clean everywhere, and nothing is pending.
///
/// Quick mode (CI): one seed, 40 steps, 3 + 1 devices. `EVENTLOG_FULL=1`: 5 seeds of 250 steps,
/// 5 + 1 devices. `EVENTLOG_SEED=n` replays one seed.
@Suite("Convergence model check", .serialized, .needsPostgres)
struct ConvergenceModelCheckTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  static let full = ModelCheck.full

  struct Device {
    let name: String
    let path: String
    let url: String

    func run(_ arguments: [String], killAfter: Double? = nil) async throws -> ChildRun? {
      guard let killAfter else { return try runChild(binary, ["--db", path] + arguments) }
      let process = Process()
      process.executableURL = URL(fileURLWithPath: binary)
      process.arguments = ["--db", path] + arguments
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      var environment = ProcessInfo.processInfo.environment
      environment["SWIFT_BACKTRACE"] = "enable=no"
      process.environment = environment
      try process.run()
      try await Task.sleep(for: .seconds(killAfter))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      return nil
    }

    func must(_ arguments: String..., trace: ModelCheck.Trace) throws -> ChildRun {
      let result = try runChild(binary, ["--db", path] + arguments)
      if result.status != 0 {
        Issue.record("\(name) \(arguments.joined(separator: " ")) failed: \(result)\n\(trace)")
      }
      return result
    }

    func bookings(trace: ModelCheck.Trace) throws -> [[String: Any]] {
      let listed = try must("bookings", "list", "--json", trace: trace)
      return (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    func bookingIDs(trace: ModelCheck.Trace) throws -> [String] {
      try bookings(trace: trace).compactMap { $0["id"] as? String }.sorted()
    }

    /// The IDs of the events of booking streams in the local log.
    func replicatedEventIDs(trace: ModelCheck.Trace) throws -> [String] {
      let log = try must("log", "--json", trace: trace)
      return log.stdout.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          (object["stream"] as? String)?.hasPrefix("booking-") == true
        else { return nil }
        return (object["id"] as? String)?.lowercased()
      }
    }
  }

  static var seeds: [UInt64] { ModelCheck.randomSeeds(count: full ? 5 : 1) }

  @Test func devicesConvergeWhateverTheInterleaving() async throws {
    for seed in Self.seeds {
      try await check(seed: seed, steps: Self.full ? 250 : 40, devices: Self.full ? 5 : 3)
    }
  }

  /// Async, yielding between steps: each step blocks its thread while a child runs, and a test
  /// that held a cooperative thread for its whole run would stall the other suites' tasks.
  private func check(seed: UInt64, steps: Int, devices count: Int) async throws {
    let trace = ModelCheck.Trace(seed: seed)
    var random = SplitMix64(seed: seed)
    func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

    let server = try PostgresTestServer()
    defer { server.destroy() }
    let (database, owner, ownerPassword) = try server.createDatabase()
    let initialized = try runChild(
      Self.binary, ["remote", "init", server.url(user: owner, password: ownerPassword, database: database)])
    #expect(initialized.status == 0, "\(initialized)")
    try server.createRole("alice", password: "alicepw")
    try server.createRole("bob", password: "bobpw")
    let aliceURL = server.url(user: "alice", password: "alicepw", database: database)
    let bobURL = server.url(user: "bob", password: "bobpw", database: database)
    let scratch = TemporaryDirectory("convergence")
    let alices = (0..<count).map {
      Device(name: "alice-\($0)", path: scratch.environment("alice-\($0)"), url: aliceURL)
    }
    let bob = Device(name: "bob", path: scratch.environment("bob"), url: bobURL)
    let catalog = try scratch.file(
      "catalog.json",
      Data(#"[{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"}]"#.utf8)
    )
    for device in alices + [bob] {
      _ = try device.must("restaurants", "sync", "--from", catalog, trace: trace)
    }

    func book(_ device: Device, _ step: Int) throws {
      let day = 1 + Int(random.next() % 27)
      _ = try device.must(
        "bookings", "create", "--restaurant", "Pasta Palace", "--date",
        String(format: "2099-02-%02dT19:00:00Z", day),
        "--party", String(1 + random.next() % 8), "--name", "Guest \(step)", trace: trace)
    }

    for step in 0..<steps {
      await Task.yield()
      let device = pick(alices)
      let roll = random.next() % 100
      switch roll {
      case 0..<25:
        trace.steps.append("\(step): \(device.name) books")
        try book(device, step)
      case 25..<40:
        let ids = try device.bookingIDs(trace: trace)
        guard !ids.isEmpty else { continue }
        let id = pick(ids)
        trace.steps.append("\(step): \(device.name) deletes \(id)")
        _ = try device.must("bookings", "delete", id, trace: trace)
        // The same booking, deleted on a second device that still shows it.
        let other = pick(alices)
        if other.name != device.name, chance(40), try other.bookingIDs(trace: trace).contains(id) {
          trace.steps.append("\(step): \(other.name) deletes \(id) too")
          _ = try other.must("bookings", "delete", id, trace: trace)
        }
      case 40..<80:
        let command = roll < 60 ? "push" : "pull"
        if chance(25) {
          let delay = Double(random.next() % 150) / 1000
          trace.steps.append("\(step): \(device.name) \(command), killed after \(delay) s")
          _ = try await device.run([command, device.url, "--retry-for", "20"], killAfter: delay)
        } else {
          trace.steps.append("\(step): \(device.name) \(command)")
          _ = try device.must(command, device.url, "--retry-for", "20", trace: trace)
        }
      case 80..<88:
        // The server crashes and restarts while a push is under way; the push retries.
        trace.steps.append("\(step): \(device.name) push while the server restarts")
        try book(device, step)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--db", device.path, "push", device.url, "--retry-for", "30"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: .milliseconds(random.next() % 80))
        try server.stop(immediate: true)
        try server.start()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
          Issue.record(
            "\(device.name): a push across a server restart failed (\(process.terminationStatus))\n\(trace)")
        }
      default:
        trace.steps.append("\(step): bob books and replicates")
        try book(bob, step)
        _ = try bob.must("replicate", bob.url, "--retry-for", "20", trace: trace)
      }
    }

    // The end: everyone pushes, then everyone pulls, twice.
    for round in 0..<2 {
      for device in alices + [bob] {
        trace.steps.append("final \(round): \(device.name) push")
        _ = try device.must("push", device.url, "--retry-for", "20", trace: trace)
      }
      for device in alices + [bob] {
        trace.steps.append("final \(round): \(device.name) pull")
        _ = try device.must("pull", device.url, "--retry-for", "20", trace: trace)
      }
    }

    let superuser = try PostgresConnection(PostgresConfiguration(url: server.url(database: database)))
    defer { superuser.close() }
    func serverIDs(_ owner: String) throws -> [String] {
      let rows = try superuser.query(
        """
        SELECT id FROM eventlog.events
        WHERE owner = 'role:' || (SELECT oid FROM pg_roles WHERE rolname = $1)::text ORDER BY position
        """, [.text(owner)], purpose: "check")
      return try (0..<rows.count).map { try rows.string($0, "id").lowercased() }
    }
    let aliceOnServer = try serverIDs("alice")
    let bobOnServer = try serverIDs("bob")
    #expect(Set(aliceOnServer).count == aliceOnServer.count, "\(trace)")

    let reference = try alices[0].bookings(trace: trace).map { NSDictionary(dictionary: $0) }
    for device in alices {
      let bookings = try device.bookings(trace: trace).map { NSDictionary(dictionary: $0) }
      #expect(bookings == reference, "\(device.name) differs from \(alices[0].name)\n\(trace)")
      let local = try device.replicatedEventIDs(trace: trace)
      #expect(Set(local).count == local.count, "\(device.name) holds an event twice\n\(trace)")
      #expect(Set(local) == Set(aliceOnServer), "\(device.name) and the server differ\n\(trace)")
    }
    let bobs = try bob.replicatedEventIDs(trace: trace)
    #expect(Set(bobs) == Set(bobOnServer), "\(trace)")
    #expect(Set(bobs).isDisjoint(with: aliceOnServer), "\(trace)")
    #expect(
      try bob.bookingIDs(trace: trace).allSatisfy { id in !reference.contains { ($0["id"] as? String) == id }
      })
    for device in alices + [bob] {
      _ = try device.must("verify", trace: trace)
      _ = try device.must("replay", trace: trace)
      let status = try device.must("remote", "status", "--json", trace: trace)
      #expect(status.stdout.contains(#""pending":0"#), "\(device.name): \(status.stdout)\n\(trace)")
    }
    print(
      "[convergence] seed \(seed): \(steps) steps, \(count) + 1 devices, \(aliceOnServer.count) + \(bobOnServer.count) events on the server, \(reference.count) bookings"
    )
  }
}
