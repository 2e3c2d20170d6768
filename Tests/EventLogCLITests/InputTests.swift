import Foundation
import TestKit
import Testing

/// `import` and `restaurants sync --from` read anything readable and fail cleanly on what is not
/// (issue 14, item 3).
@Suite("eventlog reads input from pipes, FIFOs and /dev/stdin, and fails cleanly")
struct InputTests {
  /// A log of a few events and its export, in `cli`'s environment.
  func exported(_ cli: EventLogBinary) throws -> String {
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let export = try cli("export")
    try #require(export.status == 0)
    return export.stdout
  }

  @Test(
    "import reads a pipe given as - and as /dev/stdin, and a FIFO, re-exporting the same bytes; sync reads a FIFO"
  )
  func pipesAndFIFOs() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let text = try exported(cli)
    let file = try cli.file("export.jsonl", text)
    for (index, source) in ["-", "/dev/stdin"].enumerated() {
      let db = cli.directory.appendingPathComponent("pipe\(index).db").path
      let run = try shell(
        "cat \(quoted(file)) | \(quoted(EventLogBinary.path)) --db \(quoted(db)) import \(source)")
      #expect(run.status == 0, "\(source): \(run)")
      #expect(
        exportedEvents(try cli.run(["--db", db, "export"], useDatabase: false).stdout) == exportedEvents(text)
      )
    }
    let fifo = cli.directory.appendingPathComponent("fifo").path
    try #require(mkfifo(fifo, 0o600) == 0)
    let db = cli.directory.appendingPathComponent("fifo.db").path
    let run = try shell(
      "cat \(quoted(file)) > \(quoted(fifo)) & \(quoted(EventLogBinary.path)) --db \(quoted(db)) import \(quoted(fifo)); status=$?; wait; exit $status"
    )
    #expect(run.status == 0, "\(run)")
    #expect(
      exportedEvents(try cli.run(["--db", db, "export"], useDatabase: false).stdout) == exportedEvents(text))
    // restaurants sync --from reads a FIFO too.
    let body = try cli.file("a.json", snapshotA)
    let synced = cli.directory.appendingPathComponent("synced.db").path
    let sync = try shell(
      "cat \(quoted(body)) > \(quoted(fifo)) & \(quoted(EventLogBinary.path)) --db \(quoted(synced)) restaurants sync --from \(quoted(fifo)); status=$?; wait; exit $status"
    )
    #expect(sync.status == 0, "\(sync)")
    #expect(sync.stdout.contains("added 3"), "\(sync)")
  }

  @Test(
    "a closed standard input, or a directory as standard input: exit 1, 'cannot read standard input', no trap",
    arguments: [
      (["import", "-"], "<&-", "it is closed"), (["import", "-"], "< /", "it is a directory"),
      (["restaurants", "sync", "--from", "-"], "<&-", "it is closed"),
      (["restaurants", "sync", "--from", "-"], "< /", "it is a directory"),
    ])
  func closedOrDirectoryInput(arguments: [String], redirection: String, reason: String) throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let command = ([EventLogBinary.path, "--db", cli.database] + arguments).map(quoted).joined(separator: " ")
    let run = try shell("\(command) \(redirection)")
    #expect(!run.crashed, "\(run)")
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr == "Error: cannot read standard input: \(reason)\n", "\(run)")
  }

  @Test("a directory or a missing file as FILE: exit 1 naming it and the cause")
  func directoryOrMissingFile() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let directory = cli.directory.path
    let run = try cli("import", directory)
    #expect(run.status == 1)
    #expect(run.stderr == "Error: cannot read '\(directory)': it is a directory\n", "\(run)")
    let missing = try cli("import", directory + "/missing.jsonl")
    #expect(missing.status == 1)
    #expect(missing.stderr == "Error: cannot read '\(directory)/missing.jsonl': no such file\n", "\(missing)")
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }
}

/// Runs `script` with `/bin/sh -c`, without a backtracer for crashes, as a user's shell would.
func shell(_ script: String) throws -> Run {
  try runChild("/bin/sh", ["-c", script], environment: ["SWIFT_BACKTRACE": "enable=no"])
}

/// `text` quoted for the shell.
func quoted(_ text: String) -> String {
  "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}
