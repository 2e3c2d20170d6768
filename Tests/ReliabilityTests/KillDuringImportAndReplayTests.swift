import EventLog
import Foundation
import LMDB
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// Item 2: `eventlog import` and `eventlog replay --apply` killed at random moments.
  @Suite struct KillDuringImportAndReplay {
    /// Events in the export to import (the debug `eventlog` imports about 3,000 a second, most
    /// of it parsing and validating before the store is opened).
    static let importEvents = Mode.pick(quick: 2_500, full: 20_000)
    /// Events in the log to replay.
    static let replayEvents = Mode.pick(quick: 10_000, full: 50_000)

    @Test("kill -9 during import leaves nothing or the whole import")
    func killDuringImport() async throws {
      let kills = Mode.pick(quick: 5, full: 25)
      let directory = TemporaryDirectory()
      var random = SplitMix64(seed: Mode.seed ^ 0x1A9_0D7)
      // The reference log, exported by the built binary.
      let reference = directory.environment("reference")
      var store: EventStore? = try EventStore(
        path: reference, projections: RestaurantBookingSchema.projections, options: .noSync)
      try await DomainEvents.populate(try #require(store), count: Self.importEvents, seed: random.next())
      let expected = try logFingerprint(try #require(store))
      await close(&store)
      let exportFile = directory.url.appendingPathComponent("export.jsonl").path
      let export = try Child(
        Binaries.eventlog, ["--db", reference, "export", "--output", exportFile], in: directory.url)
      let exported = await export.wait(timeout: .seconds(300))
      try #require(exported == .exited(0), "export: \(export.stderr)")

      // One import to the end: how long it takes (in all, and from the moment the environment is
      // created: the part worth killing), and that it restores every byte.
      let clock = ContinuousClock()
      let started = clock.now
      let complete = directory.environment("complete")
      let full = try Child(Binaries.eventlog, ["--db", complete, "import", exportFile], in: directory.url)
      let opened = await waitForFile(complete, while: full)
      let parsing = opened - started
      let finished = await full.wait(timeout: .seconds(300))
      let duration = clock.now - started
      let writing = clock.now - opened
      try #require(finished == .exited(0), "import: \(full.stderr)")
      let check = try Child(Binaries.eventlog, ["--db", complete, "export"], in: directory.url)
      _ = await check.wait(timeout: .seconds(300))
      let original = try String(contentsOfFile: exportFile, encoding: .utf8)
      #expect(
        exportedEvents(check.lines.joined(separator: "\n") + "\n") == exportedEvents(original),
        "import then export changed the log")
      let completeAudit = try await audit(
        path: complete, projections: RestaurantBookingSchema.projections, acknowledged: [:],
        appendProbe: false)
      #expect(completeAudit.problems.isEmpty, "\(completeAudit.problems)")
      #expect(completeAudit.head == UInt64(Self.importEvents))

      // Each kill lands between the creation of the environment and the import's end (a kill
      // while it parses the file is of no interest: nothing is open yet). The window shrinks to
      // the shortest run seen.
      var outcomes: [String: Int] = [:]
      var window = writing.milliseconds
      for kill in 1...kills {
        let path = directory.environment("import-\(kill)")
        let child = try Child(Binaries.eventlog, ["--db", path, "import", exportFile], in: directory.url)
        let created = await waitForFile(path, while: child)
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...window, using: &random)))
        if !child.process.isRunning { window = min(window, (ContinuousClock.now - created).milliseconds) }
        child.kill()
        let termination = await child.wait(timeout: .seconds(60))
        #expect(
          termination == .signaled(SIGKILL) || termination == .exited(0),
          "kill \(kill): \(String(describing: termination)); \(child.stderr)")
        let audit = try await audit(
          path: path, projections: RestaurantBookingSchema.projections, acknowledged: [:])
        #expect(audit.problems.isEmpty, "import kill \(kill), seed \(Mode.seed): \(audit.problems)")
        switch audit.head {
        case 0:
          outcomes["nothing", default: 0] += 1
        case UInt64(Self.importEvents):
          outcomes["all", default: 0] += 1
          // Read-only: the probe appended one more event after the audit.
          var imported: EventStore? = try EventStore(path: path, options: .readOnlyAccess)
          let fingerprint = try logFingerprint(try #require(imported))
          await close(&imported)
          #expect(fingerprint.events == expected.events + 1)
        default:
          Issue.record(
            "import kill \(kill): the log holds \(audit.head) of \(Self.importEvents) events: a partial import"
          )
        }
        if termination == .exited(0) { outcomes["finished before the kill", default: 0] += 1 }
        try? FileManager.default.removeItem(atPath: path)
      }
      report(
        "kill -9 during import",
        "\(Self.importEvents) events, an import takes \(duration) (\(parsing) before the environment exists); "
          + "\(kills) kills: \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test("kill -9 during replay --apply leaves the old projections or the new ones, never a mix")
    func killDuringReplayApply() async throws {
      let kills = Mode.pick(quick: 8, full: 30)
      let directory = TemporaryDirectory()
      var random = SplitMix64(seed: Mode.seed ^ 0x4E_91A7)
      let path = directory.environment()
      let clock = ContinuousClock()
      var store: EventStore? = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: .noSync)
      try await DomainEvents.populate(try #require(store), count: Self.replayEvents, seed: random.next())
      // The phases, timed in this process: the fold (reads only), then fold and swap.
      var started = clock.now
      _ = try #require(store).replay()
      let fold = clock.now - started
      started = clock.now
      try await #require(store).rebuildProjections()
      let swap = clock.now - started - fold
      await close(&store)

      // One run to the end, to time it.
      var state = try await damageProjections(path, random: &random)
      started = clock.now
      let full = try Child(Binaries.eventlog, ["--db", path, "replay", "--apply"], in: directory.url)
      let finished = await full.wait(timeout: .seconds(300))
      let duration = clock.now - started
      try #require(finished == .exited(0), "replay --apply: \(full.stderr)")
      var outcome = try await projectionsAfterKill(path, state)
      #expect(outcome.problems.isEmpty && outcome.isNew, "\(outcome.problems)")

      // Two kills in three aim at the end of the run, where the swap's write transaction is;
      // the others land anywhere.
      // The window shrinks to the shortest run seen.
      var outcomes: [String: Int] = [:]
      var total = duration.milliseconds
      for kill in 1...kills {
        state = try await damageProjections(path, random: &random)
        let spawned = ContinuousClock.now
        let child = try Child(Binaries.eventlog, ["--db", path, "replay", "--apply"], in: directory.url)
        let late = max(0, total - 2 * max(swap.milliseconds, 20))...total
        let anywhere = Int.random(in: 0..<3, using: &random) == 0
        try await Task.sleep(for: .milliseconds(Int.random(in: anywhere ? 0...total : late, using: &random)))
        if !child.process.isRunning { total = min(total, (ContinuousClock.now - spawned).milliseconds) }
        child.kill()
        let termination = await child.wait(timeout: .seconds(60))
        #expect(
          termination == .signaled(SIGKILL) || termination == .exited(0),
          "kill \(kill): \(String(describing: termination)); \(child.stderr)")
        outcome = try await projectionsAfterKill(path, state)
        #expect(
          outcome.problems.isEmpty, "replay --apply kill \(kill), seed \(Mode.seed): \(outcome.problems)")
        outcomes[outcome.isNew ? "new" : "old", default: 0] += 1
        if termination == .exited(0) { outcomes["finished before the kill", default: 0] += 1 }
      }
      // Finally a run to the end: verify is ok again.
      let last = try Child(Binaries.eventlog, ["--db", path, "replay", "--apply"], in: directory.url)
      #expect(await last.wait(timeout: .seconds(300)) == .exited(0), "\(last.stderr)")
      let audit = try await audit(
        path: path, projections: RestaurantBookingSchema.projections, acknowledged: [:])
      #expect(audit.problems.isEmpty, "\(audit.problems)")
      report(
        "kill -9 during replay --apply",
        "\(Self.replayEvents) events, a replay --apply takes \(duration) (in-process: fold \(fold), swap \(swap)); "
          + "\(kills) kills: \(outcomes.sorted { $0.key < $1.key })"
      )
    }
  }
}

/// The projections before a `replay --apply` (damaged on purpose, so that they differ from a
/// replay) and after it (the replay), with the log's fingerprint.
struct ProjectionStates {
  var old: [String: [[UInt8]: [UInt8]]]
  var new: [String: [[UInt8]: [UInt8]]]
  var log: (events: Int, digest: UInt64)
}

/// What was found after a killed `replay --apply`.
struct ReplayOutcome {
  var isNew = false
  var problems: [String] = []
}

/// Damages three tables of the two projections through LMDB directly (a row removed from
/// `bookings/by-id`, a stray row in `bookings/by-date`, a row removed from `restaurants/by-name`),
/// so that old and new projections differ in several places and a half-applied swap would show.
/// - Returns: the damaged (old) tables, the replayed (new) ones and the log's fingerprint.
func damageProjections(_ path: String, random: inout SplitMix64) async throws -> ProjectionStates {
  do {
    var options = Environment.Options()
    options.maxDatabases = 64
    let environment = try Environment(path: path, options: options)
    let byID = try environment.openDatabase("p:bookings:by-id", flags: [])
    let byDate = try environment.openDatabase("p:bookings:by-date", flags: [])
    let byName = try environment.openDatabase("p:restaurants:by-name", flags: [])
    let skip = Int.random(in: 0..<100, using: &random)
    try environment.write { txn in
      for database in [byID, byName] {
        let key = try txn.withCursor(in: database) { cursor -> [UInt8]? in
          var found = try cursor.move(.first)
          for _ in 0..<skip where found { found = try cursor.move(.next) }
          return found ? [UInt8](cursor.key) : nil
        }
        if let key { try txn.delete(forKey: key, in: database) }
      }
      let stray = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
      try txn.put(Array("stray".utf8), forKey: [0xFF] + stray, in: byDate)
    }
  }
  var store: EventStore? = try EventStore(
    path: path, projections: RestaurantBookingSchema.projections, options: .readOnlyAccess)
  let states = try store.map { opened in
    ProjectionStates(
      old: try liveTables(opened), new: try replayedTables(opened, opened.replay()),
      log: try logFingerprint(opened))
  }
  await close(&store)
  let found = try #require(states)
  #expect(found.old != found.new)
  return found
}

/// After a killed `replay --apply`: the log is unchanged and the projections are exactly the old
/// ones or exactly the new ones; with the new ones, `verify()` is ok; with the old ones it finds
/// only the damage. Then the next append succeeds.
func projectionsAfterKill(_ path: String, _ states: ProjectionStates) async throws -> ReplayOutcome {
  var outcome = ReplayOutcome()
  var store: EventStore? = try EventStore(
    path: path, projections: RestaurantBookingSchema.projections, options: .readOnlyAccess)
  let head = try store.map { try check($0, states, &outcome) } ?? 0
  await close(&store)
  var writable: EventStore? = try EventStore(
    path: path, projections: RestaurantBookingSchema.projections, options: .noSync)
  if let reopened = writable {
    let appended = try await reopened.append([try DomainEvents.bookingAppend(seed: head)])
    if appended.lastSequence != head + 1 {
      outcome.problems.append("the next append landed at \(appended.lastSequence)")
    }
  }
  await close(&writable)
  return outcome
}

/// The checks of ``projectionsAfterKill(_:_:)`` on the store opened read-only.
/// - Returns: the head.
private func check(
  _ opened: EventStore, _ states: ProjectionStates, _ outcome: inout ReplayOutcome
) throws -> UInt64 {
  let log = try logFingerprint(opened)
  if log != states.log { outcome.problems.append("the log changed: \(log) ≠ \(states.log)") }
  let live = try liveTables(opened)
  let head = try opened.head()
  for projection in opened.projections {
    let checkpoint = try opened.read { try $0.checkpoint(of: projection.name) }
    if checkpoint != head {
      outcome.problems.append("'\(projection.name)' checkpoint \(checkpoint), head \(head)")
    }
  }
  let verification = try opened.verify()
  if live == states.new {
    outcome.isNew = true
    if !verification.isClean { outcome.problems.append("verify: \(verification.problems.prefix(5))") }
  } else if live == states.old {
    let others = verification.problems.filter { !$0.problem.contains("differ from a replay") }
    if !others.isEmpty || verification.isClean {
      outcome.problems.append("verify: \(verification.problems.prefix(5))")
    }
  } else {
    let mixed = live.keys.sorted().map { table in
      "\(table): \(live[table] == states.old[table] ? "old" : live[table] == states.new[table] ? "new" : "neither")"
    }
    outcome.problems.append("the projections are a mix of old and new: \(mixed)")
  }
  return head
}

/// Waits until `path` exists (the environment was created) or `child` ended.
/// - Returns: when it was seen.
func waitForFile(_ path: String, while child: Child) async -> ContinuousClock.Instant {
  while !FileManager.default.fileExists(atPath: path) && child.process.isRunning {
    try? await Task.sleep(for: .milliseconds(1))
  }
  return ContinuousClock.now
}

extension Duration {
  /// Whole milliseconds.
  var milliseconds: Int {
    Int(components.seconds) * 1_000 + Int(components.attoseconds / 1_000_000_000_000_000)
  }
}
