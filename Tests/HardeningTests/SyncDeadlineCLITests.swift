import Foundation
import HTTPTestSupport
import TestKit
import Testing

/// `restaurants sync --deadline` against a server that never stops paging (issue 14, item 7).
@Suite("eventlog restaurants sync: the overall deadline")
struct SyncDeadlineCLITests {
  @Test("an endless server: exit 1 at --deadline, naming it; nothing appended, no environment created")
  func endlessServer() throws {
    let server = try LoopbackHTTPServer(maximumConnections: 10_000) { request in
      let limit = Int(request.query["limit"] ?? "") ?? 10
      let offset = Int(request.query["offset"] ?? "") ?? 0
      let rows = (offset..<offset + limit).map { index in
        #"{"id":"\#(UUID().uuidString.lowercased())","name":"Row \#(index)","cuisine":"Any"}"#
      }
      return .json("[" + rows.joined(separator: ",") + "]")
    }
    defer { server.stop() }
    let directory = TemporaryDirectory()
    let path = directory.environment()
    let start = ContinuousClock.now
    let run = try EventLogBinary.run([
      "--db", path, "restaurants", "sync", "--from", server.baseURL.absoluteString, "--api-key", "key",
      "--deadline", "1",
    ])
    let elapsed = ContinuousClock.now - start
    #expect(run.status == 1, "\(run)")
    #expect(
      run.stderr.hasPrefix("Error: the catalog did not arrive within the deadline of 1.0 s ("), "\(run)")
    #expect(elapsed < .seconds(20), "\(elapsed)")
    #expect(server.connections > 1)
    #expect(!FileManager.default.fileExists(atPath: path))
    let usage = try EventLogBinary.run([
      "--db", path, "restaurants", "sync", "--from", "x", "--deadline", "0",
    ])
    #expect(usage.status == 64)
    #expect(usage.stderr.contains("'--deadline'"), "\(usage)")
  }
}
