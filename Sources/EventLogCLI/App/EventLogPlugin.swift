import EventLog

/// What an app adds to its `eventlog`: command groups (the example's `restaurants …` and
/// `bookings …`), and how its projections read in a replay.
///
/// A plug-in is a value the composition root makes with what its commands need (sources,
/// repositories); a command finds it with ``CommandContext/plugin(_:)``:
///
/// ```swift
/// struct UserCommands: EventLogPlugin {
///   var groups: [CommandGroup] {
///     [CommandGroup(name: "users", abstract: "Register and list users.", commands: [UsersListCommand.self])]
///   }
/// }
///
/// struct UsersListCommand: CLICommand {
///   static let configuration = CommandConfiguration(name: "list", abstract: "List the users.")
///   @Flag("json", help: "As JSON.") var json: Bool
///
///   func run(_ context: CommandContext) async throws {
///     let store = try context.openStore(.read)
///     …
///   }
/// }
/// ```
public protocol EventLogPlugin: Sendable {
  /// The command groups, listed in the help before the built-in ones, in order.
  var groups: [CommandGroup] { get }

  /// The state of the plug-in's projections in `replay`, as `replay --to SEQ` shows it (a text
  /// section each) and `replay --json` writes it (a member each). The default shows nothing.
  /// - Parameter replay: the projections as a replay rebuilt them.
  /// - Returns: the sections, in order.
  /// - Throws: an error reading the replayed tables.
  func replayedState(_ replay: EventStore.ReplayResult) throws -> [ReplayedState]
}

extension EventLogPlugin {
  /// Shows nothing of a replay.
  /// - Parameter replay: the projections as a replay rebuilt them.
  /// - Returns: no section.
  /// - Throws: nothing; a plug-in that reads the replay may throw what reading it throws.
  public func replayedState(_ replay: EventStore.ReplayResult) throws -> [ReplayedState] { [] }
}

/// A group of commands under one word: `eventlog restaurants sync`.
public struct CommandGroup: Sendable {
  /// The group's word (`restaurants`).
  public var name: String
  /// One line saying what its commands do.
  public var abstract: String
  /// Its commands, in the order the help lists them.
  public var commands: [any CLICommand.Type]

  /// A group.
  /// - Parameters:
  ///   - name: the group's word.
  ///   - abstract: one line saying what its commands do.
  ///   - commands: its commands, in order.
  public init(name: String, abstract: String, commands: [any CLICommand.Type]) {
    self.name = name
    self.abstract = abstract
    self.commands = commands
  }
}

/// One part of the state a replay rebuilt, as a plug-in shows it.
public struct ReplayedState {
  /// The member's key in `replay --json` (`restaurants`).
  public var name: String
  /// Its JSON value.
  public var json: JSONValue
  /// Its text for `replay --to SEQ`, ending in a newline (a table and a count line).
  public var text: String

  /// A section.
  /// - Parameters:
  ///   - name: the member's key in `replay --json`.
  ///   - json: its JSON value.
  ///   - text: its text, ending in a newline.
  public init(name: String, json: JSONValue, text: String) {
    self.name = name
    self.json = json
    self.text = text
  }
}
