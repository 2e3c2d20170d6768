import EventLog
import Foundation

/// The command dispatch and exit statuses of `eventlog-stress`.
enum StressProgram {
  /// Success (also `--help`).
  static let success: Int32 = 0
  /// The command failed: an error of the store, a check that did not hold.
  static let failure: Int32 = 1
  /// A usage error: unknown subcommand or option, a missing or unparsable value.
  static let usageError: Int32 = 64

  static let help = """
    eventlog-stress: a test process for the reliability tests of the event store.

    Usage: eventlog-stress SUBCOMMAND [OPTIONS]

    Subcommands:
      append       Append domain events; print `seq <n> <id> <stream> <type> <length> <fnv64>` per acknowledged event.
      read-loop    Read the log continuously while another process writes; check it is gap-free.
      hold-reader  Open a read transaction, print `holding <head>`, and sleep in it forever.
      hold-open    Open the environment, print `open <head>`, and sleep outside any transaction forever.
      hold-writer  Begin a write transaction, print `holding <head>`, and sleep in it forever.

    Every line of standard output is written with one write(2) as soon as it is known.
    Exit status: 0 success, 1 failure (`error: …` on standard error), 64 usage error.
    See 'eventlog-stress SUBCOMMAND --help'.
    """

  static func main(_ arguments: [String]) async -> Int32 {
    guard let name = arguments.first else {
      Output.error("a subcommand is needed\n\n\(help)")
      return usageError
    }
    let rest = Array(arguments.dropFirst())
    if name == "--help" || name == "-h" || name == "help" {
      Output.line(help)
      return success
    }
    let command: any StressCommand.Type
    switch name {
    case AppendCommand.name: command = AppendCommand.self
    case ReadLoopCommand.name: command = ReadLoopCommand.self
    case HoldReaderCommand.name: command = HoldReaderCommand.self
    case HoldOpenCommand.name: command = HoldOpenCommand.self
    case HoldWriterCommand.name: command = HoldWriterCommand.self
    default:
      Output.error("unknown subcommand '\(name)'\n\n\(help)")
      return usageError
    }
    if rest.contains("--help") || rest.contains("-h") {
      Output.line(command.help)
      return success
    }
    do {
      let parsed = try ParsedOptions(rest, spec: command.options)
      return try await command.init(parsed).run()
    } catch let error as UsageError {
      Output.error("\(error.message)\nUsage: \(command.usage)")
      return usageError
    } catch {
      Output.error("\(error)")
      return failure
    }
  }
}

/// One subcommand: its options, parsed and validated by `init`, then `run`.
protocol StressCommand {
  static var name: String { get }
  static var usage: String { get }
  static var help: String { get }
  /// Option names, each with whether it takes a value.
  static var options: [String: Bool] { get }
  init(_ options: ParsedOptions) throws(UsageError)
  /// Runs the command; returns the exit status.
  func run() async throws -> Int32
}

/// Opens a store, retrying for a while when the environment does not exist yet (a reader
/// started alongside its writer).
func openStore(
  path: String, projections: [any Projection], options: EventStore.Options, waitUpTo seconds: Double = 0
) throws -> EventStore {
  let deadline = Date().addingTimeInterval(seconds)
  while true {
    do {
      return try EventStore(path: path, projections: projections, options: options)
    } catch {
      if Date() >= deadline { throw error }
      usleep(10_000)
    }
  }
}
