import CLMDB
import Foundation
import TestKit
import Testing

@testable import EventLogBenchmarks

/// Every system's replay rebuilds the same read models, and the parent's check fails a run whose
/// systems disagree (``OutcomeCheck``).
@Suite("Benchmark fingerprints")
struct FingerprintTests {
  static let size = 12_000

  @Test("eventlog, lmdb-raw, lmdb-append and sqlite replay the same log into the same read models")
  func systemsAgree() async throws {
    let dir = TemporaryDirectory("benchmark-tests")
    var outcomes: [(SystemID, String)] = []
    for system in Workload.replay.systems {
      outcomes.append((system, try await replayOutcome(system, in: dir)))
    }
    let eventlog = try #require(outcomes.first?.1)
    #expect(eventlog.hasPrefix("restaurants="))
    #expect(eventlog.contains(" fingerprint="))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
    #expect(OutcomeCheck.disagreements(outcomes.map { measurement(.replay, $0.0, check: $0.1) }).isEmpty)
  }

  @Test("a deliberately wrong fold (renames dropped: the same counts) fails the run")
  func wrongFoldFails() async throws {
    let dir = TemporaryDirectory("benchmark-tests")
    let eventlog = try await replayOutcome(.eventlog, in: dir)
    let path = dir.path("lmdb-raw-fixture")
    try await LMDBRawSystem().prepareFixture(.replay, size: Self.size, at: path)
    let environment = try RawEnvironment(path: path, durable: false)
    let events = try environment.openDatabase("events", flags: MDB_INTEGERKEY)
    let keys = try environment.openDatabase(RawLMDB.subjectKeys)
    var models = RawReadModels()
    var renames = 0
    try environment.read { txn in
      models.keyring = try RawLMDB.keyring(txn, keys)
      try RawLMDB.scan(txn, events) { _, record in
        let (type, payload) = try RawRecords.verifiedEvent(record)
        // The mistake: restaurant updates (type 4) are not folded.
        if type == 4 {
          renames += 1
          return
        }
        try models.apply(type: type, payload: payload)
      }
    }
    try models.buildOrders()
    #expect(renames > 0)
    let wrong = try models.check()
    let counts = { (line: String) in line.split(separator: " ").prefix(2) }
    #expect(counts(wrong) == counts(eventlog), "the counts alone would not tell")
    #expect(wrong != eventlog)

    let failures = OutcomeCheck.disagreements([
      measurement(.replay, .eventlog, check: eventlog), measurement(.replay, .lmdbRaw, check: wrong),
      measurement(.replay, .sqlite, check: eventlog),
    ])
    let failure = try #require(failures.first)
    #expect(failures.count == 1)
    #expect(failure.workload == "replay")
    #expect(failure.size == Self.size)
    #expect(failure.error.hasPrefix("the systems disagree on fingerprint: "))
    #expect(failure.error.contains("lmdb-raw"))
  }

  @Test("outcome fields that only some systems report are compared among those")
  func missingFields() {
    let rows = [
      measurement(.appendBatched, .eventlog, check: "events=10 bookings=10"),
      measurement(.appendBatched, .lmdbAppend, check: "events=10"),
      measurement(.appendBatched, .sqlite, check: "events=10 bookings=10"),
    ]
    #expect(OutcomeCheck.disagreements(rows).isEmpty)
    let short = rows + [measurement(.appendBatched, .lmdbRaw, check: "events=10 bookings=9")]
    #expect(
      OutcomeCheck.disagreements(short).map(\.error) == [
        "the systems disagree on bookings: eventlog 10, sqlite 10, lmdb-raw 9"
      ])
  }

  /// Builds the replay fixture of `system` in `dir` and runs one measured replay on it.
  private func replayOutcome(_ system: SystemID, in dir: TemporaryDirectory) async throws -> String {
    let fixture = dir.path("\(system.rawValue)-fixture")
    let implementation = Systems.make(system)
    try await implementation.prepareFixture(.replay, size: Self.size, at: fixture)
    let run = try await implementation.makeRun(
      .replay, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture,
      directory: dir.path("\(system.rawValue)-run"))
    try await run.body()
    return try run.finish()
  }

  private func measurement(
    _ workload: Workload, _ system: SystemID, check: String
  ) -> EventLogBenchmarks.Measurement {
    Measurement(
      workload: workload, system: system, size: Self.size, warmups: 1,
      report: ChildReport(
        operations: Self.size, seconds: [0.1], peakRSSBytes: 1, cpuSeconds: [0.1], peakAnonBytes: 1,
        check: check, storeBytes: 1))
  }
}
