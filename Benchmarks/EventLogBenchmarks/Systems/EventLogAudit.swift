import EventLog
import Foundation

/// `audit.query` through eventlog's audit API: the fixture appends this device's blocks and
/// ingests the pulled ones with their provenance (one transaction per commit of
/// ``AuditFixture/Log``); a run asks the time windows (`sequences(recordedFrom:through:)`, then
/// `events(at:)`), the device (`sequences(fromDevice:)`, then `events(at:)`) and the counts per
/// type (`eventCountsByType()`), which the audit indexes answer.
enum EventLogAudit {
  /// Stores the log of `size` events at `path` (not durable: fixture building).
  static func prepare(size: Int, at path: String) async throws {
    let store = try EventLogSystem.open(path, durable: false)
    var log = AuditFixture.Log(size: size, limit: BenchmarkDefaults.fixtureBatch)
    while let commit = log.next() {
      if commit.pulled {
        let ingested = try commit.events.map { event in
          let append = try stamped(event)
          return EventStore.IngestedEvent(
            stream: append.stream, event: append.events[0],
            provenance: event.device.map {
              RecordedEvent.Provenance(device: $0, sequence: event.originSequence)
            })
        }
        try await store.ingest(ingested, allOrNothing: true)
      } else {
        try await store.append(try commit.events.map(stamped))
      }
    }
  }

  /// The fixture event's append, recorded at its time.
  private static func stamped(_ event: AuditFixture.Event) throws -> EventStore.StreamAppend {
    var append = try EventLogSystem.append(for: event.record)
    append.events[0].recordedAt = event.recordedAt
    return append
  }

  /// One run over the fixture at `fixture` (read in place).
  static func run(size: Int, fixture: String) throws -> PreparedRun {
    let store = try EventLogSystem.open(fixture, durable: true)
    let windows = AuditFixture.windows(size: size)
    let device = AuditFixture.devices[AuditFixture.queriedDevice]
    let box = Box()
    return PreparedRun(operations: AuditFixture.returnedEvents(size: size)) {
      try answer(store, windows: windows, device: device, into: box)
    } finish: {
      defer { box.clear() }
      let own = store.deviceID
      let answer = { (event: RecordedEvent) in
        AuditAnswers.Event(
          sequence: event.sequence, id: event.id, version: event.version, type: event.type,
          recordedAtMicroseconds: event.recordedAt.microsecondsSince1970,
          device: event.provenance?.device == own ? nil : event.provenance?.device,
          originSequence: event.provenance?.sequence ?? 0)
      }
      var answers = AuditAnswers()
      for window in box.windows { answers.addWindow(window.lazy.map(answer)) }
      answers.addDevice(box.device.lazy.map(answer))
      return try answers.outcome(size: size, counts: box.counts)
    }
  }

  /// Asks the questions and keeps what they returned in `box` (a synchronous function, as
  /// ``SQLiteAudit``'s: Swift 6.3.1's optimizer crashes on such queries inline in an async closure).
  private static func answer(
    _ store: EventStore, windows: [(from: Date, through: Date)], device: UUID, into box: Box
  ) throws {
    box.windows = try windows.map { window in
      try store.events(at: store.sequences(recordedFrom: window.from, through: window.through))
    }
    box.device = try store.events(at: store.sequences(fromDevice: device))
    box.counts = try store.eventCountsByType()
  }

  /// What a run read, for its `finish`.
  private final class Box {
    var windows: [[RecordedEvent]] = []
    var device: [RecordedEvent] = []
    var counts: [String: UInt64] = [:]

    func clear() {
      (windows, device, counts) = ([], [], [:])
    }
  }
}
