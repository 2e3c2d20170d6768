import Foundation
import Testing

/// Errors name the cause and the path (issue 14, item 8).
@Suite("eventlog names the cause and the path of a failure")
struct FailureCauseTests {
  @Test("log --stream with an empty or oversized stream ID is a usage error naming --stream")
  func streamUsage() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    for stream in ["", String(repeating: "s", count: 401)] {
      let run = try cli("log", "--stream", stream)
      #expect(run.status == 64, "\(run)")
      #expect(run.stderr.hasPrefix("Error: invalid value for '--stream': a stream ID must"), "\(run)")
      #expect(!run.stderr.contains("MDB_BAD_VALSIZE"), "\(run)")
    }
  }

  @Test("--from a directory says it is a directory")
  func fromDirectory() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let run = try cli("restaurants", "sync", "--from", cli.directory.path)
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr == "Error: cannot read \(cli.directory.path): it is a directory\n", "\(run)")
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }

  @Test("HTTP://… and other schemes are URLs, not file names")
  func uppercaseScheme() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let keyless = try cli("restaurants", "sync", "--from", "HTTP://127.0.0.1:9")
    #expect(keyless.status == 64, "\(keyless)")
    #expect(keyless.stderr.contains("needs an API key"), "\(keyless)")
    let closed = try cli("restaurants", "sync", "--from", "HTTPS://127.0.0.1:9", "--api-key", "k")
    #expect(closed.status == 1, "\(closed)")
    #expect(closed.stderr.contains("fetching the page at offset 0 failed"), "\(closed)")
    let other = try cli("restaurants", "sync", "--from", "ftp://example.com/restaurants.json")
    #expect(other.status == 1, "\(other)")
    #expect(other.stderr.contains("only https://"), "\(other)")
    for run in [closed, other] { #expect(!run.stderr.contains("cannot read"), "\(run)") }
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }
}
