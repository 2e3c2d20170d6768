import Foundation
import PostgresTestSupport
import ReplicationPostgres
import TestKit
import Testing

/// A model check of convergence for an entity with updates (issue 22, item 5), through a real
/// PostgreSQL: devices of one customer, each its own environment with the `Review` test entity
/// and a clock of its own (seconds apart), post reviews, edit them field by field (concurrently
/// on several devices among them), delete them, and push and pull in any order, through
/// `review-device` (one process per operation: `Replicator` and `PostgresTransport`), killed with
/// SIGKILL mid-push or mid-pull; the server crashes (`pg_ctl stop -m immediate`) and restarts in
/// the middle of a push. After a final push and pull everywhere:
///
/// - every device holds the same reviews, and the same review events;
/// - on each, `verify` is clean, a replay equals the live tables, and the rows are the rule's
///   (`Reviews.expectedRows`, worked out from the log without the table engine);
/// - nothing is left to push.
///
/// Quick mode (CI): one seed, 30 steps, 3 devices. `EVENTLOG_FULL=1`: 5 seeds of 200 steps, 5
/// devices. `EVENTLOG_SEED=n` replays one seed.
@Suite("Review convergence model check", .serialized, .needsPostgres)
struct ReviewConvergenceModelCheckTests {
  static let binary = builtProduct("review-device", override: "REVIEW_DEVICE_BINARY")
  static let full = ModelCheck.full
  /// Each device's clock, this far from the machine's (ms): events reach devices out of stamp order.
  static let clockOffsets = [0, -1_500, 2_500, -4_000, 800]

  struct Device {
    let name: String
    let path: String
    let clockOffset: Int

    func arguments(_ command: [String], seed: UInt64) -> [String] {
      ["--db", path, "--clock-offset-ms", String(clockOffset), "--seed", String(seed), "--retry-for", "30"]
        + command
    }

    /// Runs `command`; a failure (exit 1 or worse) is recorded. Exit 2 (the review is not live
    /// here) is an answer.
    @discardableResult
    func run(_ command: [String], seed: UInt64 = 1, trace: ModelCheck.Trace) throws -> ChildRun {
      let result = try runChild(binary, arguments(command, seed: seed))
      if result.status != 0 && result.status != 2 {
        Issue.record("\(name) \(command.joined(separator: " ")) failed: \(result)\n\(trace)")
      }
      return result
    }

    /// Runs `command` and kills it with SIGKILL after `delay` seconds.
    func runKilled(_ command: [String], after delay: Double) async throws {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: binary)
      process.arguments = arguments(command, seed: 1)
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      var environment = ProcessInfo.processInfo.environment
      environment["SWIFT_BACKTRACE"] = "enable=no"
      process.environment = environment
      try process.run()
      try await Task.sleep(for: .seconds(delay))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }

    func lines(_ command: String, trace: ModelCheck.Trace) throws -> [String] {
      try run([command], trace: trace).stdout.split(separator: "\n").map(String.init)
    }
  }

  static var seeds: [UInt64] { ModelCheck.randomSeeds(count: full ? 5 : 1) }

  @Test func devicesConvergeWhateverTheInterleaving() async throws {
    for seed in Self.seeds {
      try await check(seed: seed, steps: Self.full ? 200 : 30, devices: Self.full ? 5 : 3)
    }
  }

  /// Async, yielding between steps: each step blocks its thread while a child runs.
  private func check(seed: UInt64, steps: Int, devices count: Int) async throws {
    let trace = ModelCheck.Trace(seed: seed)
    var random = SplitMix64(seed: seed)
    func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

    let server = try PostgresTestServer()
    defer { server.destroy() }
    let (database, owner, ownerPassword) = try server.createDatabase()
    let initializer = try PostgresTransport(
      url: server.url(user: owner, password: ownerPassword, database: database))
    _ = try await initializer.initializeSchema()
    initializer.close()
    try server.createRole("alice", password: "alicepw")
    let url = server.url(user: "alice", password: "alicepw", database: database)
    let scratch = TemporaryDirectory("review-convergence")
    let devices = (0..<count).map {
      Device(
        name: "device-\($0)", path: scratch.environment("device-\($0)"), clockOffset: Self.clockOffsets[$0])
    }
    var reviews: [String] = []  // every review posted, on any device

    func post(_ device: Device, _ step: Int) throws {
      let posted = try device.run(["post"], seed: random.next(), trace: trace)
      let id = posted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      if !id.isEmpty { reviews.append(id) }
      trace.steps.append("\(step): \(device.name) posts \(id)")
    }
    func edit(_ device: Device, _ id: String, _ step: Int) throws {
      let field = pick(["rate", "retitle", "reword"])
      let result = try device.run([field, id], seed: random.next(), trace: trace)
      trace.steps.append(
        "\(step): \(device.name) \(field)s \(id)\(result.status == 2 ? " (not live there)" : "")")
    }

    for step in 0..<steps {
      await Task.yield()
      let device = pick(devices)
      let roll = random.next() % 100
      switch roll {
      case 0..<20:
        try post(device, step)
      case 20..<40 where !reviews.isEmpty:
        try edit(device, pick(reviews), step)
      case 40..<50 where !reviews.isEmpty:
        // The same review edited on two devices before they exchange anything.
        let id = pick(reviews)
        try edit(device, id, step)
        try edit(pick(devices), id, step)
      case 50..<58 where !reviews.isEmpty:
        let id = pick(reviews)
        let result = try device.run(["delete", id], trace: trace)
        trace.steps.append(
          "\(step): \(device.name) deletes \(id)\(result.status == 2 ? " (not live there)" : "")")
        if chance(40) { try edit(pick(devices), id, step) }  // an edit that races the delete
      case 58..<90:
        let command = roll < 74 ? "push" : "pull"
        if chance(25) {
          let delay = Double(random.next() % 150) / 1_000
          trace.steps.append("\(step): \(device.name) \(command), killed after \(delay) s")
          try await device.runKilled([command, url], after: delay)
        } else {
          trace.steps.append("\(step): \(device.name) \(command)")
          try device.run([command, url], trace: trace)
        }
      case 90..<96:
        // The server crashes and restarts while a push is under way; the push retries.
        try post(device, step)
        trace.steps.append("\(step): \(device.name) push while the server restarts")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = device.arguments(["push", url], seed: 1)
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
        try post(device, step)
      }
    }

    // The end: everyone pushes, then everyone pulls, twice.
    for round in 0..<2 {
      for device in devices {
        trace.steps.append("final \(round): \(device.name) push")
        try device.run(["push", url], trace: trace)
      }
      for device in devices {
        trace.steps.append("final \(round): \(device.name) pull")
        try device.run(["pull", url], trace: trace)
      }
    }

    let reference = try devices[0].lines("list", trace: trace)
    let referenceEvents = Set(try devices[0].lines("events", trace: trace))
    var outOfOrder = 0
    for device in devices {
      #expect(
        try device.lines("list", trace: trace) == reference, "\(device.name) differs from device-0\n\(trace)")
      let events = try device.lines("events", trace: trace)
      #expect(Set(events).count == events.count, "\(device.name) holds an event twice\n\(trace)")
      #expect(Set(events) == referenceEvents, "\(device.name) and device-0 hold different events\n\(trace)")
      let checked = try device.run(["check"], trace: trace)
      #expect(checked.status == 0, "\(device.name): \(checked.stderr)\n\(trace)")
      // "ok R reviews, E events, K out of stamp order"
      outOfOrder += checked.stdout.split(separator: " ").dropLast(4).last.flatMap { Int($0) } ?? 0
      #expect(
        try device.lines("pending", trace: trace) == ["0"], "\(device.name) has events to push\n\(trace)")
    }
    print(
      "[review convergence] seed \(seed): \(steps) steps, \(count) devices, \(reviews.count) reviews posted, \(reference.count) live, \(referenceEvents.count) events (\(outOfOrder) reached a device out of stamp order)"
    )
  }
}
