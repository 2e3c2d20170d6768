import EventLog
import Foundation
import Replication

/// `eventlog log`: the audit trail, filtered, paged through without loading the log whole.
struct LogCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "log", abstract: "Show the audit trail: every event, oldest first.")

  @Flag(
    "json",
    help: #"One JSON object per line (the export format; an event the server refused adds "rejected")."#)
  var json: Bool
  @Option("stream", "ID", help: "Only events of this stream (a UUID in it in either case).", type: .streamID)
  var stream: StreamID?
  @Option("type", "NAME", help: "Only events of this type.")
  var type: String?
  @Option("from", "SEQ", help: "Start at this sequence number.", type: .sequence)
  var from: UInt64 = 1
  @Option("to", "SEQ", help: "Stop at this sequence number.", type: .sequence)
  var to: UInt64?
  @Option("limit", "N", help: "Show at most N events.", type: .integer(in: 0...Int.max))
  var limit: Int = .max

  func validate() throws(UsageError) {
    if let to, to < from {
      throw UsageError("'--to \(to)' is before '--from \(from)'")
    }
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let payloads = try store.payloadTranscoder()
    // The events the projections skip: their lines say so, as export's do.
    let skipped = Dictionary(
      try store.skippedEvents().map { ($0.sequence, $0) }, uniquingKeysWith: { a, _ in a })
    let console = context.console
    // The events the replication server refused (usually none), shown with their reason.
    let rejected = Dictionary(
      try LocalReplica(store: store).rejections().map {
        ($0.sequence, UUIDText.lowercased($0.reason))
      }, uniquingKeysWith: { first, _ in first })
    var shown = 0
    var page = Table(["SEQ", "RECORDED AT", "STREAM", "VER", "TYPE", "PAYLOAD"], rightAligned: [0, 3])
    func flushPage() {
      if !page.rows.isEmpty { console.print(page.rendered(), terminator: "") }
      page.rows.removeAll()
    }
    let visit: (RecordedEvent) throws -> Bool = { event in
      try console.checkOutput()  // standard output failed (a full disk): stop reading the log
      guard shown < limit else { return false }
      if let to, event.sequence > to { return false }
      guard event.sequence >= from, type.map({ $0 == event.type }) ?? true else { return true }
      shown += 1
      let rejection = rejected.isEmpty ? nil : rejected[event.sequence]
      if json {
        let line = try EventJSON.line(
          event, payloads: payloads, streams: context.dependencies.streamNames,
          skipped: skipped[event.sequence])
        if let rejection, line.hasSuffix("}") {
          console.print(line.dropLast() + #","rejected":"# + JSONValue.string(rejection).rendered() + "}")
        } else {
          console.print(line)
        }
      } else {
        let summary = EventJSON.summary(event, payloads: payloads)
        page.append([
          String(event.sequence), ISO8601.string(from: event.recordedAt),
          context.dependencies.streamNames.displayed(event.stream),
          String(event.version), event.type,
          rejection.map { "[rejected by the server: \($0)] \(summary)" } ?? summary,
        ])
        if page.rows.count == 1_000 { flushPage() }
      }
      return true
    }
    if let stream = stream.map({ context.dependencies.streamNames.stored($0.rawValue) }) {
      var nextVersion: UInt64 = 1
      walk: while true {
        let events = try store.events(in: stream, fromVersion: nextVersion, limit: 1_000)
        for event in events {
          if try !visit(event) { break walk }
        }
        guard let last = events.last, events.count == 1_000 else { break }
        nextVersion = last.version + 1
      }
    } else {
      try store.forEachEvent(from: from, through: to, visit)
    }
    flushPage()
    if !json && shown == 0 { context.console.error("no events match") }
  }
}

/// `eventlog show SEQ`: one event in full.
struct ShowCommand: CLICommand {
  static let configuration = CommandConfiguration(name: "show", abstract: "Show one event in full.")

  @Argument("SEQ", help: "The event's sequence number.", type: .sequence)
  var sequence: UInt64
  @Flag("json", help: "As one JSON object (the log format).")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    guard let event = try store.event(at: sequence) else {
      throw CommandFailure("no event \(sequence) (the log's head is \(try store.head()))")
    }
    let payloads = try store.payloadTranscoder()
    if json {
      let skipped = try store.skippedEvents().first { $0.sequence == event.sequence }
      context.console.print(
        try EventJSON.line(
          event, payloads: payloads, streams: context.dependencies.streamNames, skipped: skipped))
      return
    }
    let rendered = payloads.json(of: event)
    let payload =
      rendered.form == .binary
      ? "(\(event.payload.count) bytes, type not known to this build)"
      : String(decoding: rendered.json, as: UTF8.self)
    var table = Table(["FIELD", "VALUE"])
    table.append(["seq", String(event.sequence)])
    table.append(["id", event.id.lowercasedString])
    table.append(["stream", context.dependencies.streamNames.displayed(event.stream)])
    table.append(["version", String(event.version)])
    table.append(["type", "\(event.type) (schema \(event.schemaVersion))"])
    table.append(["recordedAt", ISO8601.string(from: event.recordedAt)])
    table.append(["correlationId", event.metadata.correlationID?.lowercasedString ?? "-"])
    table.append(["causationId", event.metadata.causationID?.lowercasedString ?? "-"])
    table.append(["origin", event.metadata.origin.isEmpty ? "-" : event.metadata.origin])
    table.append([
      "device",
      event.provenance.map { "\($0.device.lowercasedString) (its seq \($0.sequence))" }
        ?? "unknown (stored before environment format 5)",
    ])
    table.append(["chain", event.chain?.hex ?? "- (stored before environment format 5)"])
    let replica = LocalReplica(store: store)
    if let pulled = try replica.origin(ofLocalSequence: sequence) {
      table.append([
        "pulled",
        "server position \(pulled.position), from device \(pulled.device.lowercasedString) (its seq \(pulled.sequence))",
      ])
    }
    if let rejection = try replica.rejections().first(where: { $0.sequence == sequence }) {
      table.append(["rejected", "by the server: \(UUIDText.lowercased(rejection.reason))"])
    }
    table.append(["payload", payload])
    context.console.print(table.rendered(), terminator: "")
  }
}
