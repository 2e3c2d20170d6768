import EventLog
import Foundation

/// `eventlog export`: the whole log as JSON Lines, in the `log --json` format.
struct ExportCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "export", abstract: "Write the whole log as JSON Lines (the log --json format).",
    discussion: """
      `import` of the output into an empty environment, then `export`, gives the same bytes; the layouts of \
      the payloads travel with it, so that a build without the event types imports the same records. With \
      --output, the file appears complete or not at all: it is written to a temporary file beside it (mode 0600), \
      flushed and renamed, and removed on a failure or an interrupt.
      """)

  @Option(
    "output", "FILE",
    help:
      "Write to FILE (absent or a regular file; not the environment's own) instead of standard output; - is standard output.",
    type: .nonEmpty("a file name (or - for standard output)"))
  var output: String?

  /// The file to write, or `nil` for standard output.
  var outputFile: String? { output == "-" ? nil : output }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let head = try store.head()
    // The layouts recorded until now: every revision an event up to `head` recorded.
    let payloads = try store.payloadTranscoder()
    // The events the projections skip go out marked, so that an import keeps them skipped.
    let skipped = Dictionary(
      try store.skippedEvents().map { ($0.sequence, $0) }, uniquingKeysWith: { a, _ in a })
    let progress = ProgressReporter("export", console: context.console)
    let file = try outputFile.map { try OutputFile(path: $0, environment: store.path) }
    var buffer = ""
    try store.forEachEvent(through: head) { event in
      let line = try EventJSON.line(
        event, payloads: payloads, streams: context.dependencies.streamNames, skipped: skipped[event.sequence]
      )
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
      if event.sequence % 4_096 == 0 { progress.update(completed: event.sequence, total: head) }
      return true
    }
    if let file {
      try file.write(buffer)
      try file.commit()
      context.console.error("exported \(head) events to \(TerminalText.escaped(file.path))")
    }
    progress.finish()
  }
}

/// `eventlog import`: JSON Lines from `export` into an empty environment.
struct ImportCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "import", abstract: "Load JSON Lines written by export into an empty environment.",
    discussion: """
      The whole input is validated (JSON, fields, sequence 1, 2, 3…, stream versions, unique IDs) before \
      anything is appended; an invalid line fails the import naming the line, and nothing is appended. Each \
      event is then judged as a pulled one is: one the domain's rules or the projections do not admit, or \
      whose payload this build does not read, is stored and kept out of the projections (standard error \
      names it; 'eventlog verify' lists it), so that a backup restores whatever its log held.
      """)

  @Argument("FILE", help: "The file (or FIFO, /dev/stdin) to read, or - for standard input.")
  var file: String

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
    // Split on the byte: splitting the String splits on Characters, which is several times
    // slower and keeps "\r\n" (one Character) together.
    let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .map(Substring.init)
    // The layouts the file carries, line by line; only those are recorded (not ones this build
    // would learn from its types), so that `export` gives the same lines again.
    var payloads = PayloadTranscoder(eventTypes: context.dependencies.eventTypes)
    payloads.infersLayouts = false
    // Validate everything before appending anything.
    let progress = ProgressReporter("import", console: context.console)
    var events: [EventStore.IngestedEvent] = []
    var lineNumbers: [Int] = []
    var count: UInt64 = 0
    var versions: [StreamID: UInt64] = [:]
    var ids = Set<UUID>()
    for (index, line) in lines.enumerated() {
      if line.isEmpty && index == lines.count - 1 { break }
      let number = index + 1
      let offset = text.utf8.distance(from: text.utf8.startIndex, to: line.startIndex)
      let entry = try EventJSON.parse(
        line, number: number, offset: offset, payloads: &payloads, streams: context.dependencies.streamNames)
      guard entry.sequence == count + 1 else {
        throw CommandFailure("line \(number): 'seq' is \(entry.sequence), expected \(count + 1)")
      }
      let expected = (versions[entry.stream] ?? 0) + 1
      guard entry.version == expected else {
        throw CommandFailure(
          "line \(number): stream '\(context.dependencies.streamNames.displayed(entry.stream))' 'version' is \(entry.version), expected \(expected)"
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
      if count % 4_096 == 0 { progress.update(completed: UInt64(index + 1), total: UInt64(lines.count)) }
    }
    progress.finish()
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
      outcomes = try await store.ingest(events, expectingHead: 0, allOrNothing: true)
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
        + (skipped > 0 ? " (\(skipped) kept but not projected: 'eventlog verify' lists them)" : ""))
  }

  /// How many events skipped by this import's own verdict it names on standard error.
  static let reportedSkips = 20
}
