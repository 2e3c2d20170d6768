import Foundation
import Synchronization
import TestKit
import Testing

@testable import EventLogCLI

/// A write to standard output that fails is a failure (issue 14, item 2).
@Suite("Standard output is checked")
struct OutputTests {
  /// A console whose standard output fails after `capacity` bytes, as a full disk does.
  final class FailingOutput: Sendable {
    let written = Mutex<[UInt8]>([])
    let errors = Mutex<[UInt8]>([])
    let capacity: Int
    var console: Console {
      Console(
        errorIsTerminal: false, errorSink: { bytes in self.errors.withLock { $0 += bytes } },
        outputSink: { bytes in
          try self.written.withLock { written in
            guard written.count + bytes.count <= self.capacity else {
              throw NSError(
                domain: NSCocoaErrorDomain, code: 512,
                userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
            }
            written += bytes
          }
        })
    }
    var errorText: String { errors.withLock { String(decoding: $0, as: UTF8.self) } }

    init(capacity: Int) { self.capacity = capacity }
  }

  @Test(
    "a failed write turns success into exit 1, reported once with the system's reason; later output is dropped"
  )
  func failedWrite() throws {
    let output = FailingOutput(capacity: 10)
    let console = output.console
    console.print("fits")
    #expect(console.finish(0) == 0)
    #expect(console.outputFailure == nil)
    console.print("this line is longer than what is left")
    try console.checkOutput()  // buffered: nothing written yet
    console.flush()
    #expect(throws: StandardOutputError.self) { try console.checkOutput() }
    console.print("dropped")
    #expect(console.finish(0) == 1)
    #expect(console.finish(1) == 1)
    #expect(console.finish(64) == 64)
    #expect(output.errorText == "Error: cannot write standard output: No space left on device\n")
    #expect(output.written.withLock { $0 } == Array("fits\n".utf8))
  }

  @Test("a large output is written as it goes, so a failure shows before the command ends")
  func writesAsItGoes() {
    let output = FailingOutput(capacity: 1 << 10)
    let console = output.console
    for _ in 0..<2_000 { console.print(String(repeating: "x", count: 99)) }
    #expect(console.outputFailure?.reason == "No space left on device")
  }

  @Test(
    "export, log, show, stats and the lists to a full file system exit 1 with 'cannot write standard output'",
    arguments: [
      ["export"], ["log"], ["log", "--json"], ["show", "1"], ["stats"], ["stats", "--json"],
      ["restaurants", "list"], ["bookings", "list", "--json"], ["verify"],
    ])
  func fullDisk(arguments: [String]) throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let disk = try SmallFileSystem(bytes: 64 << 10)
    try disk.fill()
    let command = ([EventLogBinary.path, "--db", cli.database] + arguments).map(quoted).joined(separator: " ")
    let run = try shell("\(command) > \(quoted(disk.path("out")))")
    #expect(run.status == 1, "\(arguments): \(run)")
    #expect(run.stderr == "Error: cannot write standard output: No space left on device\n", "\(run)")
  }

  @Test("a closed standard output: exit 1 'cannot write standard output: it is closed'")
  func closedOutput() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let command = [EventLogBinary.path, "--db", cli.database, "export"].map(quoted).joined(separator: " ")
    let run = try shell("\(command) >&-")
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr == "Error: cannot write standard output: it is closed\n", "\(run)")
  }
}
