import Foundation
import Testing

/// `--db DIR` refuses an environment that is not what it claims to be (issue 14, item 1).
@Suite("eventlog refuses hostile environment paths")
struct EnvironmentFileCLITests {
  @Test(
    "a symlinked lock.mdb or data.mdb: every command exits 1 naming the file, and the target is unchanged",
    arguments: ["lock.mdb", "data.mdb"])
  func symlinkedFiles(name: String) throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let victim = try cli.file("victim", "precious contents\n")
    let file = cli.database + "/" + name
    try FileManager.default.removeItem(atPath: file)
    try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: victim)
    for command in [
      ["stats"], ["verify"], ["restaurants", "sync", "--from", try cli.file("b.json", snapshotB)],
    ] {
      let run = try cli.run(command)
      #expect(run.status == 1, "\(command): \(run)")
      #expect(run.stderr.hasPrefix("Error: "), "\(run)")
      #expect(run.stderr.contains("'\(file)'"), "\(run)")
      #expect(run.stderr.contains("symbolic link"), "\(run)")
    }
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious contents\n")
  }

  @Test("a world-writable environment directory is refused with its path and the reason")
  func worldWritable() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: cli.database)
    for command in [["stats"], ["bookings", "list"]] {
      let run = try cli.run(command)
      #expect(run.status == 1, "\(run)")
      #expect(run.stderr.contains("'\(cli.database)'"), "\(run)")
      #expect(run.stderr.contains("group and others can write to the directory (mode 0777)"), "\(run)")
    }
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cli.database)
    #expect(try cli("stats").status == 0)
  }
}
