import EventLog
import Foundation
import Replication

/// An app's `eventlog`: the generic commands (`log`, `show`, `history`, `replay`, `diff`, `verify`, `stats`, `export`,
/// `import`, `push`, `pull`, `replicate`, `remote …`) over the app's ``EventLog/AppSchema``, plus the
/// command groups of its plug-ins.
///
/// An app's `main.swift` is the composition root:
///
/// ```swift
/// import EventLogCLI
/// import MyApp
///
/// await EventLogApp(schema: .myApp, plugins: [MyAppCommands()], remote: .postgres).run()
/// ```
///
/// Every command opens the store with the schema, so the audit, the replay, the import and the
/// replication all see the same event types, projections, rules and replicated streams.
public struct EventLogApp: Sendable {
  /// What the app's data is.
  public var schema: AppSchema
  /// The app's own commands, listed in the help before the built-in groups.
  public var plugins: [any EventLogPlugin]
  /// How `push`, `pull`, `replicate` and `remote init` reach a server; `nil` in a build without
  /// replication (those commands then fail saying so).
  public var remote: ReplicationRemote?
  /// The program's name in its help, usage lines and errors (`USAGE: floorplan-eventlog log …`):
  /// the name given; else, in ``run()``, the name the process was started by; else `eventlog`.
  public var name: String?

  /// An `eventlog` for the app `schema` describes.
  /// - Parameters:
  ///   - schema: the app's event types, projections, rules, replicated streams and stream names.
  ///   - plugins: the app's command groups.
  ///   - remote: the replication transport, for example ``ReplicationRemote/postgres``.
  ///   - name: the program's name in help and errors; `nil`: the executable's file name.
  public init(
    schema: AppSchema, plugins: [any EventLogPlugin] = [], remote: ReplicationRemote? = nil,
    name: String? = nil
  ) {
    self.schema = schema
    self.plugins = plugins
    self.remote = remote
    self.name = name
  }

  /// The name help and errors show: ``name``, else `eventlog`.
  var programName: String { name.flatMap { $0.isEmpty ? nil : $0 } ?? "eventlog" }

  /// Runs the command line `arguments` (without the program's name) and returns the exit status:
  /// 0 on success, 1 when the command failed (`Error: …` on standard error), 64 on a usage error,
  /// 3 when `push` or `replicate` did its work but the server refused some events for good.
  /// - Parameters:
  ///   - arguments: the words after the program's name.
  ///   - environment: the process environment (`EVENTLOG_DB`, `EVENTLOG_REMOTE`, keys).
  ///   - console: where output and errors go.
  /// - Returns: the exit status.
  public func main(
    arguments: [String], environment: [String: String], console: Console = Console()
  ) async -> Int32 {
    await EventLogProgram.main(
      arguments: arguments, environment: environment, dependencies: self, console: console)
  }

  /// Runs the process's command line and exits with its status: what an app's `main.swift` calls.
  ///
  /// It first reserves the standard descriptors the process was started without
  /// (``StandardStreams/reserveClosedDescriptors()``), so that a closed standard input fails as
  /// closed. It runs on the main actor, as `main.swift`'s top-level code does, so that nothing
  /// (the concurrency runtime's thread pool and its event queue, which would take descriptor 0)
  /// starts before that.
  @MainActor
  public func run() async -> Never {
    StandardStreams.reserveClosedDescriptors()
    var app = self
    if app.name == nil, let path = CommandLine.arguments.first {
      app.name = URL(fileURLWithPath: path).lastPathComponent
    }
    let status = await app.main(
      arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
    exit(status)
  }

  /// The command groups: the plug-ins', then the built-in ones.
  var groups: [CommandGroup] { plugins.flatMap(\.groups) + EventLogProgram.builtInGroups }

  /// The app's event types, for JSON rendering and import.
  var eventTypes: EventTypeRegistry { schema.eventTypes }

  /// How stream IDs are shown and read back: the schema's spellings, and every UUID in a name
  /// shown in lower case, as every output writes UUIDs (so that even a build without the app's
  /// spellings shows a stream as the app's own build does; `export` adds the stored bytes when
  /// they differ, `"storedStream"`).
  var streamNames: AppSchema.StreamNames {
    let names = schema.streamNames
    return AppSchema.StreamNames(
      displayed: { UUIDText.lowercased(names.displayed($0)) }, stored: names.stored)
  }

  /// The rules for events that come from elsewhere (imports refuse an event that breaks them).
  var admission: (any EventAdmission)? { schema.admission }

  /// The stream-name prefixes `remote init` adds to those the server accepts (which then refuses
  /// events on streams no prefix starts): the schema's replicated streams; `nil` (add none) when
  /// the schema replicates none.
  var replicatedStreamPrefixes: [String]? {
    schema.replicatedStreams.isEmpty ? nil : schema.replicatedStreams.prefixes
  }

  /// The server schema version the remote's `remote init` writes; 0 without a remote.
  var latestServerSchema: Int { remote?.latestServerSchema ?? 0 }
}
