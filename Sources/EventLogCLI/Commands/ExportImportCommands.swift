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
      The whole input is validated (JSON, fields, sequence 1, 2, 3…, stream versions, payloads) before \
      anything is appended; an invalid line fails the import naming the line, and nothing is appended.
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
      // The domain's rules (`Docs/Domain.md`): an event that breaks them is refused; one this
      // build cannot read (a newer app's, pulled before the backup) is stored and skipped, and
      // so is one its log skipped as invalid or refused (the export marks it: a pull kept it
      // there, so the backup keeps it too).
      let keptSkipped = entry.skipped.map { $0.kind != .unreadable } ?? false
      // A payload stored as JSON is judged by the store, in its binary form, as a pull's is.
      if !keptSkipped, entry.event.payloadEncoding == .binary, let admission = context.dependencies.admission
      {
        let recorded = RecordedEvent(
          sequence: entry.sequence, id: entry.event.id, stream: entry.stream, version: entry.version,
          type: entry.event.type, schemaVersion: entry.event.schemaVersion,
          recordedAt: entry.event.recordedAt ?? Date(), metadata: entry.event.metadata,
          payload: entry.event.payload)
        if case .invalid(let reason) = admission.verdict(for: recorded) {
          throw CommandFailure(
            "line \(number): event \(entry.event.id.lowercasedString) (seq \(entry.sequence)) breaks the domain's rules: \(reason)"
          )
        }
      }
      versions[entry.stream] = entry.version
      count += 1
      events.append(
        EventStore.IngestedEvent(stream: entry.stream, event: entry.event, skipped: entry.skipped))
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
    // One transaction, into a log still empty: the import is stored whole or not at all.
    let outcomes: [EventStore.IngestOutcome]
    do {
      outcomes = try await store.ingest(events, expectingHead: 0, allOrNothing: true)
    } catch EventStoreError.unexpectedHead(_, _, let actual) {
      throw CommandFailure(
        "'\(context.databasePath)' received \(actual) events from another process meanwhile; nothing was imported"
      )
    }
    let skipped = outcomes.filter { if case .skipped = $0 { true } else { false } }.count
    context.console.print(
      "imported \(count) events"
        + (skipped > 0 ? " (\(skipped) that this build cannot read are kept, not projected)" : ""))
  }
}
