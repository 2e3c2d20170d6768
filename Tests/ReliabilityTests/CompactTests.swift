import EventLog
import Foundation
import LMDB
import TestKit
import Testing

extension Reliability {
  /// `eventlog compact` and the lock check under it, against another process that has the
  /// environment open (`eventlog-stress hold-open`).
  @Suite struct Compact {
    static let catalog =
      #"[{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"},"#
      + #"{"id":"22222222-2222-4222-8222-222222222222","name":"Sushi Bar","cuisine":"japanese"}]"#

    @Test("another process's shared lock on lock.mdb is seen (with its ID) while it has the environment open")
    func otherProcessIsSeen() async throws {
      let directory = TemporaryDirectory("compact-lock")
      let path = directory.environment()
      let catalog = try directory.file("catalog.json", Data(Self.catalog.utf8))
      let sync = try runChild(Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", catalog])
      try #require(sync.status == 0, "\(sync)")
      let environment = try Environment(path: path)
      #expect(try environment.otherProcessID() == nil)

      let keeper = try Child(Binaries.stress, ["hold-open", "--db", path], in: directory.url)
      try #require(await keeper.waitForLine(prefix: "open", timeout: .seconds(30)) != nil, "\(keeper.stderr)")
      #expect(try environment.otherProcessID() == keeper.process.processIdentifier)
      #expect(throws: LMDBError.self) { _ = try environment.compact(using: path + "/compacting") }
      #expect(!environment.isClosed, "a refused compaction leaves the environment open")
      #expect(!FileManager.default.fileExists(atPath: path + "/compacting"))
      keeper.kill()
      _ = await keeper.wait(timeout: .seconds(10))
      #expect(try environment.otherProcessID() == nil)
      environment.close()
    }

    @Test(
      "eventlog compact is refused while another process has the environment open, and the data file is untouched"
    )
    func compactRefusedWhileOpenElsewhere() async throws {
      let directory = TemporaryDirectory("compact-cli")
      let path = directory.environment()
      let catalog = try directory.file("catalog.json", Data(Self.catalog.utf8))
      let sync = try runChild(Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", catalog])
      try #require(sync.status == 0, "\(sync)")
      let before = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))

      let keeper = try Child(Binaries.stress, ["hold-open", "--db", path], in: directory.url)
      try #require(await keeper.waitForLine(prefix: "open", timeout: .seconds(30)) != nil, "\(keeper.stderr)")
      let refused = try runChild(Binaries.eventlog, ["--db", path, "compact"])
      #expect(refused.status == 1, "\(refused)")
      #expect(refused.stderr.hasPrefix("Error: "))
      #expect(refused.stderr.contains(path))
      #expect(refused.stderr.contains("process \(keeper.process.processIdentifier)"), "\(refused.stderr)")
      #expect(refused.stdout.isEmpty)
      #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == before)
      #expect(!FileManager.default.fileExists(atPath: path + "/compacting"))
      keeper.kill()
      _ = await keeper.wait(timeout: .seconds(10))

      // Alone, it compacts; the log verifies and takes more events.
      let compacted = try runChild(Binaries.eventlog, ["--db", path, "compact", "--json"])
      #expect(compacted.status == 0, "\(compacted)")
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(compacted.stdout.utf8)) as? [String: Any])
      #expect(object["path"] as? String == path)
      #expect(object["bytesAfter"] as? Int == dataFileSize(path))
      let verify = try runChild(Binaries.eventlog, ["--db", path, "verify"])
      #expect(verify.status == 0, "\(verify)")
      let again = try runChild(Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", catalog])
      #expect(again.status == 0, "\(again)")
    }
  }
}
