import EventLog
import Foundation

/// A point in the log as an auditor names it: a time (ISO 8601) or an event's sequence number.
enum LogPoint: Sendable, Equatable, CustomStringConvertible {
  case time(Date)
  case sequence(UInt64)

  var description: String {
    switch self {
    case .time(let date): ISO8601.string(from: date)
    case .sequence(let sequence): "event \(sequence)"
    }
  }
}

extension ArgumentType where Value == LogPoint {
  /// An ISO 8601 time or a sequence number (digits only).
  static var logPoint: ArgumentType {
    .parsing(expected: "an ISO 8601 time such as 2026-12-24T19:30:00Z, or a sequence number") { text in
      if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
        return UInt64(text).flatMap { $0 >= 1 ? .sequence($0) : nil }
      }
      return ISO8601.date(from: text).map(LogPoint.time)
    }
  }
}

/// Which events a command reads (`log`, `export`): a range of sequences or times, a stream, a type,
/// an origin device, an origin name, all of them together.
///
/// Times and devices are answered by the audit indexes (`EventStore.sequences(recordedFrom:through:)`,
/// `sequences(fromDevice:)`), a stream by the stream index; the rest is checked on the events those
/// give, or on a walk of the sequence range when no index applies.
struct EventSelection: Sendable {
  var stream: StreamID?
  var type: String?
  var device: UUID?
  var origin: String?
  var since: LogPoint?
  var until: LogPoint?
  var from: UInt64 = 1
  var to: UInt64?

  /// Whether it selects every event.
  var isEverything: Bool {
    stream == nil && type == nil && device == nil && origin == nil && since == nil && until == nil
      && from == 1
      && to == nil
  }

  /// The options that say what it selects, as given (for an export's manifest and messages).
  var described: [(String, String)] {
    var options: [(String, String)] = []
    if let stream { options.append(("stream", stream.rawValue)) }
    if let type { options.append(("type", type)) }
    if let device { options.append(("device", device.lowercasedString)) }
    if let origin { options.append(("origin", origin)) }
    if let since { options.append(("since", since.description)) }
    if let until { options.append(("until", until.description)) }
    if from != 1 { options.append(("from", String(from))) }
    if let to { options.append(("to", String(to))) }
    return options
  }

  /// The sequences it allows, before its other conditions.
  var sequenceRange: (low: UInt64, high: UInt64) {
    var low = from
    var high = to ?? .max
    if case .sequence(let first) = since { low = max(low, first) }
    if case .sequence(let last) = until { high = min(high, last) }
    return (low, high)
  }

  /// Checks the selection against the environment: a type the log and this build do not know is
  /// a usage error that lists the known ones.
  func validate(in store: EventStore, eventTypes: EventTypeRegistry) throws {
    if let type {
      let known = Set(try store.eventCountsByType().keys).union(eventTypes.typeNames)
      guard known.contains(type) else {
        let list = known.sorted().joined(separator: ", ")
        throw UsageError(
          "invalid value '\(type)' for '--type': no event of that type; the types are: "
            + (list.isEmpty ? "(none: the log is empty)" : list))
      }
    }
  }

  /// The sequences the indexes give for it, ascending, or `nil` when no index applies (then the
  /// sequence range is walked).
  func indexed(in store: EventStore) throws -> [UInt64]? {
    var candidates: [[UInt64]] = []
    var start: Date?
    var end: Date?
    if case .time(let date) = since { start = date }
    if case .time(let date) = until { end = date }
    if start != nil || end != nil {
      candidates.append(try store.sequences(recordedFrom: start, through: end))
    }
    if let device { candidates.append(try store.sequences(fromDevice: device)) }
    if let stream {
      var sequences: [UInt64] = []
      var next: UInt64 = 1
      while true {
        let events = try store.events(in: stream, fromVersion: next, limit: 4_096)
        sequences += events.map(\.sequence)
        guard events.count == 4_096, let last = events.last else { break }
        next = last.version + 1
      }
      candidates.append(sequences.sorted())
    }
    guard var result = candidates.min(by: { $0.count < $1.count }) else { return nil }
    for other in candidates where other.count != result.count || other != result {
      let set = Set(other)
      result = result.filter(set.contains)
    }
    let (low, high) = sequenceRange
    return result.filter { $0 >= low && $0 <= high }
  }

  /// Whether `event` is selected.
  func matches(_ event: RecordedEvent) -> Bool {
    let (low, high) = sequenceRange
    guard event.sequence >= low && event.sequence <= high else { return false }
    if let type, event.type != type { return false }
    if let origin, event.metadata.origin != origin { return false }
    if let device, event.provenance?.device != device { return false }
    if let stream, event.stream != stream { return false }
    if case .time(let date) = since, event.recordedAt.microsecondsSince1970 < date.microsecondsSince1970 {
      return false
    }
    if case .time(let date) = until, event.recordedAt.microsecondsSince1970 > date.microsecondsSince1970 {
      return false
    }
    return true
  }

  /// Walks the selected records (events, and damaged records in its range, which no condition can
  /// be checked on) in log order, or newest first when `backward`, until `body` returns `false`.
  func walk(
    _ store: EventStore, backward: Bool = false, _ body: (EventStore.RecordReading) throws -> Bool
  ) throws {
    if let indexed = try indexed(in: store) {
      try store.forEachRecord(at: backward ? indexed.reversed() : indexed) { reading in
        if case .event(let event) = reading, !matches(event) { return true }
        return try body(reading)
      }
      return
    }
    let (low, high) = sequenceRange
    try store.forEachRecord(
      from: low, through: high == .max ? nil : high, direction: backward ? .backward : .forward
    ) {
      reading in
      if case .event(let event) = reading, !matches(event) { return true }
      return try body(reading)
    }
  }

  /// Why nothing was selected, when `stream` names no stream: the streams whose names hold the
  /// text given (a bare entity ID was given, say).
  func streamHint(
    in store: EventStore, given: String, streams: AppSchema.StreamNames,
    usage: String = "use --stream with the whole name"
  ) throws -> String? {
    guard let stream, try store.version(of: stream) == 0 else { return nil }
    let needle = given.lowercased()
    let near = try store.streams(limit: 5) { streams.displayed($0).lowercased().contains(needle) }
    guard !near.isEmpty else { return "the log has no stream '\(given)'" }
    return "the log has no stream '\(given)'; streams whose names hold it: "
      + near.map { "'\(streams.displayed($0))'" }.joined(separator: ", ")
      + " (\(usage))"
  }
}
