import EventLog
import Foundation
import Replication
import Sodium

/// `eventlog export`: the log, or the part of it a selection names, as JSON Lines in the `log
/// --json` format, each line with its record's chain value, and a manifest as the last line.
struct ExportCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "export",
    abstract: "Write the log (or the events the filters select) as JSON Lines with a manifest.",
    discussion: """
      Each line carries its record's chain value; the last line is the manifest: what the file holds, the \
      environment's device and its head's chain value, and a digest of the lines (`eventlog verify --export FILE` \
      checks a file against it, and `import` does before it stores anything). The filters are those of `log`. \
      `import` of a whole export into an empty environment, then `export`, gives the same event lines; the \
      layouts of the payloads travel with it, so that a build without the event types imports the same records. \
      A damaged record fails the export, naming it; with --salvage every readable event is written, the damaged \
      ones are named on standard error and in the manifest, and the command exits 1. With --output, the file \
      appears complete or not at all: it is written to a temporary file beside it (mode 0600), flushed and \
      renamed, and removed on a failure or an interrupt.
      """)

  @Option(
    "output", "FILE",
    help:
      "Write to FILE (absent or a regular file; not the environment's own) instead of standard output; - is standard output.",
    type: .nonEmpty("a file name (or - for standard output)"))
  var output: String?
  @Option(
    "stream", "ID", help: "Only events of this stream (a UUID in it in either case).", type: .streamID)
  var stream: StreamID?
  @Option("type", "NAME", help: "Only events of this type.")
  var type: String?
  @Option("device", "UUID", help: "Only events first recorded by this device.", type: .uuid)
  var device: UUID?
  @Option("origin", "NAME", help: "Only events whose metadata names this origin.")
  var origin: String?
  @Option("since", "T", help: "From this time (ISO 8601) or sequence number on.", type: .logPoint)
  var since: LogPoint?
  @Option("until", "T", help: "Up to this time (ISO 8601) or sequence number.", type: .logPoint)
  var until: LogPoint?
  @Option("from", "SEQ", help: "Start at this sequence number.", type: .sequence)
  var from: UInt64 = 1
  @Option("to", "SEQ", help: "Stop at this sequence number.", type: .sequence)
  var to: UInt64?
  @Flag("salvage", help: "Write every readable event past damaged records, name those, and exit 1.")
  var salvage: Bool

  /// The file to write, or `nil` for standard output.
  var outputFile: String? { output == "-" ? nil : output }

  func validate() throws(UsageError) {
    if let to, to < from { throw UsageError("'--to \(to)' is before '--from \(from)'") }
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let names = context.dependencies.streamNames
    // Through the head as it is now: events appended meanwhile are the next export's.
    let head = try store.head()
    let selection = EventSelection(
      stream: stream.map { names.stored($0.rawValue) }, type: type, device: device, origin: origin,
      since: since,
      until: until, from: from, to: min(to ?? head, head))
    try selection.validate(in: store, eventTypes: context.dependencies.eventTypes)
    if let stream, let hint = try selection.streamHint(in: store, given: stream.rawValue, streams: names) {
      throw CommandFailure(hint)
    }
    // The layouts recorded until now: every revision an event up to `head` recorded.
    let payloads = try store.payloadTranscoder()
    // The events the projections skip go out marked, so that an import keeps them skipped.
    let skipped = Dictionary(
      try store.skippedEvents().map { ($0.sequence, $0) }, uniquingKeysWith: { a, _ in a })
    let progress = ProgressReporter("export", console: context.console)
    let file = try outputFile.map { try OutputFile(path: $0, flag: "--output", environment: store.path) }
    let hasher = BLAKE2b256.Hasher()
    // What replication knows of each event (its server position, the owner): provenance a copy
    // keeps, so that it is checked against the server as the original is.
    let replica = try ReplicaProvenance(store)
    var buffer = ""
    var count = 0
    var first: UInt64?
    var lastExported: UInt64?
    var damaged: [UInt64] = []
    func emit(_ line: String) throws {
      if let file {
        buffer += line
        buffer += "\n"
        if buffer.utf8.count >= 1 << 16 {
          try file.write(buffer)
          buffer.removeAll(keepingCapacity: true)
        }
      } else {
        context.console.print(line)
        try context.console.checkOutput()  // a full disk: stop, do not read the rest of the log
      }
    }
    try selection.walk(store) { reading in
      switch reading {
      case .damaged(let sequence, let reason):
        guard salvage else {
          throw CommandFailure(
            "event \(sequence) is damaged (\(reason)); nothing was exported. 'eventlog export --salvage' writes every "
              + "readable event and names the damaged ones")
        }
        damaged.append(sequence)
        context.console.error("event \(sequence) is damaged and left out: \(TerminalText.escaped(reason))")
      case .event(let event):
        // The value the record was chained after, when the line before is not that record's.
        var previous: ChainValue?
        if event.sequence > 1 && lastExported != event.sequence - 1 {
          previous = try store.storedChainValue(at: event.sequence - 1)
        }
        let line = try EventJSON.line(
          event, payloads: payloads, streams: names, skipped: skipped[event.sequence],
          previousChain: previous,
          replica: replica)
        try emit(line)
        hasher.update(line.utf8)
        hasher.update(CollectionOfOne(UInt8(ascii: "\n")))
        count += 1
        if first == nil { first = event.sequence }
        lastExported = event.sequence
        if event.sequence % 4_096 == 0 { progress.update(completed: event.sequence, total: head) }
      }
      return true
    }
    let manifest = ExportManifest(
      tool: "eventlog \(EventLogProgram.version)", exportedAt: Date(), device: store.deviceID, events: count,
      first: first, last: lastExported, head: head,
      headChain: head == 0 ? nil : try store.storedChainValue(at: head),
      selection: self.selection.described, complete: self.selection.isEverything && damaged.isEmpty,
      damaged: damaged, digest: hasher.finalize())
    try emit(manifest.rendered)
    if let file {
      try file.write(buffer)
      try file.commit()
      context.console.error("exported \(count) events to \(TerminalText.escaped(file.path))")
    }
    progress.finish()
    if !damaged.isEmpty {
      throw CommandFailure(
        "exported \(count) readable events; \(damaged.count) damaged record(s) left out (events "
          + damaged.prefix(20).map(String.init).joined(separator: ", ") + (damaged.count > 20 ? ", …" : "")
          + ")")
    }
  }

  /// The selection the options name.
  var selection: EventSelection {
    EventSelection(
      stream: stream, type: type, device: device, origin: origin, since: since, until: until, from: from,
      to: to)
  }
}

/// `eventlog import`: JSON Lines from `export` into an empty environment.
struct ImportCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "import", abstract: "Load JSON Lines written by export into an empty environment.",
    discussion: """
      The whole input is validated before anything is appended: JSON, fields, sequence 1, 2, 3…, stream \
      versions, unique IDs, and against the export's manifest: every line matches its record's chain value, \
      the lines their digest, the last one the head the manifest names. A line that does not fails the import \
      naming it, and nothing is appended; a file without a manifest is refused unless --unverified is given. \
      Only a whole log imports (a filtered or salvaged export is for `eventlog verify --export`). Each \
      event is then judged as a pulled one is: one the domain's rules or the projections do not admit, or \
      whose payload this build does not read, is stored and kept out of the projections (standard error \
      names it; 'eventlog verify' lists it), so that a backup restores whatever its log held.
      """)

  @Argument("FILE", help: "The file (or FIFO, /dev/stdin) to read, or - for standard input.")
  var file: String
  @Flag(
    "unverified",
    help:
      "Import a file without a manifest (an export by a build before format 5), or one that does not match it."
  )
  var unverified: Bool

  /// The error for input that is not UTF-8, naming its first such line.
  static func invalidUTF8(in data: Data) -> CommandFailure {
    let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    let index = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
    return CommandFailure("line \(index + 1): not valid UTF-8")
  }

  func run(_ context: CommandContext) async throws {
    // A file, a FIFO, a pipe, /dev/stdin or - (standard input).
    let data = try InputReader.read(file)
    // Not String(decoding:), which would replace invalid bytes and import altered text.
    guard let text = String(validating: data, as: UTF8.self) else { throw Self.invalidUTF8(in: data) }
    let progress = ProgressReporter("import", console: context.console)
    let names = context.dependencies.streamNames
    let export = try ExportFile.read(
      text, eventTypes: context.dependencies.eventTypes, streams: names, progress: progress)
    progress.finish()
    // The file against its manifest, before anything is stored.
    var checked: String
    if unverified {
      checked =
        export.manifest == nil
        ? "without a manifest: nothing checked the lines against the export that wrote them (--unverified)"
        : "without checking them against the file's manifest (--unverified)"
    } else {
      guard let manifest = export.manifest else {
        throw CommandFailure(
          "'\(file)' has no manifest (its last line): an export by a build before format 5, or one cut short; "
            + "'--unverified' imports it without the check")
      }
      if let problem = export.problems().first {
        throw CommandFailure(
          "\(problem); nothing was imported ('eventlog verify --export' lists every problem)")
      }
      guard manifest.complete else {
        let what =
          manifest.damaged.isEmpty
          ? "the events " + manifest.selection.map { "--\($0.0) \($0.1)" }.joined(separator: " ") + " select"
          : "every readable event but \(manifest.damaged.count) damaged one(s)"
        throw CommandFailure(
          "'\(file)' holds part of a log (\(what)): 'eventlog verify --export' checks it; import takes a whole log"
        )
      }
      checked =
        "checked against the export's manifest: chain head event \(manifest.head) \(manifest.headChain?.hex ?? "-")"
    }
    var events: [EventStore.IngestedEvent] = []
    var lineNumbers: [Int] = []
    var count: UInt64 = 0
    var versions: [StreamID: UInt64] = [:]
    var ids = Set<UUID>()
    for item in export.entries {
      let number = item.number
      let entry = item.line
      guard entry.sequence == count + 1 else {
        throw CommandFailure("line \(number): 'seq' is \(entry.sequence), expected \(count + 1)")
      }
      let expected = (versions[entry.stream] ?? 0) + 1
      guard entry.version == expected else {
        throw CommandFailure(
          "line \(number): stream '\(names.displayed(entry.stream))' 'version' is \(entry.version), expected \(expected)"
        )
      }
      guard ids.insert(entry.event.id).inserted else {
        throw CommandFailure(
          "line \(number): event id \(entry.event.id.lowercasedString) appears twice")
      }
      versions[entry.stream] = entry.version
      count += 1
      events.append(
        EventStore.IngestedEvent(
          stream: entry.stream, event: entry.event, skipped: entry.skipped, provenance: entry.provenance))
      lineNumbers.append(number)
    }
    guard count > 0 else { throw CommandFailure("'\(file)' holds no events") }
    let store = try context.openStore(.create)
    let head = try store.head()
    guard head == 0 else {
      throw CommandFailure(
        "'\(context.databasePath)' already holds \(head) events; import needs an empty environment")
    }
    // One transaction, into a log still empty: the import is stored whole or not at all. The
    // store judges each event as it judges a pulled one: the domain's rules (`Docs/Domain.md`),
    // then the projections; one they do not admit is stored and skipped, so that a backup of a
    // log restores whatever that log held. (An event its file marks skipped stays skipped so.)
    let outcomes: [EventStore.IngestOutcome]
    do {
      // What the export said of the server (each event's position, the owner) is kept with the
      // events, in the same transaction.
      let positions = zip(1..., export.entries).compactMap { sequence, entry in
        entry.line.serverPosition.map { (sequence: UInt64(sequence), position: $0) }
      }
      let owner = export.entries.lazy.compactMap(\.line.owner).first
      let provenance = LocalReplica.importedProvenance(positions: positions, owner: owner)
      outcomes = try await store.ingest(events, expectingHead: 0, allOrNothing: true) { _ in provenance }
    } catch EventStoreError.unexpectedHead(_, _, let actual) {
      throw CommandFailure(
        "'\(context.databasePath)' received \(actual) events from another process meanwhile; nothing was imported"
      )
    }
    var skipped = 0
    var judgedHere: [String] = []
    for ((event, outcome), number) in zip(zip(events, outcomes), lineNumbers) {
      guard case .skipped(let sequence, let kind, let reason) = outcome else { continue }
      skipped += 1
      // What the file said already is no news; what this build decided is.
      if let mark = event.skipped, mark.kind == kind, mark.reason == reason { continue }
      judgedHere.append(
        "line \(number): event \(event.event.id.lowercasedString) (seq \(sequence)) is kept but not projected "
          + "(\(EventJSON.name(of: kind))): \(UUIDText.lowercased(reason))")
    }
    for note in judgedHere.prefix(Self.reportedSkips) { context.console.error(TerminalText.escaped(note)) }
    if judgedHere.count > Self.reportedSkips {
      context.console.error(
        "… and \(judgedHere.count - Self.reportedSkips) more ('eventlog verify' lists them)")
    }
    context.console.print(
      "imported \(count) events"
        + (skipped > 0 ? " (\(skipped) kept but not projected: 'eventlog verify' lists them)" : "")
        + ", \(checked)")
  }

  /// How many events skipped by this import's own verdict it names on standard error.
  static let reportedSkips = 20
}
