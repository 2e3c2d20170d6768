import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// `export --output` writes a regular file whole or not at all, never the environment's own
/// files or what is not a regular file (issue 14, item 2).
@Suite("export --output refuses what it must not replace")
struct ExportOutputTests {
  @Test(
    "--output at the environment's data.mdb or lock.mdb, however the path is spelled, is refused; the environment still verifies"
  )
  func environmentFiles() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let data = cli.database + "/data.mdb"
    let before = try Data(contentsOf: URL(fileURLWithPath: data))
    for target in [data, cli.database + "/lock.mdb", cli.database + "/../test.db/data.mdb"] {
      let run = try cli("export", "--output", target)
      #expect(run.status == 1, "\(target): \(run)")
      #expect(run.stderr.contains("refusing '\(target)': it is the environment's own"), "\(run)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: data)) == before)
    #expect(try cli("verify").status == 0)
    let remaining = try FileManager.default.contentsOfDirectory(atPath: cli.database).sorted()
    #expect(remaining == ["data.mdb", "lock.mdb"])
  }

  @Test(
    "--output at a symbolic link (as /dev/stdout is), a FIFO, a directory or a device is refused and left as it was"
  )
  func notRegularFiles() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let victim = try cli.file("victim", "precious\n")
    let link = cli.directory.appendingPathComponent("link").path
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
    let fifo = cli.directory.appendingPathComponent("fifo").path
    try #require(mkfifo(fifo, 0o600) == 0)
    let folder = cli.directory.appendingPathComponent("folder").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    // A link as /dev/stdout is, and a device as /dev/null is, both private to the test: a build
    // that renamed over them must not break the machine's own.
    let stdoutLink = cli.directory.appendingPathComponent("stdout").path
    try FileManager.default.createSymbolicLink(atPath: stdoutLink, withDestinationPath: "/proc/self/fd/1")
    let device = cli.directory.appendingPathComponent("null").path
    try #require(try runChild("/bin/mknod", [device, "c", "1", "3"]).status == 0, "mknod needs root")
    for (target, kind) in [
      (link, "a symbolic link"), (stdoutLink, "a symbolic link"), (fifo, "not a regular file"),
      (folder, "a directory"), (device, "a device"),
    ] {
      let run = try cli("export", "--output", target)
      #expect(run.status == 1, "\(target): \(run)")
      #expect(run.stderr.contains("refusing '\(target)': it is \(kind)"), "\(run)")
    }
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == victim)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path)
    #expect(!leftovers.contains { $0.contains(".partial-") }, "\(leftovers)")
  }

  @Test("--output - writes standard output; --output FILE replaces a regular file with the export")
  func standardOutputAndRegularFiles() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let expected = try cli("export").stdout
    let dash = try cli("export", "--output", "-")
    #expect(dash.status == 0, "\(dash)")
    #expect(exportedEvents(dash.stdout) == exportedEvents(expected))
    let existing = try cli.file("old.jsonl", "old contents\n")
    #expect(try cli("export", "--output", existing).status == 0)
    #expect(exportedEvents(try String(contentsOfFile: existing, encoding: .utf8)) == exportedEvents(expected))
  }

  @Test(
    "an export --output interrupted by SIGINT or SIGTERM leaves no partial file and exits 128 + the signal")
  func interrupted() async throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try await fill(cli.database, events: 12_000)
    for signal in [SIGINT, SIGTERM] {
      let target = cli.directory.appendingPathComponent("export-\(signal).jsonl").path
      let process = Process()
      process.executableURL = URL(fileURLWithPath: EventLogBinary.path)
      process.arguments = ["--db", cli.database, "export", "--output", target]
      process.environment = ["SWIFT_BACKTRACE": "enable=no"]
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Interrupt it once its temporary file exists, before it is renamed.
      var sawPartial = false
      // Polled with a blocking sleep: a task sleeping on the cooperative pool could be starved by
      // tests that block its threads, and miss the window.
      for _ in 0..<10_000 where process.isRunning {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cli.directory.path)) ?? []
        if names.contains(where: { $0.hasPrefix(".export-\(signal).jsonl.partial-") }) {
          sawPartial = true
          kill(process.processIdentifier, signal)
          break
        }
        usleep(1_000)
      }
      process.waitUntilExit()
      #expect(sawPartial, "the export finished before it could be interrupted; give it more events")
      #expect(process.terminationReason == .exit)
      #expect(process.terminationStatus == 128 + signal)
      let names = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path)
      #expect(!names.contains { $0.contains(".partial-") || $0.hasPrefix("export-") }, "\(names)")
    }
  }

  /// Appends `events` small events of a type the CLI does not know (exported as `$binary`).
  private func fill(_ path: String, events: Int) async throws {
    var options = EventStore.Options()
    options.durability = .noSync
    let store = try EventStore(path: path, projections: RestaurantBookingSchema.projections, options: options)
    let batch = (0..<events).map { index in
      EventStore.StreamAppend(
        stream: StreamID("filler-\(index % 100)"),
        events: [
          NewEvent(
            id: UUID(), type: "Filler", schemaVersion: 1,
            payload: Array(repeating: UInt8(index % 251), count: 200),
            metadata: EventMetadata(origin: "test"))
        ])
    }
    let result = try await store.append(batch)
    try #require(result.lastSequence == UInt64(events))
  }
}
