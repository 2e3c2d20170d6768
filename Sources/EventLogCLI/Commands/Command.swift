import EventLog
import Foundation
import Synchronization

/// A command of the `eventlog` tool, in the shape of swift-argument-parser: a configuration, its
/// arguments declared once as properties (``Flag``, ``Option``, ``Argument``, with their types),
/// `validate()` and `run`.
///
/// The declarations are the command's parser, usage line and `--help`: they are found by reflection
/// on a fresh instance, and the parser fills that instance in. An app's own commands are
/// ``CLICommand``s too, in the groups of its ``EventLogPlugin``.
public protocol CLICommand: Sendable {
  /// Name, abstract and discussion.
  static var configuration: CommandConfiguration { get }
  /// The command with its declarations, not parsed yet.
  init()
  /// Checks what the declarations alone cannot (options that exclude each other).
  /// - Throws: ``UsageError`` (exit 64) naming the flag or argument.
  func validate() throws(UsageError)
  /// Does the work.
  /// - Throws: ``CommandFailure``, ``UsageError`` (exit 64, with this command's usage line) or any
  ///   error (exit 1).
  func run(_ context: CommandContext) async throws
}

extension CLICommand {
  /// Checks nothing: a command whose declarations say everything.
  public func validate() throws(UsageError) {}

  /// The declarations of a fresh instance: for help and usage without a command line.
  static var signature: CommandSignature { CommandSignature(configuration, declaredIn: Self()) }
}

/// A command that failed for a reason other than its usage: `Error: …` on stderr, exit 1 (or
/// ``exitStatus``).
public struct CommandFailure: Error, CustomStringConvertible, LocalizedError {
  /// What went wrong, naming the flag, field, row, event or path.
  public var message: String
  /// The error that caused it, when there is one (its description is part of ``message``).
  public var underlyingError: (any Error)?
  /// The exit status: 1, or what the command documents for a partial failure (3: `push` and
  /// `replicate` when the server refused some events for good, after everything else was done).
  public var exitStatus: Int32 = 1

  /// Creates a failure, keeping the error that caused it.
  public init(_ message: String, underlying: (any Error)? = nil) {
    self.message = message
    self.underlyingError = underlying
  }

  /// A partial failure: the command did its work and printed its output, but a script must
  /// notice what `message` says.
  /// - Parameters:
  ///   - message: what went wrong, and where to look.
  ///   - exitStatus: the status the command documents for it (not 0, 1 or 64).
  public init(_ message: String, exitStatus: Int32) {
    self.message = message
    self.exitStatus = exitStatus
  }

  /// The ``message``.
  public var description: String { message }
  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { message }
}

/// What every command receives: the environment path, the console, the process environment and
/// the app (its schema and plug-ins).
public struct CommandContext: Sendable {
  /// The LMDB environment directory.
  public var databasePath: String
  /// Standard output, error and input.
  public var console: Console
  /// The process environment (for `SUPABASE_ANON_KEY`).
  public var environment: [String: String]
  /// The app: its schema, plug-ins and replication remote.
  var dependencies: EventLogApp
  /// The environment this command created, if it did, so that a failure can remove it.
  let created = CreatedEnvironment()

  /// The app's schema, which every store the command opens is opened with.
  public var schema: AppSchema { dependencies.schema }

  /// The plug-in of type `type` the app was built with: where a plug-in's commands find what the
  /// composition root gave it (its sources and repositories).
  /// - Throws: ``CommandFailure`` when the app has no such plug-in.
  public func plugin<P: EventLogPlugin>(_ type: P.Type) throws -> P {
    for plugin in dependencies.plugins {
      if let plugin = plugin as? P { return plugin }
    }
    throw CommandFailure("this build of eventlog has no \(P.self)")
  }

  /// How a command uses the event store.
  public enum Access: Sendable {
    /// Reads only; the environment must exist.
    case read
    /// Writes; the environment must exist.
    case write
    /// Writes, creating the environment if needed.
    case create
  }

  /// Opens the event store with the app's schema.
  ///
  /// An environment this command creates (`.create`) is removed again when the command fails
  /// before anything is appended to it.
  /// - Parameter access: reading only, writing, or writing and creating.
  /// - Returns: the store.
  /// - Throws: ``CommandFailure`` naming the path when it does not exist (and `access` is not
  ///   `.create`) or cannot be opened.
  public func openStore(_ access: Access) throws -> EventStore {
    var options = EventStore.Options()
    // New when nothing is at its data file's name yet (lstat: a dangling link is something); the
    // directory may exist or not. Only what this command creates is removed on a failure.
    func absent(_ path: String) -> Bool { (try? FileManager.default.attributesOfItem(atPath: path)) == nil }
    let isNew = access == .create && absent(databasePath + "/data.mdb")
    let directoryIsNew = absent(databasePath)
    let lockIsNew = absent(databasePath + "/lock.mdb")
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
          "no event log at '\(databasePath)' (it is created by the first command that writes to it: 'import', 'pull' or one of the app's own)"
        )
      }
      options.readOnly = access == .read
    }
    do {
      let store: EventStore
      do {
        store = try EventStore(path: databasePath, schema: dependencies.schema, options: options)
      } catch {
        // A new environment that could not be set up (a full disk): leave nothing behind.
        if isNew { removeFiles(lock: lockIsNew, directory: directoryIsNew) }
        throw error
      }
      if isNew { created.record(store, lock: lockIsNew, directory: directoryIsNew) }
      return store
    } catch let error as EventStoreError {
      if case .storage(let storage) = error, storage.kind == .missingDatabase {
        throw CommandFailure("'\(databasePath)' is not an event log (\(storage))", underlying: error)
      }
      throw CommandFailure("cannot open the event log at '\(databasePath)': \(error)", underlying: error)
    }
  }
}

extension CommandContext {
  /// Removes the environment this command created, when the command failed and the
  /// environment holds no event: a failed sync or import into a new path leaves nothing behind
  /// (an LMDB environment is created before anything can be appended to it).
  func removeEnvironmentIfCreated() {
    guard let created = created.take() else { return }
    guard (try? created.store.head()) == 0 else { return }  // another process appended meanwhile: keep it
    removeFiles(lock: created.lock, directory: created.directory)
  }

  /// Removes the data file, and the lock file and the (then empty) directory when this
  /// command created them.
  private func removeFiles(lock: Bool, directory: Bool) {
    try? FileManager.default.removeItem(atPath: databasePath + "/data.mdb")
    if lock { try? FileManager.default.removeItem(atPath: databasePath + "/lock.mdb") }
    if directory, (try? FileManager.default.contentsOfDirectory(atPath: databasePath))?.isEmpty == true {
      try? FileManager.default.removeItem(atPath: databasePath)
    }
  }
}

/// The environment a command created, with its store.
final class CreatedEnvironment: Sendable {
  private let state = Mutex<(store: EventStore, lock: Bool, directory: Bool)?>(nil)

  /// Notes that `store` was opened on an environment this command created: its data file, and
  /// its lock file and directory when `lock` and `directory`.
  func record(_ store: EventStore, lock: Bool, directory: Bool) {
    state.withLock { $0 = (store, lock, directory) }
  }

  /// What was recorded, once.
  func take() -> (store: EventStore, lock: Bool, directory: Bool)? {
    state.withLock { state in
      defer { state = nil }
      return state
    }
  }
}
