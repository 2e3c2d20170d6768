import EventLog
import Foundation
import Replication

/// The server URL of a replication command: the `URL` argument, else `$EVENTLOG_REMOTE`.
private struct RemoteURL {
  static let argument = CommandSpec.Argument(
    name: "URL",
    help:
      "A postgres:// or postgresql:// URL (default: $EVENTLOG_REMOTE); the password comes from it, PGPASSWORD or ~/.pgpass.",
    optional: true)

  /// The URL given, or `nil` to take it from the environment when the command runs.
  static func given(_ arguments: ParsedArguments, usage: String) throws(UsageError) -> String? {
    guard let url = arguments.positionals.first else { return nil }
    try check(url, usage: usage)
    return url
  }

  static func check(_ url: String, usage: String) throws(UsageError) {
    // The URL is not repeated: it may hold a password.
    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
      throw UsageError("'URL' is not a postgres:// or postgresql:// URL", usage: usage)
    }
  }

  static func resolve(_ given: String?, _ context: CommandContext, usage: String) throws(UsageError) -> String
  {
    if let given { return given }
    guard let url = context.environment["EVENTLOG_REMOTE"], !url.isEmpty else {
      throw UsageError("missing 'URL' (give one, or set EVENTLOG_REMOTE)", usage: usage)
    }
    try check(url, usage: usage)
    return url
  }
}

/// `--retry-for SECONDS` of the one-shot commands.
private enum RetryOption {
  static let spec = CommandSpec.Option.option(
    "retry-for", "SECONDS", "Retry a server that cannot be reached for this long before failing (default 30)."
  )
  static let `default` = 30

  static func parse(_ arguments: ParsedArguments, usage: String) throws(UsageError) -> Duration {
    .seconds(try arguments.integer("retry-for", in: 0...86_400, usage: usage) ?? Self.default)
  }
}

/// What `push`, `pull` and `replicate` share: the server, the retry budget, `--json`.
private struct RemoteOptions {
  var url: String?
  var retryFor: Duration
  var json: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    url = try RemoteURL.given(arguments, usage: usage)
    retryFor = try RetryOption.parse(arguments, usage: usage)
    json = arguments.flag("json")
  }

  /// Opens the store (`access`), checks the server and runs `body` with a replicator between them.
  func withReplicator<R>(
    _ context: CommandContext, _ spec: CommandSpec, _ access: CommandContext.Access, retrying: Bool = true,
    _ body: (Replicator) async throws -> R
  ) async throws -> R {
    let url = try RemoteURL.resolve(url, context, usage: spec.usage(prefix: "eventlog"))
    let store = try context.openStore(access)
    let replicator = try context.replicator(store, url: url, retryFor: retrying ? retryFor : nil)
    defer { replicator.transport.close() }
    try await replicator.checkServer(onRetry: context.retryNotice)
    return try await body(replicator)
  }
}

extension ProgressReporter {
  /// Reports a push's or pull's progress.
  func report(_ progress: ReplicationProgress) {
    update(completed: UInt64(progress.completed), total: UInt64(progress.total))
  }
}

extension CommandContext {
  /// A replicator between the environment and the server at `url`.
  func replicator(
    _ store: EventStore, url: String, retryFor: Duration?
  ) throws -> Replicator {
    guard let makeTransport = dependencies.replicationTransport else {
      throw CommandFailure("this build of eventlog has no replication transport")
    }
    var options = ReplicationOptions()
    options.retryFor = retryFor
    return Replicator(
      store: store, transport: try makeTransport(url), isReplicated: dependencies.isReplicated,
      options: options)
  }

  /// Says on standard error that a transient failure is retried.
  func retryNotice(_ error: String, _ delay: Duration) {
    let wait = String(format: "%.1f", Self.seconds(delay))
    console.error("eventlog: \(TerminalText.escaped(error)); retrying in \(wait) s")
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}

extension PushSummary {
  var json: JSONValue {
    .object([
      ("pushed", .int(Int64(pushed))), ("alreadyStored", .int(Int64(alreadyStored))),
      ("rejected", .int(Int64(rejected))), ("pending", .int(Int64(pending))),
    ])
  }

  var text: String {
    "pushed \(pushed) event(s) (\(alreadyStored) already stored, \(rejected) rejected); \(pending) pending; "
      + "the server holds this device's log through seq \(pushedThrough)"
  }
}

extension PullSummary {
  var json: JSONValue {
    .object([
      ("pulled", .int(Int64(pulled))), ("alreadyPresent", .int(Int64(alreadyPresent))),
      ("cursor", .uint(cursor)),
      ("unreadable", .int(Int64(unreadable))),
    ])
  }

  var text: String {
    "pulled \(pulled) event(s) (\(alreadyPresent) already present"
      + (unreadable > 0 ? ", \(unreadable) kept but not projected: see 'eventlog remote status'" : "")
      + "); at server position \(cursor)"
  }
}

/// `eventlog remote init [URL]`.
struct RemoteInitCommand: CLICommand {
  static let spec = CommandSpec(
    name: "init", abstract: "Create or upgrade the replication schema on the server.",
    arguments: [RemoteURL.argument],
    options: [.flag("json", #"As {"schemaVersion": n}."#)],
    discussion: """
      Run it once per database, as a role that may create schemas there (its owner; no superuser). \
      It is idempotent; a server schema newer than this build's is refused and left as it is.
      """)

  var url: String?
  var json: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    url = try RemoteURL.given(arguments, usage: usage)
    json = arguments.flag("json")
  }

  func run(_ context: CommandContext) async throws {
    let url = try RemoteURL.resolve(url, context, usage: Self.spec.usage(prefix: "eventlog remote"))
    guard let initialize = context.dependencies.initializeRemote else {
      throw CommandFailure("this build of eventlog has no replication transport")
    }
    let (server, from, to) = try await initialize(url)
    if json {
      context.console.print(JSONValue.object([("schemaVersion", .int(Int64(to)))]).rendered())
    } else if from == to {
      context.console.print("eventlog schema version \(to) on \(server): up to date")
    } else if from == 0 {
      context.console.print("eventlog schema version \(to) on \(server): created")
    } else {
      context.console.print("eventlog schema version \(to) on \(server): upgraded from version \(from)")
    }
  }
}

/// `eventlog remote status`.
struct RemoteStatusCommand: CLICommand {
  static let spec = CommandSpec(
    name: "status", abstract: "Show this device's replication: pending events, marks, rejections.",
    options: [
      .flag(
        "json",
        #"As {"device", "pending", "pushedThrough", "cursor", "unreadable", "rejected": [{"seq", "id", "reason"}]}."#
      )
    ],
    discussion: "Reads the local log only; no server is contacted.")

  var json: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    json = arguments.flag("json")
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let status = try LocalReplica(store: store, isReplicated: context.dependencies.isReplicated).status()
    let device = status.device.map { $0.uuidString.lowercased() }
    if json {
      let rejected = status.rejected.map { rejection in
        JSONValue.object([
          ("seq", .uint(rejection.sequence)), ("id", .optional(rejection.id?.uuidString.lowercased())),
          ("reason", .string(rejection.reason)),
        ])
      }
      context.console.print(
        JSONValue.object([
          ("device", .optional(device)), ("pending", .int(Int64(status.pending))),
          ("pushedThrough", .uint(status.pushedThrough)), ("cursor", .uint(status.cursor)),
          ("unreadable", .int(Int64(status.unreadable))), ("rejected", .array(rejected)),
        ]).rendered())
      return
    }
    var table = Table(["STAT", "VALUE"], rightAligned: [1])
    table.append(["device", device ?? "(none yet)"])
    table.append(["pending", String(status.pending)])
    table.append(["pushed through seq", String(status.pushedThrough)])
    table.append(["pulled through position", String(status.cursor)])
    table.append(["kept but not projected", String(status.unreadable)])
    table.append(["rejected by the server", String(status.rejected.count)])
    context.console.print(table.rendered(), terminator: "")
    if !status.rejected.isEmpty {
      var rejections = Table(["SEQ", "ID", "REASON"], rightAligned: [0])
      for rejection in status.rejected {
        rejections.append([
          String(rejection.sequence), rejection.id?.uuidString.lowercased() ?? "-", rejection.reason,
        ])
      }
      context.console.print(rejections.rendered(), terminator: "")
    }
  }
}

/// `eventlog push [URL]`.
struct PushCommand: CLICommand {
  static let spec = CommandSpec(
    name: "push", abstract: "Send this device's unpushed events of replicated streams to the server.",
    arguments: [RemoteURL.argument],
    options: [
      RetryOption.spec,
      .flag("json", #"As {"pushed", "alreadyStored", "rejected", "pending"}."#),
    ],
    discussion: """
      An event the server refuses for good is recorded (see 'eventlog remote status') and the events after \
      it are still sent; that is not a failure of the command.
      """)

  private var options: RemoteOptions

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    options = try RemoteOptions(arguments, usage: usage)
  }

  func run(_ context: CommandContext) async throws {
    try await options.withReplicator(context, Self.spec, .write) { replicator in
      let progress = ProgressReporter("push", console: context.console)
      let summary = try await replicator.push(progress: progress.report, onRetry: context.retryNotice)
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
    }
  }
}

/// `eventlog pull [URL]`.
struct PullCommand: CLICommand {
  static let spec = CommandSpec(
    name: "pull", abstract: "Append the owner's server events this device lacks.",
    arguments: [RemoteURL.argument],
    options: [RetryOption.spec, .flag("json", #"As {"pulled", "alreadyPresent", "cursor"}."#)],
    discussion: """
      Creates the environment when there is none (a new device). An event this build cannot read is stored \
      as it came and kept out of the projections (see 'eventlog remote status').
      """)

  private var options: RemoteOptions

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    options = try RemoteOptions(arguments, usage: usage)
  }

  func run(_ context: CommandContext) async throws {
    // A new device's environment is created, and removed again if the pull fails.
    try await options.withReplicator(context, Self.spec, .create) { replicator in
      let progress = ProgressReporter("pull", console: context.console)
      let summary = try await replicator.pull(progress: progress.report, onRetry: context.retryNotice)
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
    }
  }
}

/// `eventlog replicate [URL] [--watch]`.
struct ReplicateCommand: CLICommand {
  static let spec = CommandSpec(
    name: "replicate", abstract: "Push, then pull; with --watch, go on live until SIGINT or SIGTERM.",
    arguments: [RemoteURL.argument],
    options: [
      .flag("watch", "Keep replicating: push local commits, pull what the server announces, retry outages."),
      RetryOption.spec,
      .flag("json", #"As {"push": {…}, "pull": {…}} (with --watch, the totals when stopped)."#),
    ],
    discussion: """
      Live mode listens for the server's notifications (LISTEN needs a direct or session connection, not a \
      transaction pooler) and also pulls every 5 s. It stops cleanly on SIGINT or SIGTERM: the batch in flight \
      finishes, and the exit status is 0.
      """)

  private var options: RemoteOptions
  var watch: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    options = try RemoteOptions(arguments, usage: usage)
    watch = arguments.flag("watch")
    if watch && arguments.value("retry-for") != nil {
      throw UsageError("'--retry-for' does not apply to '--watch', which retries until stopped", usage: usage)
    }
  }

  func run(_ context: CommandContext) async throws {
    let json = options.json
    try await options.withReplicator(context, Self.spec, .create, retrying: !watch) { replicator in
      let result: WatchRound
      if watch {
        // Caught from here on (until then, Ctrl-C ends the command as usual).
        let stop = StopSignal()
        defer { stop.restore() }
        if !json {
          context.console.print("replicating with \(replicator.transport.server); stop with Ctrl-C")
          context.console.flush()
        }
        result = try await replicator.watch(shouldStop: { stop.isStopped }) { event in
          switch event {
          case .round(let round)
          where !json && round.push.pushed + round.push.rejected + round.pull.pulled > 0:
            context.console.print("\(ISO8601.string(from: Date()))  \(round.push.text)")
            context.console.print("\(ISO8601.string(from: Date()))  \(round.pull.text)")
            context.console.flush()
          case .retrying(let error, let delay):
            context.retryNotice(error, delay)
          default:
            break
          }
        }
        if !json { context.console.print("stopped") }
      } else {
        let push = try await replicator.push(onRetry: context.retryNotice)
        let pull = try await replicator.pull(onRetry: context.retryNotice)
        result = WatchRound(push: push, pull: pull)
        if !json {
          context.console.print(push.text)
          context.console.print(pull.text)
        }
      }
      if json {
        context.console.print(
          JSONValue.object([("push", result.push.json), ("pull", result.pull.json)]).rendered())
      }
    }
  }
}
