import EventLog
import Foundation
import Replication

/// Where a replication command reaches its server, and how: the URL and what the command line
/// and the environment add to it.
public struct RemoteSettings: Sendable {
  /// The server URL: a `postgres://` URI, or a Supabase project's `https://` URL (`http://` on a
  /// loopback host).
  public var url: String
  /// Whether a server on another host may be reached without TLS (`--allow-unencrypted`).
  public var allowUnencrypted: Bool
  /// The process environment.
  public var environment: [String: String]
  /// For a project URL: the project's API key (`--api-key`, else `SUPABASE_ANON_KEY`); never
  /// printed, logged or stored.
  public var apiKey: String?
  /// For a project URL: the signed-in user's access token, asked before every request
  /// (`--access-token-file`'s first line, else `EVENTLOG_ACCESS_TOKEN`); `nil` when there is
  /// none. `refresh` is `true` after the server refused the last one. Never printed, logged or
  /// stored.
  public var accessToken: @Sendable (_ refresh: Bool) async throws -> String?

  /// Creates settings.
  public init(
    url: String, allowUnencrypted: Bool = false, environment: [String: String] = [:], apiKey: String? = nil,
    accessToken: @escaping @Sendable (_ refresh: Bool) async throws -> String? = { _ in nil }
  ) {
    self.url = url
    self.allowUnencrypted = allowUnencrypted
    self.environment = environment
    self.apiKey = apiKey
    self.accessToken = accessToken
  }
}

/// What `remote init` did on a server.
public struct RemoteInitResult: Sendable {
  /// The server, as messages name it.
  public var server: String
  /// The schema version before.
  public var from: Int
  /// The schema version after.
  public var to: Int
  /// Whether the API side for Supabase was set up (owners are `auth.uid()`).
  public var api: Bool
  /// What the database's owner should know.
  public var warnings: [String]

  /// Creates a result.
  public init(server: String, from: Int, to: Int, api: Bool, warnings: [String]) {
    self.server = server
    self.from = from
    self.to = to
    self.api = api
    self.warnings = warnings
  }
}

/// The `eventlog` program: global options, command dispatch, help, exit statuses.
///
/// Exit status 0 on success, 1 when the command failed (`Error: …` on standard error), 64 on a
/// usage error (with the usage line), as swift-argument-parser does.
public enum EventLogProgram {
  /// The tool's version.
  public static let version = "0.1.0"

  /// The built-in groups, after the plug-ins' in the help.
  static let builtInGroups: [CommandGroup] = [
    CommandGroup(
      name: "remote", abstract: "Set up the replication server and show this device's replication.",
      commands: [RemoteInitCommand.self, RemoteStatusCommand.self])
  ]

  /// The generic commands, which work on any app's log.
  static let commands: [any CLICommand.Type] = [
    LogCommand.self, ShowCommand.self, ReplayCommand.self, VerifyCommand.self, StatsCommand.self,
    ExportCommand.self, ImportCommand.self, PushCommand.self, PullCommand.self, ReplicateCommand.self,
  ]

  /// The options before the command.
  struct GlobalOptions: ArgumentGroup {
    @Option(
      "db", "PATH", help: "The LMDB environment directory (default: $EVENTLOG_DB, else ./eventlog.db).",
      type: .nonEmpty("a directory"))
    var db: String?
    @Flag("version", help: "Show the version.")
    var version: Bool
  }

  /// The top-level help's overview line for `app`.
  static func abstract(of app: EventLogApp) -> String {
    "Audit, replay and verify the event log of the \(app.schema.name) data layer."
  }

  /// Runs the program and returns its exit status.
  ///
  /// A command that succeeded but whose standard output could not be written fails (exit 1, see
  /// ``Console/finish(_:)``).
  static func main(
    arguments: [String], environment: [String: String], dependencies: EventLogApp,
    console: Console = Console()
  ) async -> Int32 {
    let status = await dispatch(
      arguments: arguments, environment: environment, dependencies: dependencies, console: console)
    return console.finish(status)
  }

  /// Parses the global options, runs the command and maps its outcome to an exit status.
  private static func dispatch(
    arguments: [String], environment: [String: String], dependencies: EventLogApp, console: Console
  ) async -> Int32 {
    var arguments = arguments
    var databasePath = environment["EVENTLOG_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "./eventlog.db"
    do {
      // Global options may stand anywhere before `--`.
      let db = "--" + GlobalOptions().$db.slot.definition.name
      var index = 0
      while index < arguments.count && arguments[index] != "--" {
        let argument = arguments[index]
        if argument == db || argument.hasPrefix(db + "=") {
          let value: String?
          if argument == db {
            value = index + 1 < arguments.count ? arguments[index + 1] : nil
            arguments.removeSubrange(index...min(index + 1, arguments.count - 1))
          } else {
            value = String(argument.dropFirst(db.count + 1))
            arguments.remove(at: index)
          }
          guard let value, !value.isEmpty else {
            throw UsageError("missing value for '--db <PATH>'", usage: globalUsage)
          }
          databasePath = value
        } else {
          index += 1
        }
      }
      guard let first = arguments.first else {
        throw UsageError("missing command", usage: globalUsage)
      }
      if CommandSignature.isHelp(first) || first == "help" {
        console.print(topLevelHelp(dependencies))
        return 0
      }
      if first == "--version" {
        console.print("eventlog \(version)")
        return 0
      }
      let context = CommandContext(
        databasePath: databasePath, console: console, environment: environment, dependencies: dependencies)
      if let group = dependencies.groups.first(where: { $0.name == first }) {
        let rest = Array(arguments.dropFirst())
        guard let name = rest.first, !name.hasPrefix("-") || CommandSignature.isHelp(name) else {
          if let flag = rest.first {
            throw UsageError("unknown option '\(flag)' for '\(group.name)'", usage: groupUsage(group))
          }
          throw UsageError("missing subcommand for '\(group.name)'", usage: groupUsage(group))
        }
        if CommandSignature.isHelp(name) {
          console.print(groupHelp(group))
          return 0
        }
        guard let command = group.commands.first(where: { $0.configuration.name == name }) else {
          throw UsageError("unknown subcommand '\(name)' for '\(group.name)'", usage: groupUsage(group))
        }
        return try await run(command, prefix: "eventlog \(group.name)", Array(rest.dropFirst()), context)
      }
      guard let command = commands.first(where: { $0.configuration.name == first }) else {
        if first.hasPrefix("-") { throw UsageError("unknown option '\(first)'", usage: globalUsage) }
        throw UsageError("unknown command '\(first)'", usage: globalUsage)
      }
      return try await run(command, prefix: "eventlog", Array(arguments.dropFirst()), context)
    } catch let error as UsageError {
      console.flush()
      console.error("Error: \(TerminalText.escaped(error.message))")
      if !error.usage.isEmpty { console.error("Usage: \(error.usage)") }
      console.error("  See 'eventlog --help' or 'eventlog COMMAND --help'.")
      return 64
    } catch is StandardOutputError {
      return 1  // reported by Console.finish
    } catch {
      console.flush()
      console.error("Error: \(TerminalText.escaped(describe(error, streams: dependencies.streamNames)))")
      return 1
    }
  }

  private static func run(
    _ command: any CLICommand.Type, prefix: String, _ arguments: [String], _ context: CommandContext
  ) async throws -> Int32 {
    try await run(command.init(), prefix: prefix, arguments, context)
  }

  /// Parses `arguments` into `command`'s declarations, validates and runs it.
  private static func run<C: CLICommand>(
    _ command: C, prefix: String, _ arguments: [String], _ context: CommandContext
  ) async throws -> Int32 {
    let signature = CommandSignature(C.configuration, declaredIn: command)
    let usage = signature.usage(prefix: prefix)
    do {
      guard try signature.parse(arguments) else {
        context.console.print(signature.help(prefix: prefix))
        return 0
      }
      try command.validate()
    } catch {
      throw UsageError(error.message, usage: usage)
    }
    do {
      try await command.run(context)
    } catch {
      context.removeEnvironmentIfCreated()
      if let usageError = error as? UsageError, usageError.usage.isEmpty {
        throw UsageError(usageError.message, usage: usage)
      }
      throw error
    }
    return 0
  }

  /// One line for any error, naming what it concerns.
  ///
  /// A stream named in an ``EventStoreError`` is shown as ``AppSchema/StreamNames/displayed`` shows it.
  static func describe(_ error: any Error, streams: AppSchema.StreamNames = .verbatim) -> String {
    if case .wrongExpectedVersion(let stream, let expected, let actual) = error as? EventStoreError {
      return "stream '\(streams.displayed(stream))' expected \(expected) but is at version \(actual)"
    }
    return String(describing: error)
  }

  static var globalUsage: String { "eventlog [--db PATH] COMMAND [OPTIONS]" }

  static func groupUsage(_ group: CommandGroup) -> String {
    "eventlog \(group.name) \(group.commands.map { $0.configuration.name }.joined(separator: "|")) [OPTIONS]"
  }

  static func groupHelp(_ group: CommandGroup) -> String {
    var lines = ["OVERVIEW: \(group.abstract)", "", "USAGE: \(groupUsage(group))", "", "SUBCOMMANDS:"]
    lines += CommandSignature.columns(
      group.commands.map { ($0.configuration.name, $0.configuration.abstract) })
    lines += ["", "OPTIONS:"]
    lines += CommandSignature.columns([("-h, --help", "Show help information.")])
    lines += ["", "  See 'eventlog \(group.name) SUBCOMMAND --help' for details."]
    return lines.joined(separator: "\n")
  }

  static func topLevelHelp(_ app: EventLogApp) -> String {
    let abstract = abstract(of: app)
    var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(globalUsage)", "", "OPTIONS:"]
    let global = CommandSignature(
      CommandConfiguration(name: "", abstract: abstract), declaredIn: GlobalOptions())
    lines += CommandSignature.columns(
      global.options.map { ($0.synopsis(angled: true), $0.help) } + [("-h, --help", "Show help information.")]
    )
    lines += ["", "COMMANDS:"]
    var entries: [(String, String)] = []
    for group in app.groups {
      for command in group.commands {
        entries.append(("\(group.name) \(command.configuration.name)", command.configuration.abstract))
      }
    }
    for command in commands { entries.append((command.configuration.name, command.configuration.abstract)) }
    lines += CommandSignature.columns(entries)
    lines += ["", "  See 'eventlog COMMAND --help' for details."]
    return lines.joined(separator: "\n")
  }
}
