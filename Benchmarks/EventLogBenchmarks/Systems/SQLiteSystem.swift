import Foundation
import RestaurantBooking

/// `sqlite`: the engine under Core Data and SwiftData doing the same work in tables
/// (``SQLiteLog``): WAL, `synchronous=FULL`, prepared statements.
///
/// `append.concurrent` shares one connection between the 8 threads behind a lock (as GRDB's
/// `DatabaseQueue` or a serial Core Data context do): SQLite has one writer at a time anyway, and
/// separate connections with a busy timeout would add sleeps and retries on top of the same
/// serial commits.
struct SQLiteSystem: BenchmarkSystem {
  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    let log = try SQLiteLog(directory: path, durable: false)
    switch workload {
    case .replay:
      var generator = MixedEventGenerator()
      for range in batches(size, of: BenchmarkDefaults.fixtureBatch) {
        try log.append(generator.next(range.count))
      }
    case .readAll:
      let records = Fixtures.readModelEvents(size: size)
      for range in batches(size, of: BenchmarkDefaults.fixtureBatch) {
        try log.append(records[range])
      }
    case .syncDiff:
      let local = SyncScenario(size: size).local
      var ids = FixtureIDs(seed: Fixtures.seed ^ 0x5D)
      try log.append(
        local.enumerated().map { index, row in
          MixedEventRecord(
            eventID: ids.next(), stream: MixedEventRecord.catalogStream, version: UInt64(index + 1),
            event: .restaurantAdded(row))
        })
    case .auditQuery:
      try SQLiteAudit.prepare(size: size, into: log)
    case .appendBatched, .appendSingle, .appendConcurrent, .replicatePush, .replicatePull:
      throw UnsupportedWorkload(workload: workload, system: .sqlite)
    }
    try log.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    switch workload {
    case .appendBatched:
      let log = try SQLiteLog(directory: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for range in batches(size, of: batchSize) { try log.append(records[range]) }
      } finish: {
        "events=\(try log.count("events")) bookings=\(try log.count("bookings"))"
      }
    case .appendSingle:
      let log = try SQLiteLog(directory: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for record in records { try log.append(CollectionOfOne(record)) }
      } finish: {
        "events=\(try log.count("events")) bookings=\(try log.count("bookings"))"
      }
    case .appendConcurrent:
      let shared = SharedSQLiteLog(try SQLiteLog(directory: directory, durable: true))
      let records = Fixtures.bookingCreations(count: size)
      let shares = ConcurrentWorkload.shares(of: records)
      return PreparedRun(operations: size) {
        try await Threads.run(shares) { share in
          for record in share { try shared.append(record) }
        }
      } finish: {
        try shared.outcome()
      }
    case .replay:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .sqlite) }
      let log = try SQLiteLog(directory: fixture, durable: true)
      let scan = try log.database.prepare("SELECT type, payload FROM events ORDER BY seq")
      let keys = try log.database.prepare("SELECT subject, key FROM subject_keys")
      let box = ModelsBox()
      return PreparedRun(operations: size) {
        var models = RawReadModels()
        models.keyring = try SQLiteLog.keyring(keys)
        defer { scan.reset() }
        while try scan.step() {
          try models.apply(type: UInt8(truncatingIfNeeded: scan.int64(0)), payload: scan.blob(1))
        }
        try models.buildOrders()
        box.models = models
      } finish: {
        defer { box.models = RawReadModels() }
        return try box.models.check()
      }
    case .syncDiff:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .sqlite) }
      try FileSystem.copyDirectory(fixture, to: directory)
      let log = try SQLiteLog(directory: directory, durable: true)
      let remote = SyncScenario(size: size).remote
      let diff = try SQLiteSyncDiff(log: log)
      let box = CheckBox()
      let catalog = try log.database.prepare("SELECT id, name, cuisine FROM restaurants ORDER BY id")
      return PreparedRun(operations: size) {
        box.check = try diff.refresh(with: remote)
      } finish: {
        box.check + " " + ReadModelFingerprint.outcome(restaurants: try Self.restaurants(catalog))
      }
    case .readAll:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .sqlite) }
      let log = try SQLiteLog(directory: fixture, durable: true)
      let restaurantsQuery = try log.database.prepare(
        "SELECT id, name, cuisine FROM restaurants ORDER BY name COLLATE NOCASE, id")
      let bookingsQuery = try log.database.prepare(
        """
        SELECT id, restaurant_id, restaurant_name, date, party_size, customer_name, notes, created_at
        FROM bookings ORDER BY date, id
        """)
      let keysQuery = try log.database.prepare("SELECT subject, key FROM subject_keys")
      let box = ListsBox()
      return PreparedRun(operations: size) {
        let restaurants = try Self.restaurants(restaurantsQuery)
        // The data keys, then every booking with its name and notes opened.
        let keyring = try SQLiteLog.keyring(keysQuery)
        var bookings: [Booking] = []
        defer { bookingsQuery.reset() }
        while try bookingsQuery.step() {
          let q = bookingsQuery
          let name = q.blob(5)
          bookings.append(
            Booking(
              id: try q.uuid(0), restaurantID: try q.uuid(1), restaurantName: q.text(2) ?? "",
              date: Date(timeIntervalSince1970: q.double(3)), partySize: Int(q.int64(4)),
              customerID: try RawSealing.subject(of: name), customerName: try keyring.open(name),
              notes: try q.optionalBlob(6).map { try keyring.open($0) },
              createdAt: Date(timeIntervalSince1970: q.double(7))))
        }
        (box.restaurants, box.bookings) = (restaurants, bookings)
      } finish: {
        box.outcome()
      }
    case .auditQuery:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .sqlite) }
      return try SQLiteAudit.run(size: size, fixture: fixture)
    case .replicatePush, .replicatePull:
      throw UnsupportedWorkload(workload: workload, system: .sqlite)
    }
  }
}

extension SQLiteSystem {
  /// Every row of `query` (`SELECT id, name, cuisine …`) as a restaurant; resets the statement.
  static func restaurants(_ query: SQLiteStatement) throws -> [Restaurant] {
    var restaurants: [Restaurant] = []
    defer { query.reset() }
    while try query.step() {
      restaurants.append(
        Restaurant(
          id: try query.uuid(0), name: query.text(1) ?? "", cuisine: Cuisine(rawValue: query.text(2) ?? "")))
    }
    return restaurants
  }
}

/// One SQLite connection shared by the threads of `append.concurrent`.
final class SharedSQLiteLog: @unchecked Sendable {
  // @unchecked Sendable: the connection (opened SQLITE_OPEN_NOMUTEX) and its statements are used
  // only while `lock` is held, so one thread at a time touches them.
  private let lock = NSLock()
  private let log: SQLiteLog

  init(_ log: SQLiteLog) { self.log = log }

  func append(_ record: MixedEventRecord) throws {
    try lock.withLock { try log.append(CollectionOfOne(record)) }
  }

  /// The outcome line of an append workload: events in the log, bookings in the read model.
  func outcome() throws -> String {
    try lock.withLock { "events=\(try log.count("events")) bookings=\(try log.count("bookings"))" }
  }
}

final class CheckBox {
  var check = ""
}
