import EventLog
import Foundation
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

@testable import EventLogBenchmarks

/// `replicate.push` and `replicate.pull`: eventlog's `Replicator` and the hand-written libpq
/// baseline, against a real PostgreSQL with server schema version 3, store the same JSON rows,
/// marks and local state, and report the same outcome.
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
    // Every payload in its JSON form, one mark under the device's key naming the last event,
    // and locally the mark, an acknowledgement per event and the device key.
    #expect(
      eventlog.hasPrefix(
        "pushed=\(Self.size) serverEvents=\(Self.size) owned=\(Self.size) binary=0 owners=1 marks=1 "
          + "mark=\(Self.size) markLast=\(Self.size)/"))
    #expect(eventlog.contains(" fingerprint="))
    #expect(eventlog.contains(" localMark=\(Self.size) stateEntries=\(Self.size + 2) state="))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("both systems pull the same events, state and read models")
  func pullAgrees() async throws {
    let outcomes = try await outcomes(.replicatePull)
    let eventlog = try #require(outcomes.first?.1)
    #expect(eventlog.hasPrefix("pulled=\(Self.size) events=\(Self.size) cursor=\(Self.size) cursorEvent="))
    #expect(eventlog.contains(" restaurants=0 bookings=\(Self.size) fingerprint="))
    // The cursor, and where each event came from.
    #expect(eventlog.contains(" log="))
    #expect(eventlog.contains(" stateEntries=\(Self.size + 1) state="))
    #expect(!eventlog.contains("cursorEvent=-"))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("the push outcome tells payloads kept as $binary from their JSON form")
  func binaryPayloadsDiffer() async throws {
    let dir = TemporaryDirectory("benchmark-replication")
    let fixture = dir.path("fixture")
    try await ReplicationFixture.build(.replicatePush, size: 100, at: fixture)
    var outcomes: [String] = []
    // The domain's schema, then one that knows no event type (the same streams replicate).
    let opaque = AppSchema(
      name: "opaque", eventTypes: [],
      replicatedStreams: StreamSelection(prefixes: RestaurantBookingSchema.replicatedStreamPrefixes))
    for (index, schema) in [AppSchema.restaurantBooking, opaque].enumerated() {
      let run = try ReplicationFixture.PushRun(
        fixture: fixture, directory: dir.path("run\(index)"), schema: schema)
      let transport = try PostgresTransport(url: run.url)
      let summary = try await Replicator(store: run.store, transport: transport).push()
      transport.close()
      outcomes.append(try run.finish(stored: summary.pushed))
    }
    let fields = outcomes.map { outcome in
      Dictionary(
        outcome.split(separator: " ").compactMap { field -> (String, String)? in
          let parts = field.split(separator: "=", maxSplits: 1)
          return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    }
    #expect(fields[0]["binary"] == "0")
    #expect(fields[1]["binary"] == "100")
    #expect(fields[0]["fingerprint"] != fields[1]["fingerprint"])
    #expect(fields[0]["mark"] == fields[1]["mark"])
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
