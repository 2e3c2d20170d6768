import EventLog
import Foundation
import Replication
import Synchronization

/// The server URL of a replication command: the `URL` argument, else `$EVENTLOG_REMOTE`: a libpq
/// URI, or (except for `remote init`) a Supabase project's `https://` URL.
enum RemoteURL {
  static let help =
    "A postgres:// or postgresql:// URL, or a Supabase project's https:// URL (default: $EVENTLOG_REMOTE); "
    + "the password comes from the URL, PGPASSWORD or ~/.pgpass; for https://, see --api-key and --access-token-file."
  static let libpqHelp =
    "The database's postgres:// or postgresql:// URL, as its owner (default: $EVENTLOG_REMOTE); the password comes from it, PGPASSWORD or ~/.pgpass."

  /// A libpq URL or a project URL; the text is never repeated, since it may hold a password.
  static let type = ArgumentType<String> { url in
    check(url, projectAllowed: true)
      ? .success(url)
      : .failure(
        ArgumentValueError("not a postgres://, postgresql:// or https:// URL", showsValue: false))
  }

  /// A libpq URL (`remote init` creates the schema over a database connection).
  static let libpqType = ArgumentType<String> { url in
    check(url, projectAllowed: false)
      ? .success(url)
      : .failure(
        ArgumentValueError(
          "not a postgres:// or postgresql:// URL (remote init takes the database's connection string, "
            + "not the project's https:// URL)", showsValue: false))
  }

  static func check(_ url: String, projectAllowed: Bool) -> Bool {
    url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") || (projectAllowed && isProject(url))
  }

  /// Whether `url` is an `http://` or `https://` URL (in any case): a Supabase project's.
  static func isProject(_ url: String) -> Bool {
    let scheme = url.prefix(8).lowercased()
    return scheme.hasPrefix("https://") || scheme.hasPrefix("http://")
  }

  /// Whether `url` carries a password (`user:password@…` or `password=…`).
  static func hasPassword(_ url: String) -> Bool {
    guard let schemeEnd = url.range(of: "://") else { return false }
    let rest = url[schemeEnd.upperBound...]
    if let at = rest.lastIndex(of: "@"), rest[..<at].contains(":") { return true }
    return url.contains("?password=") || url.contains("&password=")
  }

  /// The URL given, else `$EVENTLOG_REMOTE`.
  static func resolve(
    _ given: String?, _ context: CommandContext, projectAllowed: Bool = true
  ) throws(UsageError) -> String {
    if let given { return given }
    guard let url = context.environment["EVENTLOG_REMOTE"], !url.isEmpty else {
      throw UsageError("missing 'URL' (give one, or set EVENTLOG_REMOTE)")
    }
    guard check(url, projectAllowed: projectAllowed) else {
      throw UsageError(
        projectAllowed
          ? "'EVENTLOG_REMOTE' is not a postgres://, postgresql:// or https:// URL"
          : "'EVENTLOG_REMOTE' is not a postgres:// or postgresql:// URL (remote init takes the database's "
            + "connection string)")
    }
    return url
  }
}

/// How a replication command signs in to a Supabase project's API: the API key and the user's
/// access token, neither ever printed, logged or stored.
struct RemoteCredentials: ArgumentGroup {
  @Option(
    "api-key", "KEY",
    help: "For an https:// URL: the project's API key (default: $SUPABASE_ANON_KEY); never printed.")
  var apiKey: String?
  @Option(
    "access-token-file", "FILE",
    help:
      "For an https:// URL: a file whose first line is the signed-in user's access token (default: $EVENTLOG_ACCESS_TOKEN); never printed.",
    type: .nonEmpty("a file"))
  var accessTokenFile: String?
  @Option(
    "refresh-token-file", "FILE",
    help:
      "For an https:// URL: a file whose first line is the session's refresh token; when the server refuses the access token, the session is renewed with it (Supabase Auth's refresh grant) and the file rewritten with the next one (and --access-token-file with the new access token); never printed.",
    type: .nonEmpty("a file"))
  var refreshTokenFile: String?

  /// The settings for `url`: for a project URL, the API key (a usage error without one) and the
  /// access token's provider (a token file is read now, and again when the server asks for a
  /// refresh; no token gives `nil`, which sends nothing).
  func settings(
    url: String, allowUnencrypted: Bool, _ context: CommandContext
  ) throws -> RemoteSettings {
    var settings = RemoteSettings(
      url: url, allowUnencrypted: allowUnencrypted, environment: context.environment)
    guard RemoteURL.isProject(url) else { return settings }
    guard let key = apiKey ?? context.environment["SUPABASE_ANON_KEY"], !key.isEmpty else {
      throw UsageError(
        "an https:// URL needs the project's API key: give '--api-key <KEY>' or set SUPABASE_ANON_KEY")
    }
    settings.apiKey = key
    if let refreshFile = refreshTokenFile {
      guard refreshFile != "-" else {
        throw UsageError(
          "'--refresh-token-file' must name a file: the renewed refresh token is written back to it")
      }
      guard let projectURL = URL(string: url) else { throw UsageError("'\(url)' is not a URL") }
      let initial =
        try accessTokenFile.map { try Self.firstLine(of: $0, flag: "--access-token-file") }
        ?? context.environment["EVENTLOG_ACCESS_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines)
      let session = SessionRenewal(
        projectURL: projectURL, apiKey: key, refreshTokenFile: refreshFile, accessTokenFile: accessTokenFile,
        environment: context.databasePath, initial: initial.flatMap { $0.isEmpty ? nil : $0 })
      settings.accessToken = { refresh in try await session.token(refresh: refresh) }
      return settings
    }
    if let file = accessTokenFile {
      let cached = Mutex<String?>(try Self.firstLine(of: file, flag: "--access-token-file"))
      settings.accessToken = { refresh in
        // A refresh reads the file again: whatever renews the session may have rewritten it.
        if refresh && file != "-" { cached.withLock { $0 = nil } }
        if let token = cached.withLock({ $0 }) { return token }
        let token = try Self.firstLine(of: file, flag: "--access-token-file")
        cached.withLock { $0 = token }
        return token
      }
    } else {
      let token = context.environment["EVENTLOG_ACCESS_TOKEN"]?.trimmingCharacters(
        in: .whitespacesAndNewlines)
      settings.accessToken = { _ in token?.isEmpty == false ? token : nil }
    }
    return settings
  }

  /// The first line of `file` (`-`: standard input), trimmed; `nil` when it is empty. A file
  /// that its group or others can write, or that another user owns, is refused
  /// (``SecretFile``), every time it is read.
  static func firstLine(of file: String, flag: String) throws -> String? {
    let data = try SecretFile.read(file, flag: flag, maximumBytes: 64 << 10)
    let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
    let token = line.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    return token.isEmpty ? nil : token
  }
}

/// What `push`, `pull` and `replicate` share: the server, the retry budget, `--json`.
struct RemoteOptions: ArgumentGroup {
  /// The default of `--retry-for`, in seconds.
  static let defaultRetry = 30
  /// The help of `--allow-unencrypted`, which every command that reaches a server takes.
  static let allowUnencryptedHelp =
    "Allow sslmode=disable, allow or prefer for a server on another host (sends the password in clear)."

  @Argument("URL", help: RemoteURL.help, type: RemoteURL.type)
  var url: String?
  let credentials = RemoteCredentials()
  @Option(
    "retry-for", "SECONDS",
    help:
      "Retry a server that cannot be reached for this long before failing (default \(RemoteOptions.defaultRetry)).",
    type: .integer(in: 0...86_400))
  var retrySeconds: Int = RemoteOptions.defaultRetry
  @Flag("allow-unencrypted", help: RemoteOptions.allowUnencryptedHelp)
  var allowUnencrypted: Bool
  @Flag("json", help: "As JSON (the shape is in the discussion below).")
  var json: Bool

  var retryFor: Duration { .seconds(retrySeconds) }

  /// Opens the store (`access`), checks the server (unless `checkingServer` is `false`: the body
  /// checks it) and runs `body` with a replicator between them. A one-shot command (`retrying`) runs under one deadline, `--retry-for` from now and
  /// from each batch pushed or page pulled: no retry, connection or statement runs past it, and a
  /// command that keeps making progress is not cut short.
  func withReplicator<R>(
    _ context: CommandContext, _ access: CommandContext.Access, retrying: Bool = true,
    checkingServer: Bool = true, _ body: (Replicator) async throws -> R
  ) async throws -> R {
    let url = try RemoteURL.resolve(url, context)
    let remote = try credentials.settings(url: url, allowUnencrypted: allowUnencrypted, context)
    // A URL that can never work fails before anything is opened or retried.
    let transport = try context.transport(remote)
    defer { transport.close() }
    let store = try context.openStore(access)
    let replicator = context.replicator(store, transport: transport, retryFor: retrying ? retryFor : nil)
    let deadline = retrying ? ReplicationDeadline(budget: retryFor) : nil
    return try await ReplicationDeadline.$current.withValue(deadline) {
      if checkingServer { try await replicator.checkServer(onRetry: context.retryNotice) }
      return try await body(replicator)
    }
  }
}

extension ProgressReporter {
  /// Reports a push's or pull's progress.
  func report(_ progress: ReplicationProgress) {
    update(completed: UInt64(progress.completed), total: UInt64(progress.total))
  }
}

extension CommandContext {
  /// The transport to the server of `remote`.
  func transport(_ remote: RemoteSettings) throws -> any ReplicationTransport {
    guard let makeTransport = dependencies.remote?.connect else {
      throw CommandFailure("this build of eventlog has no replication transport")
    }
    return try makeTransport(remote)
  }

  /// A replicator between the environment and `transport`.
  func replicator(_ store: EventStore, transport: any ReplicationTransport, retryFor: Duration?) -> Replicator
  {
    var options = ReplicationOptions()
    options.retryFor = retryFor
    return Replicator(store: store, transport: transport, options: options)
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
      ("conflicts", .int(Int64(conflicts))), ("retried", .int(Int64(retried))),
      ("keysPushed", .int(Int64(keysPushed))), ("keysRefused", .int(Int64(keysRefused))),
    ])
  }

  var text: String {
    "pushed \(pushed) event(s) (\(alreadyStored) already stored, \(rejected) rejected"
      + (conflicts > 0 ? ", of which \(conflicts) conflict(s): see 'eventlog remote status'" : "")
      + (retried > 0 ? "; \(retried) refused before sent again" : "")
      + "); \(pending) pending; the server holds this device's log through seq \(pushedThrough)"
      + (keysPushed + keysRefused > 0
        ? "; \(keysPushed) data subject key(s) stored on the server"
          + (keysRefused > 0 ? ", \(keysRefused) refused (the subjects are erased there)" : "")
        : "")
  }

  /// Exit status 3, after the command printed its counts, when the server refused events for
  /// good: a script notices.
  /// - Throws: ``CommandFailure`` with exit status 3 naming how many, and where to see them.
  func checkRejections() throws {
    guard rejected > 0 else { return }
    throw CommandFailure(
      "the server refused \(rejected) event(s) for good (everything else was pushed): "
        + "'eventlog remote status' shows which and why", exitStatus: 3)
  }
}

extension PullSummary {
  var json: JSONValue {
    .object([
      ("pulled", .int(Int64(pulled))), ("alreadyPresent", .int(Int64(alreadyPresent))),
      ("cursor", .uint(cursor)),
      ("unreadable", .int(Int64(unreadable))), ("conflicts", .int(Int64(conflicts))),
      ("keysStored", .int(Int64(keysStored))),
    ])
  }

  var text: String {
    "pulled \(pulled) event(s) (\(alreadyPresent) already present"
      + (unreadable > 0
        ? ", \(unreadable) kept but not projected or not stored: see 'eventlog remote status'" : "")
      + (conflicts > 0 ? ", \(conflicts) conflict(s): see 'eventlog remote status'" : "")
      + "); at server position \(cursor)"
      + (keysStored > 0 ? "; \(keysStored) data subject key(s) stored here" : "")
  }
}

/// `eventlog remote init [URL]`.
struct RemoteInitCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "init", abstract: "Create or upgrade the replication schema on the server.",
    discussion: """
      Run it once per database, as a role that may create schemas there (its owner; no superuser). \
      It is idempotent; a server schema newer than this build's is refused and left as it is. It adds \
      this app's replicated stream-name prefixes to those the server accepts and removes none, so that \
      several apps can share one server (each runs its own 'remote init'); it lists the prefixes the \
      server accepts then (none: every stream). 'eventlog remote streams remove PREFIX' removes one.
      """)

  @Argument("URL", help: RemoteURL.libpqHelp, type: RemoteURL.libpqType)
  var url: String?
  @Flag("allow-unencrypted", help: RemoteOptions.allowUnencryptedHelp)
  var allowUnencrypted: Bool
  @Flag(
    "json",
    help:
      #"As {"schemaVersion": n, "mode": "roles"|"supabase", "warnings": [...], "replicatedStreams": [prefix, ...]}."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let url = try RemoteURL.resolve(url, context, projectAllowed: false)
    guard let initialize = context.dependencies.remote?.initialize else {
      throw CommandFailure("this build of eventlog has no replication transport")
    }
    let result = try await initialize(
      RemoteSettings(url: url, allowUnencrypted: allowUnencrypted, environment: context.environment),
      context.dependencies.replicatedStreamPrefixes)
    let (server, from, to) = (result.server, result.from, result.to)
    let mode = result.api ? "supabase" : "roles"
    for warning in result.warnings { context.console.error("warning: \(TerminalText.escaped(warning))") }
    if json {
      context.console.print(
        JSONValue.object([
          ("schemaVersion", .int(Int64(to))), ("mode", .string(mode)),
          ("warnings", .array(result.warnings.map(JSONValue.string))),
          ("replicatedStreams", .array(result.replicatedStreams.map(JSONValue.string))),
        ]).rendered())
      return
    }
    if from == to {
      context.console.print("eventlog schema version \(to) on \(server): up to date")
    } else if from == 0 {
      context.console.print("eventlog schema version \(to) on \(server): created")
    } else {
      context.console.print("eventlog schema version \(to) on \(server): upgraded from version \(from)")
    }
    context.console.print(
      result.api
        ? "set up for Supabase's API: owners are auth.uid() of the 'authenticated' role; add the schema "
          + "'eventlog_api' to the API's exposed schemas"
        : "set up for database roles: each role that connects owns its own events")
    context.console.print(RemoteStreamsCommand.text(result.replicatedStreams))
  }
}

/// `eventlog remote streams [list] [URL]`, `eventlog remote streams remove PREFIX [URL]`.
struct RemoteStreamsCommand: CLICommand {
  /// What the command does.
  enum Action: String, Sendable {
    case list, remove
  }

  static let configuration = CommandConfiguration(
    name: "streams", abstract: "List the stream-name prefixes the server replicates, or remove one.",
    discussion: """
      'eventlog remote streams [list] [URL]' lists the prefixes the server accepts events on; \
      'eventlog remote streams remove PREFIX [URL]' stops it accepting the streams PREFIX starts. Every \
      app's 'remote init' adds its own prefixes and removes none, so that several apps (each with its own \
      replicated streams) share one server; removing one is this command's job. A push of an event on a \
      stream no prefix starts is refused (see 'eventlog push'); events the server stored stay. An empty \
      list means the server accepts every stream, so the last prefix is not removed. A PREFIX the server \
      does not hold fails (exit 1), naming it and the prefixes it holds; nothing changes. Run it as the \
      database's owner, over its postgres:// URL, as 'remote init'. With --json: {"replicatedStreams": \
      [prefix, ...]}, and "removed": PREFIX after a removal.
      """)

  @Argument("ACTION", help: "list (the default) or remove.", type: RemoteStreamsCommand.actionType)
  var word: String?
  @Argument(
    "PREFIX", help: "For remove: the prefix, exactly as 'list' shows it.",
    type: ArgumentType { .success($0) })
  var prefix: String?
  @Argument("URL", help: RemoteURL.libpqHelp, type: RemoteURL.libpqType)
  var url: String?
  @Flag("allow-unencrypted", help: RemoteOptions.allowUnencryptedHelp)
  var allowUnencrypted: Bool
  @Flag("json", help: #"As {"replicatedStreams": [prefix, ...], "removed"?: PREFIX}."#)
  var json: Bool

  /// `list`, `remove`, or a libpq URL (`remote streams URL`: list); another text is repeated in
  /// the error only when it cannot be a URL (which may hold a password).
  static let actionType = ArgumentType<String> { text in
    if Action(rawValue: text) != nil || RemoteURL.check(text, projectAllowed: false) { return .success(text) }
    return .failure(ArgumentValueError("expected 'list' or 'remove'", showsValue: !text.contains("://")))
  }

  /// What the words ask for: the action, the prefix to remove, and the URL given.
  private var request: (action: Action, prefix: String?, url: String?) {
    guard let word else { return (.list, nil, nil) }
    guard let action = Action(rawValue: word) else { return (.list, nil, word) }  // 'streams URL'
    return action == .list ? (.list, nil, prefix ?? url) : (.remove, prefix, url)
  }

  func validate() throws(UsageError) {
    guard let word else { return }
    switch Action(rawValue: word) {
    case .none:
      // 'streams URL': nothing may follow.
      if prefix != nil || url != nil { throw UsageError("unexpected argument after 'URL'") }
    case .list:
      // 'list URL': the second word is the URL.
      if let prefix {
        guard url == nil else { throw UsageError("unexpected argument: 'list' takes no PREFIX") }
        guard RemoteURL.check(prefix, projectAllowed: false) else {
          throw UsageError("invalid value for 'URL': not a postgres:// or postgresql:// URL")
        }
      }
    case .remove:
      guard let prefix else { throw UsageError("missing argument 'PREFIX' (the prefix to remove)") }
      guard !prefix.isEmpty else {
        throw UsageError("invalid value for 'PREFIX': expected a stream-name prefix")
      }
    }
  }

  func run(_ context: CommandContext) async throws {
    let (action, prefix, given) = request
    let settings = RemoteSettings(
      url: try RemoteURL.resolve(given, context, projectAllowed: false), allowUnencrypted: allowUnencrypted,
      environment: context.environment)
    var fields: [(String, JSONValue)] = []
    let streams: [String]
    switch action {
    case .list:
      guard let list = context.dependencies.remote?.replicatedStreams else {
        throw CommandFailure("this build of eventlog cannot read a server's replicated streams")
      }
      streams = try await list(settings)
    case .remove:
      guard let remove = context.dependencies.remote?.removeReplicatedStream, let prefix else {
        throw CommandFailure("this build of eventlog cannot change a server's replicated streams")
      }
      streams = try await remove(settings, prefix)
      fields.append(("removed", .string(prefix)))
      if context.dependencies.replicatedStreamPrefixes?.contains(prefix) == true {
        context.console.error(
          "warning: this app replicates the streams '\(TerminalText.escaped(prefix))' starts: the server now "
            + "refuses their events, until this app's 'remote init' adds the prefix again")
      }
    }
    if json {
      context.console.print(
        JSONValue.object(fields + [("replicatedStreams", .array(streams.map(JSONValue.string)))]).rendered())
      return
    }
    if action == .remove, let prefix {
      context.console.print("removed the stream prefix '\(TerminalText.escaped(prefix))'")
    }
    context.console.print(Self.text(streams))
  }

  /// The line that says which streams the server accepts.
  static func text(_ streams: [String]) -> String {
    streams.isEmpty
      ? "the server replicates every stream (no stream prefix is recorded)"
      : "the server replicates the streams starting with: "
        + streams.map { "'\(TerminalText.escaped($0))'" }.joined(separator: ", ")
  }
}

/// `eventlog remote status [URL]`.
struct RemoteStatusCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "status",
    abstract:
      "Show this device's replication: pending events, marks, rejections, conflicts; with a URL, the server's view.",
    discussion: """
      Without a URL it reads the local log only, including the owner this device replicates as (recorded at \
      its first push or pull). With one (or $EVENTLOG_REMOTE when --server is given) it also asks the server \
      for its schema version, whether 'eventlog remote init' would upgrade it, the owner it takes the \
      credentials given for, that owner's head, and this device's mark there ("server": {…} in --json); it \
      says so when that owner is not the one this device replicates as (push and pull then refuse).
      """)

  @Argument("URL", help: RemoteURL.help + " Given: the server's view too.", type: RemoteURL.type)
  var url: String?
  private let credentials = RemoteCredentials()
  @Flag("server", help: "Ask the server at $EVENTLOG_REMOTE too (as if its URL were given).")
  var server: Bool
  @Flag("allow-unencrypted", help: RemoteOptions.allowUnencryptedHelp)
  var allowUnencrypted: Bool
  @Flag(
    "json",
    help:
      #"As {"device", "pending", "pushedThrough", "cursor", "unreadable", "rejected": [{"seq", "id", "reason"}], "unstorable", "conflicts": [{"position", "id", "reason"}], "convergenceConflicts", "diverged", "owner", "serverHead": {"position", "chain"} or null, "server"?}."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let status = try LocalReplica(store: store).status()
    // The changes the convergent rule overwrote or discarded ('eventlog conflicts' lists them).
    let convergenceConflicts = try store.conflicts().count
    var serverView: (server: String, info: ServerInfo, mark: ServerMark)?
    if url != nil || server {
      let url = try RemoteURL.resolve(url, context)
      let transport = try context.transport(
        try credentials.settings(url: url, allowUnencrypted: allowUnencrypted, context))
      defer { transport.close() }
      let replicator = context.replicator(
        store, transport: transport, retryFor: .seconds(RemoteOptions.defaultRetry))
      try await replicator.checkServer(onRetry: context.retryNotice)
      let (info, mark) = try await replicator.serverStatus(onRetry: context.retryNotice)
      serverView = (transport.server, info, mark)
    }
    let device = status.device.map { $0.lowercasedString }
    func notes(_ notes: [ServerEventNote]) -> JSONValue {
      .array(
        notes.map { note in
          JSONValue.object([
            ("position", .uint(note.position)), ("id", .optional(note.id?.lowercasedString)),
            ("reason", .string(note.reason)),
          ])
        })
    }
    if json {
      let rejected = status.rejected.map { rejection in
        JSONValue.object([
          ("seq", .uint(rejection.sequence)), ("id", .optional(rejection.id?.lowercasedString)),
          ("reason", .string(UUIDText.lowercased(rejection.reason))),
        ])
      }
      var fields: [(String, JSONValue)] = [
        ("device", .optional(device)), ("pending", .int(Int64(status.pending))),
        ("pushedThrough", .uint(status.pushedThrough)), ("cursor", .uint(status.cursor)),
        ("unreadable", .int(Int64(status.unreadable))), ("rejected", .array(rejected)),
        ("unstorable", notes(status.unstorable)), ("conflicts", notes(status.conflicts)),
        ("convergenceConflicts", .int(Int64(convergenceConflicts))),
        ("diverged", .optional(status.diverged)), ("owner", .optional(status.owner)),
        (
          "serverHead",
          status.serverHead.map {
            JSONValue.object([("position", .uint($0.position)), ("chain", .string($0.value.hex))])
          } ?? .null
        ),
      ]
      if let serverView {
        fields.append(
          (
            "server",
            .object([
              ("server", .string(serverView.server)),
              ("schemaVersion", .int(Int64(serverView.info.schemaVersion))),
              (
                "upgradeAvailable",
                .bool(serverView.info.schemaVersion < context.dependencies.latestServerSchema)
              ),
              ("owner", .string(serverView.info.owner)), ("head", .uint(serverView.info.head)),
              ("pushedThrough", .uint(serverView.mark.pushedThrough)),
            ])
          ))
      }
      context.console.print(JSONValue.object(fields).rendered())
      return
    }
    var table = Table(["STAT", "VALUE"], rightAligned: [1])
    table.append(["device", device ?? "(none yet)"])
    table.append(["pending", String(status.pending)])
    table.append(["pushed through seq", String(status.pushedThrough)])
    table.append(["pulled through position", String(status.cursor)])
    table.append(["kept but not projected", String(status.unreadable)])
    table.append(["rejected by the server", String(status.rejected.count)])
    table.append(["conflicts", String(status.conflicts.count)])
    table.append(["convergence conflicts ('conflicts' lists them)", String(convergenceConflicts)])
    table.append(["replicates as", status.owner.map(TerminalText.escaped) ?? "(no server contacted yet)"])
    if let head = status.serverHead {
      table.append(["server's chain at position \(head.position)", head.value.hex])
    }
    if let serverView {
      table.append(["server", serverView.server])
      table.append(["server schema version", String(serverView.info.schemaVersion)])
      table.append(["owner on the server", serverView.info.owner])
      table.append(["owner's head on the server", String(serverView.info.head)])
      table.append(["this device's mark there", String(serverView.mark.pushedThrough)])
    }
    context.console.print(table.rendered(), terminator: "")
    if let diverged = status.diverged {
      context.console.print(
        "replication stopped: the server's log changed under this device (\(TerminalText.escaped(diverged))); "
          + "run 'eventlog pull --resync' once the server is the one to keep")
    }
    if let serverView, let owner = status.owner, owner != serverView.info.owner {
      context.console.print(
        "this device replicates as \(TerminalText.escaped(owner)), but the server takes the credentials given for "
          + "\(TerminalText.escaped(serverView.info.owner)): push and pull refuse; give \(TerminalText.escaped(owner))'s "
          + "credentials, or run 'eventlog remote reassign URL --to \(TerminalText.escaped(serverView.info.owner))'"
      )
    }
    if let serverView, serverView.info.schemaVersion < context.dependencies.latestServerSchema {
      context.console.print(
        "the server's schema (version \(serverView.info.schemaVersion)) is older than this build's "
          + "(\(context.dependencies.latestServerSchema)): 'eventlog remote init' would upgrade it")
    }
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
    for (title, list) in [("NOT STORED", status.unstorable), ("CONFLICT", status.conflicts)]
    where !list.isEmpty {
      var table = Table(["POSITION", "ID", title], rightAligned: [0])
      for note in list {
        table.append([String(note.position), note.id?.lowercasedString ?? "-", note.reason])
      }
      context.console.print(table.rendered(), terminator: "")
    }
  }
}

/// `eventlog remote reassign [URL] --to OWNER`.
struct RemoteReassignCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "reassign",
    abstract: "Move this device to another owner on the server: the one the credentials given now belong to.",
    discussion: """
      A device replicates as one owner, recorded at its first push or pull: a database role (role:<oid>) \
      or a Supabase user (user:<uuid>). Push and pull refuse to work as another owner, so that a wrong \
      access token or URL cannot move this device's events into someone else's log. This command moves the \
      device on purpose. OWNER must be the owner the server takes the credentials given now for \
      ('eventlog remote status URL' shows it); else nothing changes (exit 1).

      It records OWNER, forgets the pushed mark, the cursor and what the device knew of the old owner's log \
      (acknowledgements, rows not stored, conflicts, a log that changed under it), and pushes the whole outbox \
      to OWNER. The events the old owner's log does not hold are stored under OWNER. Those it holds stay there \
      (the server's log is append-only): the server refuses them ('the event ID is taken'), and they are \
      listed here and in 'eventlog remote status'. Events pulled from the old owner stay in this log and \
      are not pushed. The next pull brings OWNER's events from the start. A device that already replicates \
      as OWNER is left as it is. With --json: {"owner", "previousOwner", "changed", "push": {…}, \
      "refused": [{"seq", "id", "reason"}]}.
      """)

  private let options = RemoteOptions()
  @Option(
    "to", "OWNER",
    help:
      "The owner to move to, exactly as 'eventlog remote status URL' shows it (role:<oid> or user:<uuid>).",
    type: .nonEmpty("an owner such as user:<uuid> or role:<oid>"))
  var owner: String

  func run(_ context: CommandContext) async throws {
    try await options.withReplicator(context, .write) { replicator in
      let previous = try await replicator.reassign(to: owner, onRetry: context.retryNotice)
      let changed = previous != owner
      var summary = PushSummary()
      if changed {
        let progress = ProgressReporter("push", console: context.console)
        summary = try await ReplicationProgressNote.run(replicator, pushes: true, pulls: false, context) {
          try await replicator.push(progress: progress.report, onRetry: context.retryNotice)
        }
        progress.finish()
      }
      let refused = changed ? try replicator.local.rejections() : []
      if options.json {
        context.console.print(
          JSONValue.object([
            ("owner", .string(owner)), ("previousOwner", .optional(previous)), ("changed", .bool(changed)),
            ("push", summary.json),
            (
              "refused",
              .array(
                refused.map { rejection in
                  JSONValue.object([
                    ("seq", .uint(rejection.sequence)), ("id", .optional(rejection.id?.lowercasedString)),
                    ("reason", .string(UUIDText.lowercased(rejection.reason))),
                  ])
                })
            ),
          ]).rendered())
        return
      }
      let shownOwner = TerminalText.escaped(owner)
      guard changed else {
        context.console.print("this device already replicates as \(shownOwner): nothing changed")
        return
      }
      context.console.print(
        "this device now replicates as \(shownOwner)"
          + (previous.map { " (it was \(TerminalText.escaped($0)); what it pushed there stays there)" } ?? "")
          + "; the next pull brings its events from the start")
      context.console.print(summary.text)
      if !refused.isEmpty {
        context.console.print(
          "\(refused.count) event(s) were refused: those another owner's log holds stay there "
            + "('the event ID is taken')")
        var table = Table(["SEQ", "ID", "REASON"], rightAligned: [0])
        for rejection in refused {
          table.append([
            String(rejection.sequence), rejection.id?.lowercasedString ?? "-",
            TerminalText.escaped(UUIDText.lowercased(rejection.reason)),
          ])
        }
        context.console.print(table.rendered(), terminator: "")
      }
    }
  }
}

/// `eventlog push [URL]`.
struct PushCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "push", abstract: "Send this device's unpushed events of replicated streams to the server.",
    discussion: """
      With --json: {"pushed", "alreadyStored", "rejected", "pending", "conflicts", "retried"}. An event the \
      server refuses for good is recorded (see 'eventlog remote status') and the events after it are still \
      sent; then, after pushing everything else and printing the counts, the command says on standard error \
      how many were refused and exits with status 3, so that a script notices. A refusal whose cause may \
      pass (a stream the server does not replicate yet: see 'eventlog remote streams') is sent again by \
      later pushes, oldest first, a batch at a time, stopping at the first batch the server stores none \
      of; once the server stores it (or finds it stored), it is no longer shown as rejected. Its count is \
      "retried", and those refused again count as "rejected".
      """)

  private let options = RemoteOptions()

  func run(_ context: CommandContext) async throws {
    try await options.withReplicator(context, .write) { replicator in
      let progress = ProgressReporter("push", console: context.console)
      let summary = try await ReplicationProgressNote.run(replicator, pushes: true, pulls: false, context) {
        try await replicator.push(progress: progress.report, onRetry: context.retryNotice)
      }
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
      try summary.checkRejections()
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
      projections (see 'eventlog remote status'). With --resync, when the server refused some of the events \
      pushed again for good, it exits with status 3 after the pull (as 'eventlog push' does).
      """)

  private let options = RemoteOptions()
  @Flag(
    "resync",
    help:
      "After the server's log changed under this device: forget its marks, push again what the server lacks, pull from the start."
  )
  var resync: Bool

  func run(_ context: CommandContext) async throws {
    // A new device's environment is created, and removed again if the pull fails.
    try await options.withReplicator(context, .create) { replicator in
      if resync { try await replicator.resync() }
      let progress = ProgressReporter("pull", console: context.console)
      var resyncPush: PushSummary?
      let summary = try await ReplicationProgressNote.run(replicator, pushes: resync, pulls: true, context) {
        if resync {
          let push = try await replicator.push(onRetry: context.retryNotice)
          resyncPush = push
          if !options.json { context.console.print(push.text) }
        }
        return try await replicator.pull(progress: progress.report, onRetry: context.retryNotice)
      }
      progress.finish()
      context.console.print(options.json ? summary.json.rendered() : summary.text)
      // The push of --resync: exit 3 when the server refused events, as 'eventlog push' does.
      try resyncPush?.checkRejections()
    }
  }
}

/// `eventlog replicate [URL] [--watch]`.
struct ReplicateCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "replicate", abstract: "Push, then pull; with --watch, go on live until SIGINT or SIGTERM.",
    discussion: """
      With --json: {"push": {…}, "pull": {…}} (with --watch, the totals when stopped). Live mode listens for \
      the server's notifications (LISTEN needs a direct or session connection, not a transaction pooler) or, \
      through a Supabase project's https:// URL, keeps a long poll open; it also pulls every 5 s. It stops \
      cleanly on SIGINT or SIGTERM: the batch in flight finishes, and the exit status is 0. Without --watch, \
      when the server refused some events for good (as 'eventlog push' says), it exits with status 3 after \
      pushing and pulling everything else; with --watch, each round's counts and 'eventlog remote status' \
      show them, and only the first round sends again the refusals whose cause may have passed.
      """)

  @Flag("watch", help: "Keep replicating: push local commits, pull what the server announces, retry outages.")
  var watch: Bool
  @Flag(
    "resync",
    help:
      "After the server's log changed under this device: forget its marks, push again what the server lacks, pull from the start."
  )
  var resync: Bool
  private let options = RemoteOptions()

  func validate() throws(UsageError) {
    if watch && options.$retrySeconds.wasGiven {
      throw UsageError("'--retry-for' does not apply to '--watch', which retries until stopped")
    }
  }

  func run(_ context: CommandContext) async throws {
    let json = options.json
    if watch, let url = options.url ?? context.environment["EVENTLOG_REMOTE"], RemoteURL.hasPassword(url) {
      context.console.error(
        "warning: the URL's password stays visible in the process list (ps) while --watch runs; "
          + "give it in PGPASSWORD or ~/.pgpass instead")
    }
    // With --watch, the server is checked by the watch itself, which waits out a refused session.
    let result = try await options.withReplicator(
      context, .create, retrying: !watch, checkingServer: !watch || resync
    ) { replicator in
      if resync { try await replicator.resync() }
      return try await ReplicationProgressNote.run(replicator, pushes: true, pulls: true, context) {
        try await run(replicator, context, json: json)
      }
    }
    // After the pull too: everything else was done.
    if !watch { try result.push.checkRejections() }
  }

  /// Replicates once, or live with `--watch`, and prints what it did.
  /// - Returns: what it did (with `--watch`, the totals).
  private func run(_ replicator: Replicator, _ context: CommandContext, json: Bool) async throws -> WatchRound
  {
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
    return result
  }
}
