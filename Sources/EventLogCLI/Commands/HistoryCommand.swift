import EventLog
import Foundation

/// `eventlog history STREAM`: one entity step by step, each of its events with who recorded it
/// and when, and what folding it changed in the projections (fields old → new).
struct HistoryCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "history",
    abstract: "Step through one stream: each event, by whom and when, and the fields it changed (old → new).",
    discussion: """
      Replays the log up to the stream's last event and notes, for each of the stream's events, what folding it \
      changed in every projection: an entry added (its fields), changed (the fields that differ, old → new) or \
      removed. A row shows its fields when its type is Encodable, else its bytes in hex; indexes are left out.
      """)

  @Argument("STREAM", help: "The stream's name (a UUID in it in either case).", type: .streamID)
  var stream: StreamID
  @Flag(
    "json",
    help:
      #"As one object {"stream", "events": [{"seq", "id", "version", "type", "recordedAt", "device", "deviceSeq", "origin", "changes": [...]}]}."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let names = context.dependencies.streamNames
    let stored = names.stored(stream.rawValue)
    let selection = EventSelection(stream: stored)
    if let hint = try selection.streamHint(
      in: store, given: stream.rawValue, streams: names, usage: "give the whole name")
    {
      throw CommandFailure(hint)
    }
    var events: [RecordedEvent] = []
    var next: UInt64 = 1
    while true {
      let page = try store.events(in: stored, fromVersion: next, limit: 4_096)
      events += page
      guard page.count == 4_096, let last = page.last else { break }
      next = last.version + 1
    }
    let progress = ProgressReporter("history", console: context.console)
    // Personal values show opened with this environment's keys, or null where erased.
    let steps = try SubjectKeyring.$shown.withValue(try store.keyring()) {
      try store.projectionChanges(ofEvents: events.map(\.sequence)) {
        progress.update(completed: $0.completed, total: $0.total)
      }
    }
    progress.finish()
    let changes = Dictionary(steps.map { ($0.sequence, $0.changes) }, uniquingKeysWith: { a, _ in a })
    let displayed = names.displayed(stored)
    if json {
      let items = events.map { event in
        JSONValue.object([
          ("seq", .uint(event.sequence)),
          ("id", .string(event.id.lowercasedString)),
          ("version", .uint(event.version)),
          ("type", .string(event.type)),
          ("recordedAt", .string(ISO8601.string(from: event.recordedAt))),
          ("device", .optional(event.provenance?.device.lowercasedString)),
          ("deviceSeq", event.provenance.map { JSONValue.uint($0.sequence) } ?? .null),
          ("origin", .string(event.metadata.origin)),
          ("changes", .array((changes[event.sequence] ?? []).map(RowChangeOutput.json))),
        ])
      }
      context.console.print(
        JSONValue.object([("stream", .string(displayed)), ("events", .array(items))]).rendered())
      return
    }
    let count = events.count == 1 ? "1 event" : "\(events.count) events"
    context.console.print("\(displayed): \(count)")
    for event in events {
      context.console.print("")
      context.console.print(
        "seq \(event.sequence)  \(ISO8601.string(from: event.recordedAt))  \(event.type) (version \(event.version))  "
          + Self.provenance(of: event, thisDevice: store.deviceID))
      let stepChanges = changes[event.sequence] ?? []
      if stepChanges.isEmpty {
        context.console.print("  no projection changed")
      }
      for change in stepChanges {
        for line in RowChangeOutput.lines(change, indent: 2) { context.console.print(line) }
      }
    }
  }

  /// `by device 1f2e3d4c-… (its seq 12), origin cli`, `this device` for this environment's own.
  static func provenance(of event: RecordedEvent, thisDevice: UUID?) -> String {
    let origin = event.metadata.origin.isEmpty ? "" : ", origin \(event.metadata.origin)"
    guard let provenance = event.provenance else { return "by an unknown device\(origin)" }
    let mine = provenance.device == thisDevice ? " (this device)" : ""
    return "by device \(provenance.device.lowercasedString)\(mine), its seq \(provenance.sequence)\(origin)"
  }
}
