import EventLog
import Foundation

/// `eventlog diff A B`: what each projection's entries gained, lost and changed between two
/// points of the log, each a sequence number or a time.
struct DiffCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "diff",
    abstract: "Show what each projection gained, lost and changed between two points of the log.",
    discussion: """
      A and B are sequence numbers or ISO 8601 times. A time stands for the log as it stood when it held only \
      events recorded by then: up to the event before the first one recorded later (the same point as \
      replay --at). Events recorded by then that reached this log later (pulled after newer ones) are named in a \
      note; give a sequence number to include them. With A after B the changes read from A back to B.
      """)

  @Argument(
    "A", help: "The first point: a sequence number (0: the empty log) or an ISO 8601 time.", type: .diffPoint)
  var from: LogPoint
  @Argument("B", help: "The second point, likewise.", type: .diffPoint)
  var to: LogPoint
  @Flag(
    "json",
    help:
      #"As one object {"from", "to", "fromSeq", "toSeq", "changes": [{"projection", "table", "key", "change", "before", "after", "changedFields"}]}."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let first = try Self.resolve(from, argument: "A", in: store, console: context.console)
    let second = try Self.resolve(to, argument: "B", in: store, console: context.console)
    let progress = ProgressReporter("diff", console: context.console)
    let report: (EventStore.ProgressReport) -> Void = {
      progress.update(completed: $0.completed, total: $0.total)
    }
    // Personal values show opened with this environment's keys, or null where erased.
    var changes = try SubjectKeyring.$shown.withValue(try store.keyring()) {
      try store.projectionChanges(from: min(first, second), to: max(first, second), progress: report)
    }
    progress.finish()
    if first > second {
      changes = changes.map { change in
        var reversed = change
        reversed.before = change.after
        reversed.after = change.before
        return reversed
      }
    }
    if json {
      context.console.print(
        JSONValue.object([
          ("from", .string(Self.text(from))),
          ("to", .string(Self.text(to))),
          ("fromSeq", .uint(first)),
          ("toSeq", .uint(second)),
          ("changes", .array(changes.map(RowChangeOutput.json))),
        ]).rendered())
      return
    }
    let span = first == second ? "no events" : "\(max(first, second) - min(first, second)) events"
    context.console.print("from \(Self.point(from, at: first)) to \(Self.point(to, at: second)) (\(span)):")
    if changes.isEmpty {
      context.console.print("no projection entry differs")
      return
    }
    // A count line per table, then its entries.
    var index = 0
    while index < changes.count {
      let table = (changes[index].projection, changes[index].table)
      var end = index
      while end < changes.count && (changes[end].projection, changes[end].table) == table { end += 1 }
      let group = changes[index..<end]
      let counts = EventStore.RowChange.Kind.allCases.map { kind in
        "\(group.filter { $0.kind == kind }.count) \(kind.rawValue)"
      }
      context.console.print("")
      context.console.print("\(table.0)/\(table.1): \(counts.joined(separator: ", "))")
      for change in group {
        for line in RowChangeOutput.lines(change, indent: 2) { context.console.print(line) }
      }
      index = end
    }
  }

  /// The sequence a point stands for; a time's note about events recorded by then that reached
  /// the log later goes to standard error.
  static func resolve(
    _ point: LogPoint, argument: String, in store: EventStore, console: Console
  ) throws -> UInt64 {
    let head = try store.head()
    switch point {
    case .sequence(let sequence):
      guard sequence <= head else {
        throw CommandFailure("'\(argument)' (event \(sequence)) is past the head of the log (\(head))")
      }
      return sequence
    case .time(let time):
      let sequence = try store.sequence(asOf: time)
      let late = try store.lateEvents(recordedBy: time, after: sequence)
      if let firstLate = late.first {
        console.error(
          "note: \(late.count == 1 ? "1 event" : "\(late.count) events") recorded by \(ISO8601.string(from: time)) reached this log after event "
            + "\(sequence) (the first: event \(firstLate)); '\(argument)' leaves them out: give a sequence to include them"
        )
      }
      return sequence
    }
  }

  /// `event 12`, or `2026-12-01T12:00:00.000000Z (event 12)`.
  static func point(_ point: LogPoint, at sequence: UInt64) -> String {
    switch point {
    case .sequence: sequence == 0 ? "the empty log" : "event \(sequence)"
    case .time(let time): "\(ISO8601.string(from: time)) (event \(sequence))"
    }
  }

  /// The point as given: its sequence's digits or its time in ISO 8601.
  static func text(_ point: LogPoint) -> String {
    switch point {
    case .sequence(let sequence): String(sequence)
    case .time(let time): ISO8601.string(from: time)
    }
  }
}

extension ArgumentType where Value == LogPoint {
  /// A point to compare: a sequence number, 0 for the empty log, or an ISO 8601 time.
  static var diffPoint: ArgumentType {
    .parsing(
      expected: "a sequence number (0: the empty log) or an ISO 8601 time such as 2026-12-24T19:30:00Z"
    ) {
      text in
      if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
        return UInt64(text).map(LogPoint.sequence)
      }
      return ISO8601.date(from: text).map(LogPoint.time)
    }
  }
}
