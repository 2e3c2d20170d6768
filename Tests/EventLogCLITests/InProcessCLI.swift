import EventLog
import Foundation
import RestaurantBooking
import RestaurantBookingCLI
import Synchronization
import TestKit

@testable import EventLogCLI

/// The outcome of one in-process run of the program.
struct ProgramRun: CustomStringConvertible {
  var status: Int32
  var stdout: String
  var stderr: String

  var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs the shipped `eventlog`'s ``EventLogApp`` in this process, as `main.swift` does (without a replication
/// transport), with its standard output and error captured: parsing tests need no process.
struct InProcessCLI {
  let directory = TemporaryDirectory("cli-in-process")
  var database: String { directory.environment("test.db") }

  /// The shipped `eventlog`'s app: the example's schema and plug-in.
  static let app = EventLogApp(schema: .restaurantBooking, plugins: [RestaurantBookingCommands()])
  /// The app it runs: the shipped one unless a test gives another.
  var app: EventLogApp = InProcessCLI.app

  /// Runs `eventlog --db <test db> arguments…`.
  @discardableResult
  func callAsFunction(
    _ arguments: String..., environment: [String: String] = [:], useDatabase: Bool = true
  ) async -> ProgramRun {
    await run(arguments, environment: environment, useDatabase: useDatabase)
  }

  func run(
    _ arguments: [String], environment: [String: String] = [:], useDatabase: Bool = true,
    terminal: Bool = false
  ) async -> ProgramRun {
    let output = CapturedBytes()
    let errors = CapturedBytes()
    let console = Console(
      errorIsTerminal: false, errorSink: { errors.append($0) }, outputSink: { output.append($0) },
      outputIsTerminal: terminal)
    let status = await app.main(
      arguments: (useDatabase ? ["--db", database] : []) + arguments, environment: environment,
      console: console)
    return ProgramRun(
      status: status, stdout: output.text, stderr: errors.text)
  }

  /// Writes `text` to a file in the test directory and returns its path.
  func file(_ name: String, _ text: String) throws -> String {
    try directory.file(name, Data(text.utf8))
  }

  /// The head sequence (0 when there is no log yet).
  func head() async -> Int {
    let run = await self("stats", "--json")
    guard run.status == 0,
      let object = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    else { return 0 }
    return object["head"] as? Int ?? -1
  }
}

/// Bytes a console wrote.
final class CapturedBytes: Sendable {
  private let bytes = Mutex<[UInt8]>([])

  func append(_ more: [UInt8]) { bytes.withLock { $0 += more } }

  var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}
