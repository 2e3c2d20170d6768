import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import TestKit
import Testing

@testable import EventLogBenchmarks

/// `replicate.push` and `replicate.pull`: eventlog's `Replicator` through libpq, the hand-written
/// libpq baseline and eventlog's `Replicator` through the HTTPS transport (to the PostgREST
/// stand-in, over a Supabase project's database on the same server), against a real PostgreSQL
/// with server schema version 3, store the same JSON rows, marks and local state, and report the
/// same outcome.
@Suite("Benchmark replication workloads", .needsPostgres, .serialized)
struct ReplicationBenchmarkTests {
  /// Not a multiple of the push batch (500) or the pull page (1000): the last batch and page are short.
  static let size = 1_234

  /// The fixture's customers (data subjects): one key each, which every system pushes and pulls.
  static let customers = Set(
    Fixtures.bookingCreations(count: size).compactMap { record -> UUID? in
      guard case .bookingCreated(let booking) = record.event else { return nil }
      return Fixtures.customerID(of: booking.customerName ?? "")
    }
  ).count

  init() throws {
    let server = try PostgresTestServer.shared()
    BenchmarkServer.endpoint = BenchmarkServer.Endpoint(directory: server.directory, port: server.port)
  }

  @Test("the three systems push the same rows and the same marks")
  func pushAgrees() async throws {
    let outcomes = try await outcomes(.replicatePush)
    let eventlog = try #require(outcomes.first?.1)
    // Every payload in its JSON form, one mark under the device's key naming the last event,
    // and locally the mark, an acknowledgement per event, the device key and the owner.
    #expect(
      eventlog.hasPrefix(
        "pushed=\(Self.size) serverEvents=\(Self.size) owned=\(Self.size) binary=0 owners=1 marks=1 "
          + "mark=\(Self.size) markLast=\(Self.size)/"))
    #expect(eventlog.contains(" fingerprint="))
    // The server's chain recomputes from the rows; one head attested per batch.
    #expect(eventlog.contains(" chainBreaks=0 attested=3 heads="), "\(eventlog)")
    // A key per customer on the server (pushed through `eventlog_api.push_keys`).
    #expect(Self.customers > 1 && eventlog.contains(" keys=\(Self.customers) keysHash="), "\(eventlog)")
    // The mark, the device key, the owner, per event its acknowledgement and its server position
    // (both ways), and per customer the note that the server answered for its key.
    #expect(
      eventlog.contains(" localMark=\(Self.size) stateEntries=\(3 * Self.size + 3 + Self.customers) state="),
      "\(eventlog)")
    // `owned=` counts each system's rows under its owner key: eventlog-https's is the user's
    // (`user:<auth.uid()>`), which only the API's functions derive, from the access token.
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("the three systems pull the same events, state and read models")
  func pullAgrees() async throws {
    let outcomes = try await outcomes(.replicatePull)
    let eventlog = try #require(outcomes.first?.1)
    #expect(eventlog.hasPrefix("pulled=\(Self.size) events=\(Self.size) cursor=\(Self.size) cursorEvent="))
    #expect(eventlog.contains(" restaurants=0 bookings=\(Self.size) fingerprint="))
    // The cursor, the owner, the server's chain head, per event where it came from and its
    // server position (both ways), the key cursor and per customer the note of its key.
    #expect(eventlog.contains(" log="))
    #expect(eventlog.contains(" keys=\(Self.customers) keysHash="), "\(eventlog)")
    #expect(eventlog.contains(" stateEntries=\(3 * Self.size + 4 + Self.customers) state="), "\(eventlog)")
    #expect(!eventlog.contains("cursorEvent=-"))
    for (system, outcome) in outcomes { #expect(outcome == eventlog, "\(system.rawValue)") }
  }

  @Test("the push's server fingerprint covers each payload's form")
  func fingerprintCoversPayloads() async throws {
    let dir = TemporaryDirectory("benchmark-replication")
    let fixture = dir.path("fixture")
    try await ReplicationFixture.build(.replicatePush, size: 100, at: fixture)
    let run = try ReplicationFixture.PushRun(fixture: fixture, directory: dir.path("run"))
    let transport = try PostgresTransport(url: run.url)
    let summary = try await Replicator(store: run.store, transport: transport).push()
    transport.close()
    let device = try #require(run.store.deviceID)
    let key = try #require(try run.store.stateValue(forKey: Array("replication.device-key".utf8)))
    func outcome() throws -> [String: String] {
      let line = try run.database.pushOutcome(
        on: run.server, device: device, deviceKey: String(decoding: key, as: UTF8.self))
      return Dictionary(
        line.split(separator: " ").compactMap { field -> (String, String)? in
          let parts = field.split(separator: "=", maxSplits: 1)
          return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    }
    let stored = try outcome()
    // One payload kept as {"$binary": …} instead of its JSON, as a pusher without the JSON form
    // would leave it (written by hand, the append-only trigger off).
    try run.database.asSuperuser(on: run.server) { connection in
      try connection.execute(
        """
        ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
        UPDATE eventlog.events SET payload = jsonb_build_object('$binary', 'AAAA', '$schemaVersion', 1)
          WHERE position = 50;
        ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
        """, purpose: "keep one payload in its binary form")
    }
    let changed = try outcome()
    #expect(summary.pushed == 100)
    #expect(stored["binary"] == "0")
    #expect(changed["binary"] == "1")
    #expect(stored["fingerprint"] != changed["fingerprint"])
    #expect(stored["mark"] == changed["mark"])
    _ = try run.finish(stored: summary.pushed)
  }

  @Test(
    "a run's server backends are found and their CPU time is counted",
    arguments: [SystemID.libpqRaw, .eventlogHTTPS])
  func backendCPU(_ system: SystemID) async throws {
    let dir = TemporaryDirectory("benchmark-replication")
    let fixture = dir.path("fixture")
    try await ReplicationFixture.build(.replicatePush, size: Self.size, at: fixture)
    let run = try await Systems.make(system).makeRun(
      .replicatePush, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture,
      directory: dir.path("run"))
    let cpu = try #require(run.externalCPUSeconds)
    let before = cpu()
    try await run.body()
    if system == .eventlogHTTPS {
      // The stand-in's pooled connections: looked up at each call, they carried the whole push.
      #expect(cpu() > before)
    } else {
      #expect(cpu() >= before)
    }
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
    #expect(outcomes.map(\.0) == [.eventlog, .libpqRaw, .eventlogHTTPS])
    return outcomes
  }
}
