import Foundation
import RestaurantBooking

/// `audit.query` in SQLite: ``SQLiteLog``'s `events` table holding the same events (recorded-at
/// in microseconds, provenance in `origin_device` and `origin_seq`) with an index on each column
/// a question filters or groups by, and the questions as SQL that the indexes answer: a range of
/// `recorded_at`, one `origin_device`, `GROUP BY type` (a scan of the covering type index).
enum SQLiteAudit {
  /// The indexes of the audit questions, made once the log is stored (then `ANALYZE`, so the
  /// planner knows them).
  static let indexes = """
    CREATE INDEX IF NOT EXISTS events_by_recorded_at ON events(recorded_at);
    CREATE INDEX IF NOT EXISTS events_by_origin ON events(origin_device);
    CREATE INDEX IF NOT EXISTS events_by_type ON events(type);
    ANALYZE;
    """
  static let columns = "seq, id, version, type, recorded_at, origin_device, origin_seq, payload"
  static let windowQuery = "SELECT \(columns) FROM events WHERE recorded_at BETWEEN ? AND ? ORDER BY seq"
  static let deviceQuery = "SELECT \(columns) FROM events WHERE origin_device = ? ORDER BY seq"
  static let countsQuery = "SELECT type, count(*) FROM events GROUP BY type"

  /// The stored type names of the baselines' type codes: the domain's, as eventlog stores them.
  static let typeNames: [Int64: String] = [
    1: BookingCreated.eventType, 2: BookingDeleted.eventType, 3: RestaurantAdded.eventType,
    4: RestaurantUpdated.eventType, 5: RestaurantRemoved.eventType, 6: RestaurantsRefreshed.eventType,
  ]

  /// A type code that is none of the baselines'.
  struct UnknownType: Error, CustomStringConvertible {
    var code: Int64
    var sequence: Int64?
    var description: String {
      "events row \(sequence.map(String.init) ?? "(group)"): type code \(code) is none of the baselines'"
    }
  }

  /// Stores the log of `size` events into the empty `log` (opened not durable: fixture
  /// building), then makes the indexes.
  static func prepare(size: Int, into log: SQLiteLog) throws {
    var fixture = AuditFixture.Log(size: size, limit: BenchmarkDefaults.fixtureBatch)
    while let commit = fixture.next() {
      try log.transaction {
        for event in commit.events {
          try log.apply(
            event.record, recordedAt: event.recordedAt.microsecondsSince1970,
            origin: event.device.map { ($0, event.originSequence) })
        }
      }
    }
    try log.database.execute(indexes)
  }

  /// A returned row: the fields the answers compare, and the payload, copied out as an
  /// application reading the event would.
  struct Row {
    var event: AuditAnswers.Event
    var payload: [UInt8]
  }

  /// One run over the database in `fixture` (read in place).
  static func run(size: Int, fixture: String) throws -> PreparedRun {
    let log = try SQLiteLog(directory: fixture, durable: true)
    let window = try log.database.prepare(windowQuery)
    let device = try log.database.prepare(deviceQuery)
    let counts = try log.database.prepare(countsQuery)
    let windows = AuditFixture.windows(size: size)
    let queried = AuditFixture.devices[AuditFixture.queriedDevice]
    let box = Box()
    return PreparedRun(operations: AuditFixture.returnedEvents(size: size)) {
      // The queries in a synchronous function: the optimizer's coroutine splitting of Swift
      // 6.3.1 crashes on them written inline in this async closure.
      try answer(windows: windows, device: queried, statements: (window, device, counts), into: box)
    } finish: {
      defer { box.clear() }
      var answers = AuditAnswers()
      for window in box.windows { answers.addWindow(window.lazy.map(\.event)) }
      answers.addDevice(box.device.lazy.map(\.event))
      return try answers.outcome(size: size, counts: box.counts)
    }
  }

  /// Asks the questions (`window` once per window, `device` once, `counts` once) and keeps what
  /// they returned in `box`.
  private static func answer(
    windows: [(from: Date, through: Date)], device: UUID,
    statements: (window: SQLiteStatement, device: SQLiteStatement, counts: SQLiteStatement), into box: Box
  ) throws {
    box.windows = try windows.map { range in
      try statements.window.bind(1, range.from.microsecondsSince1970)
      try statements.window.bind(2, range.through.microsecondsSince1970)
      return try rows(statements.window)
    }
    try statements.device.bind(1, device)
    box.device = try rows(statements.device)
    let counts = statements.counts
    defer { counts.reset() }
    while try counts.step() {
      guard let name = typeNames[counts.int64(0)] else { throw UnknownType(code: counts.int64(0)) }
      box.counts[name] = UInt64(bitPattern: counts.int64(1))
    }
  }

  /// Every row of `query` (``columns``); resets the statement.
  private static func rows(_ query: SQLiteStatement) throws -> [Row] {
    var rows: [Row] = []
    defer { query.reset() }
    while try query.step() {
      let sequence = query.int64(0)
      guard let type = typeNames[query.int64(3)] else {
        throw UnknownType(code: query.int64(3), sequence: sequence)
      }
      let origin = try query.uuid(5)
      rows.append(
        Row(
          event: AuditAnswers.Event(
            sequence: UInt64(bitPattern: sequence), id: try query.uuid(1),
            version: UInt64(bitPattern: query.int64(2)), type: type,
            recordedAtMicroseconds: query.int64(4), device: origin == RawRecords.device ? nil : origin,
            originSequence: UInt64(bitPattern: query.int64(6))),
          payload: Array(query.blob(7))))
    }
    return rows
  }

  /// What a run read, for its `finish`.
  private final class Box {
    var windows: [[Row]] = []
    var device: [Row] = []
    var counts: [String: UInt64] = [:]

    func clear() {
      (windows, device, counts) = ([], [], [:])
    }
  }
}
