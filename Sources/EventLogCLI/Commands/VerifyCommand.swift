import EventLog
import Foundation

/// `eventlog verify`: checksums, gap-free sequence, stream versions, indexes, projection
/// checkpoints and projections against a replay.
struct VerifyCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "verify",
    abstract:
      "Check every record's checksum and hash chain, the sequence, stream versions, indexes and projections.",
    discussion: """
      Prints the chain head (the last event's sequence and chain value): held elsewhere (the server, an \
      export's manifest), it pins the whole history before it; see Docs/Audit.md for what each check proves. \
      Exits with status 1 when a problem is found. Events the projections skip (of a type or schema version \
      this build cannot read, or breaking the domain's rules, as pulled from another device) are listed, \
      not counted as problems. What this build cannot check is listed as such, not as damage: another app's \
      projections (their checkpoints are checked), its own that the environment does not hold, and events of \
      types it does not know (their records, checksums, sequence and indexes are checked, not their app's rules).

      With --remote [URL] (default $EVENTLOG_REMOTE; a libpq URL or a Supabase project's https:// URL, as \
      for push and pull) it checks this environment against the server instead, reading both and changing \
      neither (server schema version 5): every event the server holds for this owner is here with the same \
      content; the server's chain recomputes from its rows and matches what this device recorded at its \
      last pull; every head the server attested for this device matches this environment's chain; every \
      event of this device's own at or below its pushed mark is on the server. It names the first \
      differences of each kind. With --json: {"ok", "server", "owner", "device", "serverHead": {"position", \
      "chain"} or null, "recordedServerHead", "pushedThrough", "checked": {"serverEvents", "matched", \
      "notStored", "chainRecomputed", "chainNotRecomputed", "attestedHeads", "attestedHeadsUnchained", \
      "ownEvents", "ownRejected"}, "problemCounts": {kind: n}, "problems": [{"kind", "position", "seq", \
      "id", "problem"}]}.
      """)

  @Flag(
    "json",
    help:
      #"As {"ok", "events", "chain": {"seq", "head"} or null, "unchained", "problems": [{"seq", "problem"}], "skipped": [{"seq", "kind", "reason"}], "unchecked": {"projections": [...], "events": [...]}, "erasedSubjects": [{"subject", "erasedAt", "event"}]}."#
  )
  var json: Bool
  @Flag(
    "remote", help: "Check this environment against the server's log and attested heads instead (see below).")
  var remote: Bool
  @Argument(
    "URL", help: "With --remote, the server: " + RemoteURL.help, type: RemoteURL.type)
  var url: String?
  let credentials = RemoteCredentials()
  @Option(
    "retry-for", "SECONDS",
    help:
      "With --remote: retry a server that cannot be reached for this long before failing (default \(RemoteOptions.defaultRetry)).",
    type: .integer(in: 0...86_400))
  var retrySeconds: Int = RemoteOptions.defaultRetry
  @Flag("allow-unencrypted", help: "With --remote. " + RemoteOptions.allowUnencryptedHelp)
  var allowUnencrypted: Bool

  func validate() throws(UsageError) {
    if !remote && url != nil { throw UsageError("'URL' is given only with '--remote'") }
    if remote && export != nil {
      throw UsageError("'--remote' and '--export' check different things: give one")
    }
  }

  @Option(
    "export", "FILE",
    help:
      "Check an export file against its manifest and its lines' chain values instead (no environment needed)."
  )
  var export: String?

  func run(_ context: CommandContext) async throws {
    if let export {
      try verifyExport(export, context: context)
      return
    }
    if remote { return try await runRemote(context) }
    let store = try context.openStore(.read)
    let progress = ProgressReporter("verify", console: context.console)
    let report = try store.verify { progress.update(completed: $0.completed, total: $0.total) }
    progress.finish()
    if json {
      let problems = report.problems.map { problem in
        JSONValue.object([
          ("seq", problem.sequence.map(JSONValue.uint) ?? .null),
          ("problem", .string(UUIDText.lowercased(problem.problem))),
        ])
      }
      let skipped = report.skipped.map { event in
        JSONValue.object([
          ("seq", .uint(event.sequence)), ("kind", .string(EventJSON.name(of: event.kind))),
          ("reason", .string(UUIDText.lowercased(event.reason))),
        ])
      }
      let unchecked = JSONValue.object([
        ("projections", .array(report.uncheckedProjections.map(ReplayCommand.json))),
        (
          "events",
          .array(
            report.uncheckedEvents.map { events in
              JSONValue.object([
                ("type", .string(events.type)), ("count", .uint(events.count)),
                ("reason", .string(events.reason)),
              ])
            })
        ),
      ])
      let chain =
        report.chainHead.map { head in
          JSONValue.object([("seq", .uint(head.sequence)), ("head", .string(head.value.hex))])
        } ?? .null
      let erased = JSONValue.array(
        try store.erasedSubjects().map { erasure in
          JSONValue.object([
            ("subject", .string(erasure.subject.lowercasedString)),
            ("erasedAt", .string(ISO8601.string(from: erasure.erasedAt))),
            ("event", .string(erasure.event.lowercasedString)),
          ])
        })
      context.console.print(
        JSONValue.object([
          ("ok", .bool(report.isClean)), ("events", .uint(report.events)), ("chain", chain),
          ("unchained", .uint(report.unchainedRecords)), ("problems", .array(problems)),
          ("skipped", .array(skipped)), ("unchecked", unchecked), ("erasedSubjects", erased),
        ])
        .rendered())
    } else if report.isClean {
      if report.isComplete {
        context.console.print("OK: \(report.events) events verified; projections match a replay.")
      } else {
        let matched = store.projections.count > store.absentProjections.count
        context.console.print(
          "OK: \(report.events) events verified"
            + (matched ? "; the projections it compared match a replay" : "")
            + ". Not checked by this build:")
        Self.printUnchecked(report, to: context.console)
      }
      Self.printChain(report, to: context.console)
      try Self.printErasures(of: store, to: context.console)
      if !report.skipped.isEmpty {
        context.console.print("\(report.skipped.count) event(s) are kept but not projected:")
        var table = Table(["SEQ", "KIND", "REASON"], rightAligned: [0])
        for event in report.skipped {
          table.append([
            String(event.sequence), EventJSON.name(of: event.kind), UUIDText.lowercased(event.reason),
          ])
        }
        context.console.print(table.rendered(), terminator: "")
      }
    } else {
      var table = Table(["SEQ", "PROBLEM"], rightAligned: [0])
      for problem in report.problems {
        table.append([problem.sequence.map(String.init) ?? "-", UUIDText.lowercased(problem.problem)])
      }
      context.console.print(table.rendered(), terminator: "")
      Self.printChain(report, to: context.console)
      if !report.isComplete {
        context.console.print("Not checked by this build:")
        Self.printUnchecked(report, to: context.console)
      }
    }
    if !report.isClean {
      let first = report.problems[0]
      throw CommandFailure(
        "verify found \(report.problems.count) problem(s); the first: \(first)")
    }
  }
}

extension VerifyCommand {
  /// `verify --export FILE`: every line against its record's chain value, runs of lines against
  /// the log, the file against its manifest.
  func verifyExport(_ path: String, context: CommandContext) throws {
    let data = try InputReader.read(path)
    guard let text = String(validating: data, as: UTF8.self) else {
      throw ImportCommand.invalidUTF8(in: data)
    }
    let progress = ProgressReporter("verify", console: context.console)
    let file = try ExportFile.read(
      text, eventTypes: context.dependencies.eventTypes, streams: context.dependencies.streamNames,
      progress: progress)
    progress.finish()
    let problems = file.problems()
    let manifest = file.manifest
    if json {
      var members: [(String, JSONValue)] = [
        ("ok", .bool(problems.isEmpty)), ("events", .int(Int64(file.entries.count))),
        (
          "problems",
          .array(
            problems.map { problem in
              JSONValue.object([
                ("line", problem.line.map { JSONValue.int(Int64($0)) } ?? .null),
                ("problem", .string(problem.problem)),
              ])
            })
        ),
      ]
      if let manifest {
        members.append(
          (
            "manifest",
            .object([
              ("device", manifest.device.map { .string($0.lowercasedString) } ?? .null),
              (
                "head",
                .object([
                  ("seq", .uint(manifest.head)),
                  ("chain", manifest.headChain.map { .string($0.hex) } ?? .null),
                ])
              ),
              ("complete", .bool(manifest.complete)),
              ("exportedAt", .string(ISO8601.string(from: manifest.exportedAt))),
            ])
          ))
      }
      context.console.print(JSONValue.object(members).rendered())
    } else if problems.isEmpty, let manifest {
      context.console.print(
        "OK: \(file.entries.count) events; every line matches its record's chain value and the file its manifest."
      )
      context.console.print(
        "Exported \(ISO8601.string(from: manifest.exportedAt)) from device \(manifest.device?.lowercasedString ?? "-") "
          + "at its head, event \(manifest.head) \(manifest.headChain?.hex ?? "-")"
          + (manifest.complete ? " (the whole log)." : " (part of the log: " + Self.part(of: manifest) + ").")
      )
    } else {
      var table = Table(["LINE", "PROBLEM"], rightAligned: [0])
      for problem in problems { table.append([problem.line.map(String.init) ?? "-", problem.problem]) }
      context.console.print(table.rendered(), terminator: "")
    }
    if let first = problems.first {
      throw CommandFailure("the export has \(problems.count) problem(s); the first: \(first)")
    }
  }

  /// What part of the log an export's manifest says it holds.
  static func part(of manifest: ExportManifest) -> String {
    var parts = manifest.selection.map { "--\($0.0) \($0.1)" }
    if !manifest.damaged.isEmpty { parts.append("\(manifest.damaged.count) damaged record(s) left out") }
    return parts.joined(separator: ", ")
  }

  /// The chain head's line, and a line for records the chain does not cover yet.
  static func printChain(_ report: EventStore.VerificationReport, to console: Console) {
    if let head = report.chainHead {
      console.print("Chain head: event \(head.sequence) \(head.value.hex)")
    }
    if report.unchainedRecords > 0 {
      console.print(
        "Not chained: \(report.unchainedRecords) record(s) stored before environment format 5 (the first "
          + "writable open chains them).")
    }
  }

  /// A line per erased data subject, under a heading, when there are any.
  static func printErasures(of store: EventStore, to console: Console) throws {
    let erased = try store.erasedSubjects()
    guard !erased.isEmpty else { return }
    console.print(
      "Erased subjects: \(erased.count) (their keys are destroyed; their values stay sealed in the chain):")
    for erasure in erased {
      console.print(
        "  \(erasure.subject.lowercasedString) at \(ISO8601.string(from: erasure.erasedAt)) "
          + "(event \(erasure.event.lowercasedString))")
    }
  }

  /// The lines of what `report` could not check, indented.
  static func printUnchecked(_ report: EventStore.VerificationReport, to console: Console) {
    for projection in report.uncheckedProjections { console.print("  \(projection)") }
    for events in report.uncheckedEvents { console.print("  \(events)") }
  }
}

/// `eventlog stats`: counts, sizes, head and per-type counts.
struct StatsCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "stats", abstract: "Show counts, sizes, the head sequence and per-type counts.")

  @Flag("json", help: "As one JSON object.")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let head = try store.head()
    var types: [String: Int] = [:]
    var streams = Set<String>()
    let progress = ProgressReporter("stats", console: context.console)
    try store.forEachEvent { event in
      types[event.type, default: 0] += 1
      streams.insert(event.stream.rawValue)
      if event.sequence % 16_384 == 0 { progress.update(completed: event.sequence, total: head) }
      return true
    }
    progress.finish()
    let info = try store.storageInfo()
    let fileSize =
      (try? FileManager.default.attributesOfItem(atPath: store.path + "/data.mdb")[.size] as? Int) ?? 0
    let sortedTypes = types.sorted { $0.key < $1.key }
    let device = store.deviceID.map(\.lowercasedString)
    let skipped = try store.skippedCount()
    if json {
      context.console.print(
        JSONValue.object([
          ("device", device.map(JSONValue.string) ?? .null),
          ("events", .uint(head)), ("head", .uint(head)), ("streams", .int(Int64(streams.count))),
          ("skipped", .int(Int64(skipped))),
          ("fileBytes", .int(Int64(fileSize))), ("usedBytes", .int(Int64(info.usedBytes))),
          ("mapBytes", .int(Int64(info.mapSize))),
          ("types", .object(sortedTypes.map { ($0.key, JSONValue.int(Int64($0.value))) })),
        ]).rendered())
      return
    }
    var table = Table(["STAT", "VALUE"], rightAligned: [1])
    table.append(["device", device ?? "(none yet: written by an older build)"])
    table.append(["events", String(head)])
    table.append(["head sequence", String(head)])
    table.append(["streams", String(streams.count)])
    table.append(["not projected", String(skipped)])
    table.append(["data file", Formatting.bytes(fileSize)])
    table.append(["in use", Formatting.bytes(info.usedBytes)])
    table.append(["map size", Formatting.bytes(info.mapSize)])
    context.console.print(table.rendered())
    var byType = Table(["TYPE", "EVENTS"], rightAligned: [1])
    for (type, count) in sortedTypes { byType.append([type, String(count)]) }
    context.console.print(byType.rendered(), terminator: "")
  }
}
