import Foundation
import PostgresTestSupport
import TestKit
import Testing

@testable import EventLogBenchmarks

/// `replicate.push` and `replicate.pull`: eventlog's `Replicator` and the hand-written libpq
/// baseline, against a real PostgreSQL, store the same rows and report the same outcome.
@Suite("Benchmark replication workloads", .needsPostgres, .serialized)
struct ReplicationBenchmarkTests {
  /// Not a multiple of the push batch (500) or the pull page (1000): the last batch and page are short.
  static let size = 1_234

  init() throws {
    let server = try PostgresTestServer.shared()
    BenchmarkServer.endpoint = BenchmarkServer.Endpoint(directory: server.directory, port: server.port)
  }

  @Test("both systems push the same rows and the same marks")
  func pushAgrees() async throws {
    let outcomes = try await outcomes(.replicatePush)
    let eventlog = try #require(outcomes.first?.1)
    #expect(
      eventlog.hasPrefix("pushed=\(Self.size) serverEvents=\(Self.size) mark=\(Self.size) fingerprint="))
    #expect(eventlog.hasSuffix(" localMark=\(Self.size)"))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("both systems pull the same events, state and read models")
  func pullAgrees() async throws {
    let outcomes = try await outcomes(.replicatePull)
    let eventlog = try #require(outcomes.first?.1)
    #expect(
      eventlog.hasPrefix(
        "pulled=\(Self.size) events=\(Self.size) cursor=\(Self.size) restaurants=0 bookings=\(Self.size) fingerprint="
      ))
    #expect(eventlog.contains(" log="))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("a run's server backends are found and their CPU time is counted")
  func backendCPU() async throws {
    let dir = TemporaryDirectory("benchmark-replication")
    let fixture = dir.path("fixture")
    try await ReplicationFixture.build(.replicatePush, size: Self.size, at: fixture)
    let run = try await LibPQRawSystem().makeRun(
      .replicatePush, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture,
      directory: dir.path("run"))
    let cpu = try #require(run.externalCPUSeconds)
    let before = cpu()
    try await run.body()
    #expect(cpu() >= before)
    _ = try run.finish()
  }

  /// The shared fixture of `workload`, then one run of each of its systems on it.
  private func outcomes(_ workload: Workload) async throws -> [(SystemID, String)] {
    let dir = TemporaryDirectory("benchmark-replication")
    let fixture = dir.path("fixture")
    try await Systems.make(workload.systems[0]).prepareFixture(workload, size: Self.size, at: fixture)
    var outcomes: [(SystemID, String)] = []
    for system in workload.systems {
      let run = try await Systems.make(system).makeRun(
        workload, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture,
        directory: dir.path("\(system.rawValue)-run"))
      try await run.body()
      outcomes.append((system, try run.finish()))
    }
    #expect(outcomes.map(\.0) == [.eventlog, .libpqRaw])
    return outcomes
  }
}
