import EventLog
import Foundation
import Replication

/// The server URL of a replication command: the `URL` argument, else `$EVENTLOG_REMOTE`.
private enum RemoteURL {
  static let help =
    "A postgres:// or postgresql:// URL (default: $EVENTLOG_REMOTE); the password comes from it, PGPASSWORD or ~/.pgpass."

  /// A postgres:// or postgresql:// URL; the text is never repeated, since it may hold a password.
  static let type = ArgumentType<String> { url in
    check(url)
      ? .success(url)
      : .failure(ArgumentValueError("not a postgres:// or postgresql:// URL", showsValue: false))
  }

  static func check(_ url: String) -> Bool { url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") }

  /// The URL given, else `$EVENTLOG_REMOTE`.
  static func resolve(_ given: String?, _ context: CommandContext) throws(UsageError) -> String {
    if let given { return given }
    guard let url = context.environment["EVENTLOG_REMOTE"], !url.isEmpty else {
      throw UsageError("missing 'URL' (give one, or set EVENTLOG_REMOTE)")
    }
    guard check(url) else { throw UsageError("'EVENTLOG_REMOTE' is not a postgres:// or postgresql:// URL") }
    return url
  }
}

/// What `push`, `pull` and `replicate` share: the server, the retry budget, `--json`.
private struct RemoteOptions: ArgumentGroup {
  /// The default of `--retry-for`, in seconds.
  static let defaultRetry = 30

  @Argument("URL", help: RemoteURL.help, type: RemoteURL.type)
  var url: String?
  @Option(
    "retry-for", "SECONDS",
    help:
      "Retry a server that cannot be reached for this long before failing (default \(RemoteOptions.defaultRetry)).",
    type: .integer(in: 0...86_400))
  var retrySeconds: Int = RemoteOptions.defaultRetry
  @Flag("json", help: "As JSON (the shape is in the discussion below).")
  var json: Bool

  var retryFor: Duration { .seconds(retrySeconds) }

  /// Opens the store (`access`), checks the server and runs `body` with a replicator between them.
  func withReplicator<R>(
    _ context: CommandContext, _ access: CommandContext.Access, retrying: Bool = true,
    _ body: (Replicator) async throws -> R
  ) async throws -> R {
    let url = try RemoteURL.resolve(url, context)
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
    guard let remote = dependencies.remote else {
      throw CommandFailure("this build of eventlog has no replication transport")
    }
    var options = ReplicationOptions()
    options.retryFor = retryFor
    return Replicator(store: store, transport: try remote.connect(url), options: options)
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
  static let configuration = CommandConfiguration(
    name: "init", abstract: "Create or upgrade the replication schema on the server.",
    discussion: """
      Run it once per database, as a role that may create schemas there (its owner; no superuser). \
      It is idempotent; a server schema newer than this build's is refused and left as it is.
      """)

  @Argument("URL", help: RemoteURL.help, type: RemoteURL.type)
  var url: String?
  @Flag("json", help: #"As {"schemaVersion": n}."#)
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let url = try RemoteURL.resolve(url, context)
    guard let initialize = context.dependencies.remote?.initialize else {
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
  static let configuration = CommandConfiguration(
    name: "status", abstract: "Show this device's replication: pending events, marks, rejections.",
    discussion: "Reads the local log only; no server is contacted.")

  @Flag(
    "json",
    help:
      #"As {"device", "pending", "pushedThrough", "cursor", "unreadable", "rejected": [{"seq", "id", "reason"}]}."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let status = try LocalReplica(store: store).status()
    let device = status.device.map { $0.uuidString.lowercased() }
    if json {
      let rejected = status.rejected.map { rejection in
        JSONValue.object([
          ("seq", .uint(rejection.sequence)), ("id", .optional(rejection.id?.uuidString.lowercased())),
          ("reason", .string(UUIDText.lowercased(rejection.reason))),
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
          String(rejection.sequence), rejection.id?.lowercasedString ?? "-",
          UUIDText.lowercased(rejection.reason),
        ])
      }
      context.console.print(rejections.rendered(), terminator: "")
    }
  }
}

/// `eventlog push [URL]`.
struct PushCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "push", abstract: "Send this device's unpushed events of replicated streams to the server.",
    discussion: """
      With --json: {"pushed", "alreadyStored", "rejected", "pending"}. An event the server refuses for good is \
      recorded (see 'eventlog remote status') and the events after it are still sent; that is not a failure \
      of the command.
      """)

  private let options = RemoteOptions()

  func run(_ context: CommandContext) async throws {
    try await options.withReplicator(context, .write) { replicator in
      let progress = ProgressReporter("push", console: context.console)
      let summary = try await replicator.push(progress: progress.report, onRetry: context.retryNotice)
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
    }
  }
}

/// `eventlog pull [URL]`.
struct PullCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "pull", abstract: "Append the owner's server events this device lacks.",
    discussion: """
      With --json: {"pulled", "alreadyPresent", "cursor", "unreadable"}. Creates the environment when there is \
      none (a new device). An event this build cannot read is stored as it came and kept out of the \
      projections (see 'eventlog remote status').
      """)

  private let options = RemoteOptions()

  func run(_ context: CommandContext) async throws {
    // A new device's environment is created, and removed again if the pull fails.
    try await options.withReplicator(context, .create) { replicator in
      let progress = ProgressReporter("pull", console: context.console)
      let summary = try await replicator.pull(progress: progress.report, onRetry: context.retryNotice)
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
    }
  }
}

/// `eventlog replicate [URL] [--watch]`.
struct ReplicateCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "replicate", abstract: "Push, then pull; with --watch, go on live until SIGINT or SIGTERM.",
    discussion: """
      With --json: {"push": {…}, "pull": {…}} (with --watch, the totals when stopped). Live mode listens for \
      the server's notifications (LISTEN needs a direct or session connection, not a transaction pooler) and \
      also pulls every 5 s. It stops cleanly on SIGINT or SIGTERM: the batch in flight finishes, and the exit \
      status is 0.
      """)

  @Flag("watch", help: "Keep replicating: push local commits, pull what the server announces, retry outages.")
  var watch: Bool
  private let options = RemoteOptions()

  func validate() throws(UsageError) {
    if watch && options.$retrySeconds.wasGiven {
      throw UsageError("'--retry-for' does not apply to '--watch', which retries until stopped")
    }
  }

  func run(_ context: CommandContext) async throws {
    let json = options.json
    try await options.withReplicator(context, .create, retrying: !watch) { replicator in
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
