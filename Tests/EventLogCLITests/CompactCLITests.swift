import Foundation
import TestKit
import Testing

@Suite("eventlog compact")
struct CompactCLITests {
  @Test("compact --help describes the command and its --json; compact is in the top-level help")
  func help() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let help = try cli("compact", "--help")
    #expect(help.status == 0, "\(help)")
    #expect(help.stdout.contains("USAGE: eventlog compact"))
    #expect(help.stdout.contains("--json"))
    #expect(help.stdout.contains("another process"))
    #expect(try cli("--help").stdout.contains("compact"))
    let usage = try cli("compact", "--everything")
    #expect(usage.status == 64, "\(usage)")
  }

  @Test(
    "compact prints the sizes before and after; --json is {path, bytesBefore, bytesAfter}; the log is unchanged"
  )
  func sizesAndJSON() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    #expect(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    #expect(try cli("restaurants", "sync", "--from", try cli.file("b.json", snapshotB)).status == 0)
    let head = try cli.head()
    let chainBefore = try cli("verify", "--json")
    let text = try cli("compact")
    #expect(text.status == 0, "\(text)")
    let sizeAfterText = dataFileSize(cli.database)
    #expect(text.stdout.contains("bytes before"))
    #expect(text.stdout.contains("\(sizeAfterText) bytes after"), "\(text.stdout)")

    let run = try cli("compact", "--json")
    #expect(run.status == 0, "\(run)")
    let object = try #require(try json(run) as? [String: Any])
    #expect(Set(object.keys) == ["path", "bytesBefore", "bytesAfter"])
    #expect(object["path"] as? String == cli.database)
    // The writable open writes zeros ahead of the used pages again (EventStore.Options.preallocation).
    #expect((object["bytesBefore"] as? Int ?? 0) >= sizeAfterText)
    #expect(object["bytesAfter"] as? Int == dataFileSize(cli.database))
    #expect(try cli.head() == head)
    let chainAfter = try cli("verify", "--json")
    #expect(chainAfter.status == 0)
    let chain = { (run: Run) in ((try? json(run)) as? [String: Any])?["chain"] as? [String: Any] }
    #expect(chain(chainAfter)?["head"] as? String == chain(chainBefore)?["head"] as? String)
    #expect(chain(chainAfter)?["head"] != nil)
  }

  @Test("compact of a path with no event log fails naming it, and creates nothing")
  func missingEnvironment() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let run = try cli("compact")
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr.hasPrefix("Error: "))
    #expect(run.stderr.contains(cli.database))
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }
}
