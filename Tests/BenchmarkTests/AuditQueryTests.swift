import EventLog
import Foundation
import TestKit
import Testing

@testable import EventLogBenchmarks

/// `audit.query`: eventlog's audit API and SQLite's indexed queries give the same answers over
/// the same log of own and pulled events, SQLite answers through its indexes, and the outcome
/// check sees an answer that differs in one event's origin.
@Suite("Benchmark audit queries")
struct AuditQueryTests {
  static let size = 6_000

  @Test("eventlog and sqlite answer the auditor's questions alike, over own and pulled events")
  func systemsAgree() async throws {
    let dir = TemporaryDirectory("benchmark-audit")
    var outcomes: [(SystemID, String)] = []
    for system in Workload.auditQuery.systems {
      let fixture = dir.path("\(system.rawValue)-fixture")
      let implementation = Systems.make(system)
      try await implementation.prepareFixture(.auditQuery, size: Self.size, at: fixture)
      let run = try await implementation.makeRun(
        .auditQuery, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture,
        directory: dir.path("\(system.rawValue)-run"))
      #expect(run.operations == AuditFixture.returnedEvents(size: Self.size))
      try await run.body()
      outcomes.append((system, try run.finish()))
    }
    let eventlog = try #require(outcomes.first?.1)
    let device = AuditFixture.deviceEvents(size: Self.size)
    #expect(device > 0)
    #expect(eventlog.hasPrefix("queries=12 window=600 device=\(device) types=BookingCreated:"))
    #expect(eventlog.contains(" fingerprint="))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }

    // The fixture holds this device's events and each other device's, with their provenance.
    let store = try EventLogSystem.open(dir.path("eventlog-fixture"), durable: false)
    let origins = try store.originDevices()
    #expect(origins.count == AuditFixture.devices.count + 1)
    #expect(origins.reduce(0) { $0 + $1.events } == Self.size)
    for other in AuditFixture.devices {
      #expect(origins.contains { $0.device == other && $0.events > 0 })
    }
    #expect(origins.first { $0.device == AuditFixture.devices[AuditFixture.queriedDevice] }?.events == device)
  }

  @Test("the fixture's commits hold whole blocks of one side each, within the limit")
  func commits() {
    var log = AuditFixture.Log(size: 12_345, limit: 2_000)
    var total = 0
    var sides: Set<Bool> = []
    while let commit = log.next() {
      #expect(!commit.events.isEmpty && commit.events.count <= 2_000)
      #expect(commit.events.allSatisfy { ($0.device != nil) == commit.pulled })
      #expect(commit.events.first?.recordedAt == AuditFixture.date(total))
      total += commit.events.count
      sides.insert(commit.pulled)
    }
    #expect(total == 12_345)
    #expect(sides == [false, true])
  }

  @Test("sqlite answers each question through its index")
  func sqlitePlans() async throws {
    let dir = TemporaryDirectory("benchmark-audit")
    try await SQLiteSystem().prepareFixture(.auditQuery, size: 2_000, at: dir.path("sqlite"))
    let log = try SQLiteLog(directory: dir.path("sqlite"), durable: false)
    let expected = [
      (SQLiteAudit.windowQuery, "USING INDEX events_by_recorded_at"),
      (SQLiteAudit.deviceQuery, "USING INDEX events_by_origin"),
      (SQLiteAudit.countsQuery, "USING COVERING INDEX events_by_type"),
    ]
    for (query, index) in expected {
      let plan = try log.database.prepare("EXPLAIN QUERY PLAN " + query)
      var details: [String] = []
      while try plan.step() { details.append(plan.text(3) ?? "") }
      #expect(details.contains { $0.contains(index) }, "\(query): \(details)")
    }
  }

  @Test("an answer that differs from the others only in one event's origin fails the run")
  func wrongOriginFails() throws {
    let size = 100
    let events = (0..<AuditFixture.windowEvents(size: size)).map { index in
      AuditAnswers.Event(
        sequence: UInt64(index + 1), id: UUID(), version: 1, type: "BookingCreated",
        recordedAtMicroseconds: AuditFixture.date(index).microsecondsSince1970, device: nil,
        originSequence: UInt64(index + 1))
    }
    var wrong = events
    wrong[3].device = AuditFixture.devices[1]
    let device = (0..<AuditFixture.deviceEvents(size: size)).map { _ in events[0] }
    let counts = ["BookingCreated": UInt64(size)]
    func outcome(_ window: [AuditAnswers.Event]) throws -> String {
      var answers = AuditAnswers()
      answers.addWindow(window)
      answers.addDevice(device)
      return try answers.outcome(size: size, counts: counts)
    }
    let right = try outcome(events)
    let failures = OutcomeCheck.disagreements([
      measurement(.eventlog, size: size, check: right),
      measurement(.sqlite, size: size, check: try outcome(wrong)),
    ])
    #expect(failures.map(\.error).first?.hasPrefix("the systems disagree on fingerprint: ") == true)
    #expect(failures.count == 1)

    // Too few events in a window, or counts that do not add up to the log, are no answer.
    #expect(throws: AuditAnswers.WrongAnswer.self) { try outcome(Array(events.dropLast())) }
    var short = AuditAnswers()
    short.addWindow(events)
    short.addDevice(device)
    #expect(throws: AuditAnswers.WrongAnswer.self) {
      try short.outcome(size: size, counts: ["BookingCreated": UInt64(size - 1)])
    }
  }

  private func measurement(_ system: SystemID, size: Int, check: String) -> EventLogBenchmarks.Measurement {
    Measurement(
      workload: .auditQuery, system: system, size: size, warmups: 1,
      report: ChildReport(
        operations: size, seconds: [0.1], peakRSSBytes: 1, cpuSeconds: [0.1], peakAnonBytes: 1, check: check,
        storeBytes: 1))
  }
}
