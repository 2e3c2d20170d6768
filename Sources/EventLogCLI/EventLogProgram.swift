import EventLog
import Foundation

/// The `eventlog` program: global options, command dispatch, help, exit statuses.
///
/// Exit status 0 on success, 1 when the command failed (`Error: …` on standard error), 64 on a
/// usage error (with the usage line), as swift-argument-parser does; 3 when `push` or `replicate`
/// did its work but the server refused some events for good (``CommandFailure/exitStatus``).
public enum EventLogProgram {
  /// The tool's version.
  public static let version = "0.2.0"

  /// The built-in groups, after the plug-ins' in the help.
  static let builtInGroups: [CommandGroup] = [
    CommandGroup(
      name: "remote",
      abstract:
        "Set up the replication server and its replicated streams, show this device's replication, move it to another owner.",
      commands: [
        RemoteInitCommand.self, RemoteStreamsCommand.self, RemoteStatusCommand.self,
        RemoteReassignCommand.self,
      ])
  ]

  /// The generic commands, which work on any app's log.
  static let commands: [any CLICommand.Type] = [
    LogCommand.self, ShowCommand.self, HistoryCommand.self, ReplayCommand.self, DiffCommand.self,
    VerifyCommand.self, StatsCommand.self, CompactCommand.self, ConflictsCommand.self, SubjectsCommand.self,
    EraseCommand.self,
    ExportCommand.self, ImportCommand.self, PushCommand.self, PullCommand.self, ReplicateCommand.self,
  ]

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
    let program = dependencies.programName
    do {
      let databasePath = try GlobalOptions.extractDatabasePath(
        from: &arguments,
        default: environment["EVENTLOG_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "./eventlog.db",
        program: program)
      guard let first = arguments.first else {
        throw UsageError("missing command", usage: globalUsage(program))
      }
      if CommandSignature.isHelp(first) || first == "help" {
        console.print(topLevelHelp(dependencies))
        return 0
      }
      if first == "--version" {
        console.print("\(program) \(version)")
        return 0
      }
      let context = CommandContext(
        databasePath: databasePath, console: console, environment: environment, dependencies: dependencies)
      if let group = dependencies.groups.first(where: { $0.name == first }) {
        let rest = Array(arguments.dropFirst())
        guard let name = rest.first, !name.hasPrefix("-") || CommandSignature.isHelp(name) else {
          if let flag = rest.first {
            throw UsageError(
              "unknown option '\(flag)' for '\(group.name)'", usage: groupUsage(group, program: program))
          }
          throw UsageError(
            "missing subcommand for '\(group.name)'", usage: groupUsage(group, program: program))
        }
        if CommandSignature.isHelp(name) {
          console.print(groupHelp(group, program: program))
          return 0
        }
        guard let command = group.commands.first(where: { $0.configuration.name == name }) else {
          throw UsageError(
            "unknown subcommand '\(name)' for '\(group.name)'", usage: groupUsage(group, program: program))
        }
        return try await run(command, prefix: "\(program) \(group.name)", Array(rest.dropFirst()), context)
      }
      guard let command = commands.first(where: { $0.configuration.name == first }) else {
        if first.hasPrefix("-") { throw UsageError("unknown option '\(first)'", usage: globalUsage(program)) }
        throw UsageError("unknown command '\(first)'", usage: globalUsage(program))
      }
      return try await run(command, prefix: program, Array(arguments.dropFirst()), context)
    } catch let error as UsageError {
      console.flush()
      console.error("Error: \(TerminalText.escaped(error.message))")
      if !error.usage.isEmpty { console.error("Usage: \(error.usage)") }
      console.error("  See '\(program) --help' or '\(program) COMMAND --help'.")
      return 64
    } catch is StandardOutputError {
      return 1  // reported by Console.finish
    } catch {
      console.flush()
      console.error("Error: \(TerminalText.escaped(describe(error, streams: dependencies.streamNames)))")
      return (error as? CommandFailure)?.exitStatus ?? 1
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
}
