import Foundation
import RestaurantBooking

/// The `sqlite` store: the same records in tables, through prepared statements, WAL and
/// `synchronous=FULL`.
///
/// - `events(seq INTEGER PRIMARY KEY, id BLOB UNIQUE, stream BLOB, version, type, recorded_at, payload BLOB)`
///   with `UNIQUE(stream, version)`: the log, the ID index and the stream index (a booking's
///   creation at version 1 fails if its stream exists: the expected-version check).
/// - `bookings(id PRIMARY KEY, …)` with an index on `(date, id)`; `restaurants(id PRIMARY KEY,
///   name, cuisine)` with an index on `(name COLLATE NOCASE, id)`: the read models.
final class SQLiteLog {
  let database: SQLiteDatabase
  private let begin: SQLiteStatement
  private let commit: SQLiteStatement
  private let rollback: SQLiteStatement
  private let insertEvent: SQLiteStatement
  private let insertBooking: SQLiteStatement
  private let deleteBooking: SQLiteStatement
  private let upsertRestaurant: SQLiteStatement
  private let deleteRestaurant: SQLiteStatement
  private var writer = ByteWriter(capacity: 320)

  static let schema = """
    CREATE TABLE IF NOT EXISTS events(
      seq INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, stream BLOB NOT NULL, version INTEGER NOT NULL,
      type INTEGER NOT NULL, recorded_at INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE(stream, version));
    CREATE TABLE IF NOT EXISTS bookings(
      id BLOB PRIMARY KEY, restaurant_id BLOB NOT NULL, restaurant_name TEXT NOT NULL, date REAL NOT NULL,
      party_size INTEGER NOT NULL, customer_name TEXT NOT NULL, notes TEXT, created_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS bookings_by_date ON bookings(date, id);
    CREATE TABLE IF NOT EXISTS restaurants(
      id BLOB PRIMARY KEY, name TEXT NOT NULL, cuisine TEXT NOT NULL) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS restaurants_by_name ON restaurants(name COLLATE NOCASE, id);
    """

  /// Opens (creating) the database file `directory/bench.sqlite`.
  init(directory: String, durable: Bool) throws {
    try FileSystem.createDirectory(directory)
    database = try SQLiteDatabase(path: directory + "/bench.sqlite", durable: durable)
    try database.execute(Self.schema)
    begin = try database.prepare("BEGIN IMMEDIATE")
    commit = try database.prepare("COMMIT")
    rollback = try database.prepare("ROLLBACK")
    insertEvent = try database.prepare(
      "INSERT INTO events(id, stream, version, type, recorded_at, payload) VALUES (?, ?, ?, ?, ?, ?)")
    insertBooking = try database.prepare(
      """
      INSERT INTO bookings(id, restaurant_id, restaurant_name, date, party_size, customer_name, notes, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """)
    deleteBooking = try database.prepare("DELETE FROM bookings WHERE id = ?")
    upsertRestaurant = try database.prepare(
      "INSERT OR REPLACE INTO restaurants(id, name, cuisine) VALUES (?, ?, ?)")
    deleteRestaurant = try database.prepare("DELETE FROM restaurants WHERE id = ?")
  }

  /// Runs `body` in one transaction (one durable commit); rolls back if it throws.
  func transaction<R>(_ body: () throws -> R) throws -> R {
    try begin.run()
    do {
      let result = try body()
      try commit.run()
      return result
    } catch {
      try? rollback.run()
      throw error
    }
  }

  /// Appends `records` in one transaction.
  func append(_ records: some Collection<MixedEventRecord>) throws {
    try transaction {
      let recordedAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
      for record in records { try apply(record, recordedAt: recordedAt) }
    }
  }

  /// Inserts the event and updates the read models; call inside ``transaction(_:)``.
  func apply(_ record: MixedEventRecord, recordedAt: Int64) throws {
    writer.reset()
    RawRecords.writePayload(record.event, into: &writer)
    try insertEvent.bind(1, record.eventID)
    try insertEvent.bind(2, record.stream)
    try insertEvent.bind(3, Int64(record.version))
    try insertEvent.bind(4, Int64(record.event.typeCode))
    try insertEvent.bind(5, recordedAt)
    try writer.bytes.withUnsafeBytes { try insertEvent.bind(6, $0) }
    try insertEvent.run()
    switch record.event {
    case .bookingCreated(let b):
      try insertBooking.bind(1, b.id)
      try insertBooking.bind(2, b.restaurantID)
      try insertBooking.bind(3, b.restaurantName)
      try insertBooking.bind(4, b.date.timeIntervalSince1970)
      try insertBooking.bind(5, Int64(b.partySize))
      try insertBooking.bind(6, b.customerName)
      try insertBooking.bind(7, b.notes)
      try insertBooking.bind(8, b.createdAt.timeIntervalSince1970)
      try insertBooking.run()
    case .bookingDeleted(let id):
      try deleteBooking.bind(1, id)
      try deleteBooking.run()
    case .restaurantAdded(let row):
      try upsert(row)
    case .restaurantUpdated(_, _, let new):
      try upsert(new)
    case .restaurantRemoved(let row):
      try deleteRestaurant.bind(1, row.id)
      try deleteRestaurant.run()
    case .restaurantsRefreshed:
      break
    }
  }

  private func upsert(_ row: RemoteRestaurant) throws {
    try upsertRestaurant.bind(1, row.id)
    try upsertRestaurant.bind(2, row.name)
    try upsertRestaurant.bind(3, row.cuisine)
    try upsertRestaurant.run()
  }

  /// The number of rows of `table`.
  func count(_ table: String) throws -> Int {
    let statement = try database.prepare("SELECT count(*) FROM \(table)")
    guard try statement.step() else { return 0 }
    return Int(statement.int64(0))
  }
}

@available(*, unavailable)
extension SQLiteLog: Sendable {}
