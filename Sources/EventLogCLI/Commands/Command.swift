import EventLog
import Foundation

/// A command of the `eventlog` tool, in the shape of swift-argument-parser: a spec, a
/// validating initializer and `run`.
protocol CLICommand: Sendable {
  /// Name, abstract, arguments and options; drives parsing and `--help`.
  static var spec: CommandSpec { get }
  /// Reads and validates the parsed arguments.
  /// - Throws: ``UsageError`` (exit 64) naming the flag or argument.
  init(_ arguments: ParsedArguments, usage: String) throws(UsageError)
  /// Does the work.
  /// - Throws: ``CommandFailure`` or any error (exit 1).
  func run(_ context: CommandContext) async throws
}

/// A command that failed for a reason other than its usage: exit 1, `Error: …` on stderr.
public struct CommandFailure: Error, CustomStringConvertible {
  /// What went wrong, naming the flag, field, row, event or path.
  public var message: String

  /// Creates a failure.
  public init(_ message: String) { self.message = message }

  public var description: String { message }
}

/// What every command receives: the environment path, the console and the composition root's
/// dependencies.
struct CommandContext: Sendable {
  /// The LMDB environment directory.
  var databasePath: String
  /// Standard output, error and input.
  var console: Console
  /// The process environment (for `SUPABASE_ANON_KEY`).
  var environment: [String: String]
  /// The concrete repositories and sources.
  var dependencies: Dependencies

  /// How a command uses the event store.
  enum Access {
    /// Reads only; the environment must exist.
    case read
    /// Writes; the environment must exist.
    case write
    /// Writes, creating the environment if needed.
    case create
  }

  /// Opens the event store.
  /// - Throws: ``CommandFailure`` naming the path when it does not exist (and `access` is not
  ///   `.create`) or cannot be opened.
  func openStore(_ access: Access) throws -> EventStore {
    var options = EventStore.Options()
    let console = console
    let shownPath = TerminalText.escaped(databasePath)
    options.onWriteLockWait = {
      console.error(
        "waiting for the write lock of '\(shownPath)': another process holds it (perhaps a stopped one); still waiting…"
      )
    }
    if access != .create {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: databasePath, isDirectory: &isDirectory),
        isDirectory.boolValue
      else {
        throw CommandFailure(
          "no event log at '\(databasePath)' (it is created by the first 'restaurants sync' or 'import')")
      }
      options.readOnly = access == .read
    }
    do {
      return try dependencies.openStore(databasePath, options)
    } catch let error as EventStoreError {
      if case .storage(let storage) = error, storage.code == .notFound {
        throw CommandFailure("'\(databasePath)' is not an event log (\(storage))")
      }
      throw CommandFailure("cannot open the event log at '\(databasePath)': \(error)")
    }
  }
}

extension ParsedArguments {
  /// A sequence-number option (`--from`, `--to`): a positive integer.
  func sequence(_ name: String, usage: String) throws(UsageError) -> UInt64? {
    try integer(name, as: UInt64.self, in: 1...UInt64.max, usage: usage)
  }
}
