import Foundation
import RestaurantBooking

/// The `sqlite` store: the same records in tables, through prepared statements, WAL and
/// `synchronous=FULL`.
///
/// - `events(seq INTEGER PRIMARY KEY, id BLOB UNIQUE, stream BLOB, version, type, recorded_at,
///   origin_device BLOB, origin_seq, payload BLOB, chain BLOB)` with `UNIQUE(stream, version)`: the
///   log, the ID index and the stream index (a booking's creation at version 1 fails if its
///   stream exists: the expected-version check). `origin_device` and `origin_seq` are the event's
///   provenance (``RawRecords/device`` and its sequence), `chain` its 32-byte value in the hash
///   chain, computed in Swift as eventlog computes it, over the row's fields and payload in the
///   baselines' record layout (``RawRecords/writeEventBody(_:sequence:recordedAt:origin:into:)``).
/// - `bookings(id PRIMARY KEY, …)` with an index on `(date, id)`; `restaurants(id PRIMARY KEY,
///   name, cuisine)` with an index on `(name COLLATE NOCASE, id)`: the read models.
/// - `subject_keys(subject BLOB PRIMARY KEY, key BLOB)`: one data key per customer, apart from the
///   events. A booking's `customer_name` and `notes` are BLOBs sealed under it (``RawSealing``),
///   the same bytes as in the event's payload, sealed once at append.
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
  private let insertKey: SQLiteStatement
  private var writer = ByteWriter(capacity: 320)
  /// The last event's sequence and chain value (0 and ``RawChainValue/zero`` in an empty log);
  /// restored when a transaction rolls back, as ``keyring`` is.
  private var head: UInt64
  private var chain: RawChainValue
  /// The data keys, loaded at open, a new one added with the first event that seals for it.
  private var keyring: RawKeyring

  static let schema = """
    CREATE TABLE IF NOT EXISTS events(
      seq INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, stream BLOB NOT NULL, version INTEGER NOT NULL,
      type INTEGER NOT NULL, recorded_at INTEGER NOT NULL, origin_device BLOB NOT NULL, origin_seq INTEGER NOT NULL,
      payload BLOB NOT NULL, chain BLOB NOT NULL, UNIQUE(stream, version));
    CREATE TABLE IF NOT EXISTS bookings(
      id BLOB PRIMARY KEY, restaurant_id BLOB NOT NULL, restaurant_name TEXT NOT NULL, date REAL NOT NULL,
      party_size INTEGER NOT NULL, customer_name BLOB NOT NULL, notes BLOB, created_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS bookings_by_date ON bookings(date, id);
    CREATE TABLE IF NOT EXISTS restaurants(
      id BLOB PRIMARY KEY, name TEXT NOT NULL, cuisine TEXT NOT NULL) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS restaurants_by_name ON restaurants(name COLLATE NOCASE, id);
    CREATE TABLE IF NOT EXISTS subject_keys(subject BLOB PRIMARY KEY, key BLOB NOT NULL) WITHOUT ROWID;
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
      """
      INSERT INTO events(seq, id, stream, version, type, recorded_at, origin_device, origin_seq, payload, chain)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      """)
    insertBooking = try database.prepare(
      """
      INSERT INTO bookings(id, restaurant_id, restaurant_name, date, party_size, customer_name, notes, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """)
    deleteBooking = try database.prepare("DELETE FROM bookings WHERE id = ?")
    upsertRestaurant = try database.prepare(
      "INSERT OR REPLACE INTO restaurants(id, name, cuisine) VALUES (?, ?, ?)")
    deleteRestaurant = try database.prepare("DELETE FROM restaurants WHERE id = ?")
    insertKey = try database.prepare("INSERT INTO subject_keys(subject, key) VALUES (?, ?)")
    keyring = try Self.keyring(database.prepare("SELECT subject, key FROM subject_keys"))
    let last = try database.prepare("SELECT seq, chain FROM events ORDER BY seq DESC LIMIT 1")
    defer { last.reset() }
    if try last.step() {
      head = UInt64(last.int64(0))
      chain = try last.chainValue(1)
    } else {
      (head, chain) = (0, .zero)
    }
  }

  /// Runs `body` in one transaction (one durable commit); rolls back if it throws.
  func transaction<R>(_ body: () throws -> R) throws -> R {
    let (committedHead, committedChain, committedKeyring) = (head, chain, keyring)
    try begin.run()
    do {
      let result = try body()
      try commit.run()
      return result
    } catch {
      try? rollback.run()
      (head, chain, keyring) = (committedHead, committedChain, committedKeyring)
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

  /// Inserts the event, with its provenance (`origin` for an event pulled from another device:
  /// that device and its sequence there; by default this log's own) and chain value, and updates
  /// the read models; call inside ``transaction(_:)``.
  func apply(
    _ record: MixedEventRecord, recordedAt: Int64, origin: (device: UUID, sequence: UInt64)? = nil
  ) throws {
    let sequence = head + 1
    let sealed = try keyring.seal(record.event, eventID: record.eventID) { subject, key in
      try insertKey.bind(1, subject)
      try insertKey.bind(2, key)
      try insertKey.run()
    }
    writer.reset()
    RawRecords.writeEventBody(
      record, sealed: sealed, sequence: sequence, recordedAt: recordedAt, origin: origin, into: &writer)
    let previous = chain
    let value = writer.bytes.withUnsafeBytes { previous.next(over: $0) }
    try insertEvent.bind(1, Int64(sequence))
    try insertEvent.bind(2, record.eventID)
    try insertEvent.bind(3, record.stream)
    try insertEvent.bind(4, Int64(record.version))
    try insertEvent.bind(5, Int64(record.event.typeCode))
    try insertEvent.bind(6, recordedAt)
    try insertEvent.bind(7, origin?.device ?? RawRecords.device)
    try insertEvent.bind(8, Int64(origin?.sequence ?? sequence))
    try writer.bytes.withUnsafeBytes {
      try insertEvent.bind(9, UnsafeRawBufferPointer(rebasing: $0[RawRecords.eventHeaderSize...]))
    }
    try value.withUnsafeBytes { try insertEvent.bind(10, $0) }
    try insertEvent.run()
    (head, chain) = (sequence, value)
    switch record.event {
    case .bookingCreated(let b):
      guard let sealed else { preconditionFailure("a booking's personal fields are sealed before its row") }
      try insertBooking.bind(1, b.id)
      try insertBooking.bind(2, b.restaurantID)
      try insertBooking.bind(3, b.restaurantName)
      try insertBooking.bind(4, b.date.timeIntervalSince1970)
      try insertBooking.bind(5, Int64(b.partySize))
      try insertBooking.bind(6, sealed.customerName)
      try insertBooking.bind(7, sealed.notes)
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

  /// Every data key `query` (`SELECT subject, key FROM subject_keys`) returns; resets it.
  static func keyring(_ query: SQLiteStatement) throws -> RawKeyring {
    var keys: [UUID: [UInt8]] = [:]
    defer { query.reset() }
    while try query.step() { keys[try query.uuid(0)] = Array(query.blob(1)) }
    return RawKeyring(keys: keys)
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
