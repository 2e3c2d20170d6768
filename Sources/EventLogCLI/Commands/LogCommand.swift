import EventLog
import Foundation
import Replication

/// `eventlog log`: the audit trail, filtered by sequence or time, stream, type, origin device or
/// origin, in log order or newest first, read without loading the log whole.
struct LogCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "log", abstract: "Show the audit trail: events with their provenance, oldest first.",
    discussion: """
      The filters combine: --since and --until take an ISO 8601 time or a sequence number, and with --from and \
      --to bound the range; --device, --stream and times are answered by the log's indexes, not a scan. On a \
      terminal, without a filter, a range or a count, it shows the newest page and says how to see more. A \
      damaged record is shown as such, in its place, and the others after it still are; the command then exits 1.
      """)

  /// How many events the newest page on a terminal shows.
  static let terminalPage = 40

  @Flag(
    "json",
    help:
      #"One JSON object per line (the export format, with "serverPosition" and "owner" where known; an event the server refused adds "rejected"; a damaged record is {"seq", "damaged"})."#
  )
  var json: Bool
  @Option(
    "stream", "ID", help: "Only events of this stream (a UUID in it in either case).", type: .streamID)
  var stream: StreamID?
  @Option(
    "type", "NAME", help: "Only events of this type (a type neither the log nor this build knows is refused)."
  )
  var type: String?
  @Option("device", "UUID", help: "Only events first recorded by this device.", type: .uuid)
  var device: UUID?
  @Option("origin", "NAME", help: "Only events whose metadata names this origin (cli, sync, …).")
  var origin: String?
  @Option("since", "T", help: "From this time (ISO 8601) or sequence number on.", type: .logPoint)
  var since: LogPoint?
  @Option("until", "T", help: "Up to this time (ISO 8601) or sequence number.", type: .logPoint)
  var until: LogPoint?
  @Option("from", "SEQ", help: "Start at this sequence number.", type: .sequence)
  var from: UInt64 = 1
  @Option("to", "SEQ", help: "Stop at this sequence number.", type: .sequence)
  var to: UInt64?
  @Option("last", "N", help: "Only the newest N events selected.", type: .integer(in: 1...Int.max))
  var last: Int?
  @Flag("reverse", help: "Newest first.")
  var reverse: Bool
  @Flag(
    "server-order",
    help:
      "In the order of the owner's log on the server (every device that pulled shows the same), then the events the server does not hold yet, in this log's order."
  )
  var serverOrder: Bool
  @Option("limit", "N", help: "Show at most N events.", type: .integer(in: 0...Int.max))
  var limit: Int?

  func validate() throws(UsageError) {
    if let to, to < from {
      throw UsageError("'--to \(to)' is before '--from \(from)'")
    }
    if case .sequence(let first) = since, case .sequence(let last) = until, last < first {
      throw UsageError("'--until \(last)' is before '--since \(first)'")
    }
    if case .time(let first) = since, case .time(let last) = until, last < first {
      throw UsageError("'--until' is before '--since'")
    }
  }

  var selection: EventSelection {
    EventSelection(
      stream: stream, type: type, device: device, origin: origin, since: since, until: until, from: from,
      to: to)
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let names = context.dependencies.streamNames
    var selection = self.selection
    selection.stream = stream.map { names.stored($0.rawValue) }
    try selection.validate(in: store, eventTypes: context.dependencies.eventTypes)
    if let stream, let hint = try selection.streamHint(in: store, given: stream.rawValue, streams: names) {
      throw CommandFailure(hint)
    }
    let head = try store.head()
    // A terminal and no question asked: the newest page, and how to see more.
    var newest = last
    if newest == nil && limit == nil && !json && selection.isEverything && context.console.outputIsTerminal
      && head > UInt64(Self.terminalPage)
    {
      newest = Self.terminalPage
      context.console.error(
        "the newest \(Self.terminalPage) of \(head) events; see others with --last N, --from SEQ, --since T or "
          + "--limit N, or all of them through a pipe")
    }
    let printer = try EventPrinter(
      context: context, store: store, json: json, head: head, showsPosition: serverOrder)
    let limit = self.limit ?? .max
    var damaged: [UInt64] = []
    var shown = 0
    func show(_ reading: EventStore.RecordReading) throws {
      try context.console.checkOutput()  // standard output failed (a full disk): stop reading the log
      if case .damaged(let sequence, _) = reading { damaged.append(sequence) }
      try printer.print(reading)
      shown += 1
    }
    if serverOrder {
      // The server's order: every event this device knows a server position of, by position,
      // then the others (not pushed yet) in this log's order.
      let replica = LocalReplica(store: store)
      let (low, high) = selection.sequenceRange
      let indexed = try selection.indexed(in: store).map(Set.init)
      func selectedSequence(_ sequence: UInt64) -> Bool {
        sequence >= low && sequence <= high && (indexed?.contains(sequence) ?? true)
      }
      var order = try replica.serverOrder().map(\.sequence).filter(selectedSequence)
      let placed = Set(order)
      try store.forEachRecord(from: low, through: high == .max ? nil : high) { reading in
        if !placed.contains(reading.sequence) && selectedSequence(reading.sequence) {
          order.append(reading.sequence)
        }
        return true
      }
      var found: [EventStore.RecordReading] = []
      try store.forEachRecord(at: order) { reading in
        if case .event(let event) = reading, !selection.matches(event) { return true }
        found.append(reading)
        return true
      }
      if let newest { found = Array(found.suffix(newest)) }
      if reverse { found.reverse() }
      for reading in found.prefix(limit) { try show(reading) }
    } else if let newest {
      // The newest N, newest first from the end, then shown in the order asked.
      var found: [EventStore.RecordReading] = []
      try selection.walk(store, backward: true) { reading in
        found.append(reading)
        return found.count < newest
      }
      for reading in (reverse ? found : found.reversed()).prefix(limit) { try show(reading) }
    } else if limit > 0 {
      try selection.walk(store, backward: reverse) { reading in
        try show(reading)
        return shown < limit
      }
    }
    printer.finish()
    if !json && shown == 0 { context.console.error("no events match") }
    if let first = damaged.first {
      throw CommandFailure(
        "\(damaged.count) damaged record(s) among those shown (the first: event \(first)); "
          + "`eventlog verify` lists every problem, `eventlog export --salvage` writes every readable event")
    }
  }
}

/// How `log` prints events: a line of fixed columns each (one header for the whole listing), or
/// one JSON object each, with their provenance.
struct EventPrinter {
  let context: CommandContext
  let store: EventStore
  let json: Bool
  let payloads: PayloadTranscoder
  let skipped: [UInt64: EventStore.SkippedEvent]
  let rejected: [UInt64: String]
  let provenance: ReplicaProvenance
  let columns: FixedColumns
  private let headerPrinted = HeaderState()

  /// Whether the header line was printed (a class: the printer is passed around by value).
  final class HeaderState { var printed = false }

  /// Whether rows show each event's server position (`log --server-order`).
  let showsPosition: Bool

  init(
    context: CommandContext, store: EventStore, json: Bool, head: UInt64, showsPosition: Bool = false
  ) throws {
    self.showsPosition = showsPosition
    self.context = context
    self.store = store
    self.json = json
    payloads = try store.payloadTranscoder()
    // The events the projections skip: their lines say so, as export's do.
    skipped = Dictionary(try store.skippedEvents().map { ($0.sequence, $0) }, uniquingKeysWith: { a, _ in a })
    provenance = try ReplicaProvenance(store)
    // The events the replication server refused (usually none), shown with their reason.
    rejected = Dictionary(
      try provenance.replica.rejections().map { ($0.sequence, UUIDText.lowercased($0.reason)) },
      uniquingKeysWith: { first, _ in first })
    let width = max(3, String(head).count)
    columns = FixedColumns(columns: [
      .init(header: "SEQ", width: width, rightAligned: true),
      .init(header: "POS", width: showsPosition ? width : -1, rightAligned: true),
      .init(header: "RECORDED AT", width: 27),
      .init(header: "DEVICE", width: 8),
      .init(header: "STREAM", width: 44),
      .init(header: "VER", width: 4, rightAligned: true),
      .init(header: "TYPE", width: 22),
      .init(header: "PAYLOAD", width: 0),
    ])
  }

  /// Prints one record.
  func print(_ reading: EventStore.RecordReading) throws {
    let console = context.console
    switch reading {
    case .damaged(let sequence, let reason):
      if json {
        console.print(
          JSONValue.object([("seq", .uint(sequence)), ("damaged", .string(UUIDText.lowercased(reason)))])
            .rendered())
      } else {
        printHeader()
        console.print(columns.line([String(sequence), "", "DAMAGED", "", "", "", "", reason]))
      }
    case .event(let event):
      let rejection = rejected.isEmpty ? nil : rejected[event.sequence]
      if json {
        var extra: [(String, JSONValue)] = []
        if let rejection { extra.append(("rejected", .string(rejection))) }
        let value = EventJSON.value(
          event, payloads: payloads, streams: context.dependencies.streamNames,
          skipped: skipped[event.sequence], replica: provenance)
        guard case .object(let members) = value else { return }
        console.print(JSONValue.object(members + extra).rendered())
      } else {
        printHeader()
        let summary = EventJSON.summary(event, payloads: payloads)
        console.print(
          columns.line([
            String(event.sequence), provenance.position(event.sequence).map(String.init) ?? "-",
            ISO8601.string(from: event.recordedAt),
            event.provenance.map { String($0.device.lowercasedString.prefix(8)) } ?? "-",
            context.dependencies.streamNames.displayed(event.stream), String(event.version), event.type,
            rejection.map { "[rejected by the server: \($0)] \(summary)" } ?? summary,
          ]))
      }
    }
  }

  private func printHeader() {
    guard !headerPrinted.printed else { return }
    headerPrinted.printed = true
    context.console.print(columns.header)
  }

  /// Ends the listing.
  func finish() {}
}

/// `eventlog show SEQ|EVENT-ID`: one event in full, with its provenance.
struct ShowCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "show", abstract: "Show one event in full, with its provenance (by sequence number or event ID).")

  @Argument(
    "SEQ|EVENT-ID", help: "The event's sequence number, or its event ID (a UUID).", type: .eventReference)
  var reference: EventReference
  @Flag("json", help: "As one JSON object (the log format).")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let sequence: UInt64
    switch reference {
    case .sequence(let number): sequence = number
    case .id(let id):
      guard let found = try store.sequence(ofEventID: id) else {
        throw CommandFailure("no event with ID \(id.lowercasedString) in the log")
      }
      sequence = found
    }
    let head = try store.head()
    var reading: EventStore.RecordReading?
    try store.forEachRecord(from: sequence, through: sequence) {
      reading = $0; return false
    }
    guard let reading, reading.sequence == sequence else {
      throw CommandFailure("no event \(sequence) (the log's head is \(head))")
    }
    if json {
      try EventPrinter(context: context, store: store, json: true, head: head).print(reading)
      if case .damaged(_, let reason) = reading {
        throw CommandFailure("event \(sequence) is damaged: \(reason)")
      }
      return
    }
    guard case .event(let event) = reading else {
      if case .damaged(_, let reason) = reading {
        context.console.print("seq      \(sequence)\ndamaged  \(reason)")
        throw CommandFailure("event \(sequence) is damaged: \(reason)")
      }
      return
    }
    let payloads = try store.payloadTranscoder()
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
    } else if let position = try replica.position(ofLocalSequence: sequence) {
      table.append(["server", "position \(position) (this device pushed it)"])
    }
    if let owner = try replica.owner() { table.append(["owner", owner]) }
    if let rejection = try replica.rejections().first(where: { $0.sequence == sequence }) {
      table.append(["rejected", "by the server: \(UUIDText.lowercased(rejection.reason))"])
    }
    table.append(["payload", payload])
    context.console.print(table.rendered(), terminator: "")
  }
}

/// An event as a command line names it: its sequence number or its event ID.
enum EventReference: Sendable, Equatable {
  case sequence(UInt64)
  case id(UUID)
}

extension ArgumentType where Value == EventReference {
  /// A sequence number (digits) or an event ID (a UUID, in either case).
  static var eventReference: ArgumentType {
    .parsing(expected: "a sequence number or an event ID (a UUID)") { text in
      if let id = UUID(uuidString: text) { return .id(id) }
      return UInt64(text).flatMap { $0 >= 1 ? .sequence($0) : nil }
    }
  }
}
