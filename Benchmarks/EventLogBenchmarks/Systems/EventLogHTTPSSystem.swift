import EventLog
import Foundation
import Replication
import ReplicationSupabase

/// `eventlog-https`: eventlog's `Replicator`, as `eventlog`'s, through the HTTPS transport
/// (``SupabaseTransport``: libcurl, `POST /rest/v1/rpc/<function>` with the anon key and the
/// user's access token) to the PostgREST stand-in of the test support, in front of a Supabase
/// project's database on the benchmark's PostgreSQL server (``APIDatabase``): the same events,
/// the same server, the same SQL functions as `eventlog` through libpq.
///
/// What differs from `eventlog` is the path to the functions: each batch or page is a JSON body
/// over HTTP to the stand-in, which verifies the token (HS256), takes a pooled connection (logged
/// in as `authenticator`), runs one transaction that sets the role `authenticated` and the JWT
/// claims, calls the function by its parameter names, and answers its rows as JSON; the owner is
/// `user:<auth.uid()>`. **The stand-in runs in the benchmark's process** (its threads), so its
/// CPU time and memory are in this system's figures beside the client's, and the server's
/// backends (the stand-in's pool) are counted as for the other systems. It stands for PostgREST
/// and a gateway, which are compiled Haskell and Lua behind TLS: the figures are of this stack
/// on loopback HTTP, not of a hosted project.
struct EventLogHTTPSSystem: BenchmarkSystem {
  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    guard workload.needsServer else { throw UnsupportedWorkload(workload: workload, system: .eventlogHTTPS) }
    try await ReplicationFixture.build(workload, size: size, at: path)
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    guard let fixture, workload.needsServer else {
      throw UnsupportedWorkload(workload: workload, system: .eventlogHTTPS)
    }
    let server = try BenchmarkServer.attached()
    let box = ReplicationBox()
    if workload == .replicatePush {
      // A fresh project database (remote init in API mode) with its stand-in, and a fresh copy
      // of the local log.
      let project = try APIDatabase.create(on: server)
      let run: ReplicationFixture.PushRun
      do {
        run = try ReplicationFixture.PushRun(
          fixture: fixture, directory: directory, server: server, database: project.record.replicationDatabase
        )
      } catch {
        project.stop()
        throw error
      }
      let (replicator, transport) = try await Self.checkedReplicator(store: run.store, project: project)
      return PreparedRun(
        operations: size,
        body: { box.push = try await replicator.push() },
        finish: {
          transport.close()
          project.stop()
          guard let summary = box.push else { return "no push" }
          return try run.finish(stored: summary.pushed)
        },
        externalCPUSeconds: project.backendCPU(on: server))
    }
    let record = try PayloadJSONDecoder().decode(
      APIDatabase.self,
      from: Data(contentsOf: URL(fileURLWithPath: fixture + "/" + ReplicationFixture.apiServerFile)))
    let store = try ReplicationFixture.open(directory, durable: true)
    let project = try record.serve(on: server)
    let (replicator, transport) = try await Self.checkedReplicator(store: store, project: project)
    return PreparedRun(
      operations: size,
      body: { box.pull = try await replicator.pull() },
      finish: {
        transport.close()
        project.stop()
        guard let summary = box.pull else { return "no pull" }
        return "pulled=\(summary.pulled) " + (try ReplicationFixture.pullOutcome(store))
      },
      externalCPUSeconds: project.backendCPU(on: server))
  }

  /// A replicator through `project`'s API whose server was checked (`eventlog_api.server_info`
  /// through the stand-in, as `eventlog push` does first), so that the first request's set-up is
  /// not measured; the stand-in is stopped if the check fails.
  static func checkedReplicator(
    store: EventStore, project: APIProject
  ) async throws -> (Replicator, SupabaseTransport) {
    do {
      let transport = try project.transport()
      let replicator = Replicator(
        store: store, transport: transport, options: BenchmarkServer.replicationOptions)
      try await replicator.checkServer()
      return (replicator, transport)
    } catch {
      project.stop()
      throw error
    }
  }
}
