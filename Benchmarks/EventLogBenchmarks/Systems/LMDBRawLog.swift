import CLMDB
import Foundation
import RestaurantBooking

/// The `lmdb-raw` store: the same records as eventlog (events, ID index, stream index, read-model
/// rows) written with the LMDB C API in a minimal fixed layout (``RawRecords``), each event with
/// its provenance and its value in the hash chain, as eventlog's records carry them, and each
/// booking's name and notes sealed under its customer's data key (``RawSealing``).
///
/// | database | key → value |
/// |---|---|
/// | `events` (`MDB_INTEGERKEY`) | sequence → event record (with its chain value and CRC-32C) |
/// | `event_ids` | event ID (16) → sequence |
/// | `streams` (`MDB_DUPSORT`, `MDB_DUPFIXED`) | stream (16) → version BE + sequence BE |
/// | `bookings_by_id` | ID → booking row |
/// | `bookings_by_date` | date+ID → nothing (an index, as eventlog's `by-date` since projection version 2) |
/// | `restaurants_by_id` / `restaurants_by_name` | ID / lower-cased name+0+ID → restaurant row |
/// | `subject_keys` | data subject (16) → its data key (32) |
final class LMDBRawLog: @unchecked Sendable {
  // @unchecked Sendable: the database handles are immutable after `init`; `head`, `chain` and
  // `keyring` are touched only inside `append`, which runs inside a write transaction, and LMDB admits one
  // write transaction at a time per environment (threads block in mdb_txn_begin).
  let environment: RawEnvironment
  let events: MDB_dbi
  let eventIDs: MDB_dbi
  let streams: MDB_dbi
  let bookingsByID: MDB_dbi
  let bookingsByDate: MDB_dbi
  let restaurantsByID: MDB_dbi
  let restaurantsByName: MDB_dbi
  let subjectKeys: MDB_dbi
  private var head: UInt64 = 0
  /// The head record's chain value (``RawChainValue/zero`` in an empty log), the key of the next.
  private var chain = RawChainValue.zero
  /// The data keys, loaded at open, a new one added with the first event that seals for it.
  private var keyring = RawKeyring()

  struct Conflict: Error, CustomStringConvertible {
    var description: String
  }

  init(path: String, durable: Bool) throws {
    environment = try RawEnvironment(path: path, durable: durable)
    events = try environment.openDatabase("events", flags: MDB_INTEGERKEY)
    eventIDs = try environment.openDatabase("event_ids")
    streams = try environment.openDatabase("streams", flags: MDB_DUPSORT | MDB_DUPFIXED)
    bookingsByID = try environment.openDatabase("bookings_by_id")
    bookingsByDate = try environment.openDatabase("bookings_by_date")
    restaurantsByID = try environment.openDatabase("restaurants_by_id")
    restaurantsByName = try environment.openDatabase("restaurants_by_name")
    subjectKeys = try environment.openDatabase(RawLMDB.subjectKeys)
    keyring = try environment.read { [subjectKeys] in try RawLMDB.keyring($0, subjectKeys) }
    (head, chain) = try environment.read { txn in
      var cursor: OpaquePointer?
      try mdbCheck(mdb_cursor_open(txn, events, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      var key = MDB_val()
      var value = MDB_val()
      let rc = mdb_cursor_get(cursor, &key, &value, MDB_LAST)
      if rc == MDB_NOTFOUND { return (0, RawChainValue.zero) }
      try mdbCheck(rc, "mdb_cursor_get")
      return (bytes(of: key).loadUnaligned(as: UInt64.self), try RawRecords.storedChain(of: bytes(of: value)))
    }
  }

  /// The outcome line of an append workload: events in the log, bookings in the read model.
  func appendOutcome() throws -> String {
    try environment.read { txn in
      "events=\(try RawLMDB.count(txn, events)) bookings=\(try RawLMDB.count(txn, bookingsByID))"
    }
  }

  /// Appends `records` in one write transaction (one durable commit).
  func append(_ records: some Collection<MixedEventRecord>) throws {
    try environment.write { txn in try append(records, in: txn) }
  }

  private func append(_ records: some Collection<MixedEventRecord>, in txn: OpaquePointer) throws {
    let recordedAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
    var writer = ByteWriter(capacity: 320)
    var rowWriter = ByteWriter(capacity: 256)
    var ids: [(id: UUID, sequence: UInt64)] = []
    ids.reserveCapacity(records.count)
    var sequence = head
    var chain = chain
    var keyring = keyring
    for record in records {
      sequence += 1
      // Expected version: a booking's creation finds no stream.
      if record.version == 1 && record.stream != MixedEventRecord.catalogStream {
        let exists = try withUnsafeBytes(of: record.stream.uuid) { key in
          try RawLMDB.get(txn, streams, key: key) { _ in true }
        }
        if exists != nil { throw Conflict(description: "stream \(record.stream) exists") }
      }
      let sealed = try keyring.seal(record.event, eventID: record.eventID) { subject, key in
        try RawLMDB.putKey(txn, subjectKeys, subject: subject, key: key)
      }
      writer.reset()
      RawRecords.writeEvent(
        record, sealed: sealed, sequence: sequence, recordedAt: recordedAt, chain: &chain, into: &writer)
      try withUnsafeBytes(of: sequence) { key in
        try writer.bytes.withUnsafeBytes { value in
          try RawLMDB.put(txn, events, key: key, value: value, flags: MDB_APPEND)
        }
      }
      var entry = (record.version.bigEndian, sequence.bigEndian)
      try withUnsafeBytes(of: record.stream.uuid) { key in
        try withUnsafeBytes(of: &entry) { value in try RawLMDB.put(txn, streams, key: key, value: value) }
      }
      ids.append((record.eventID, sequence))
      try applyReadModels(record.event, sealed: sealed, in: txn, writer: &rowWriter)
    }
    // Random keys: insert them in key order, as eventlog does.
    if ids.count > 1 { ids.sort { Self.precedes($0.id, $1.id) } }
    for entry in ids {
      var value = entry.sequence.littleEndian
      try withUnsafeBytes(of: entry.id.uuid) { key in
        try withUnsafeBytes(of: &value) { v in
          try RawLMDB.put(txn, eventIDs, key: key, value: v, flags: MDB_NOOVERWRITE)
        }
      }
    }
    head = sequence
    self.chain = chain
    self.keyring = keyring
  }

  /// Updates the read models for `event`; a booking's row takes the name and notes `sealed` for
  /// its event (the same bytes).
  private func applyReadModels(
    _ event: MixedEvent, sealed: SealedBookingFields?, in txn: OpaquePointer, writer: inout ByteWriter
  ) throws {
    switch event {
    case .bookingCreated(let booking):
      guard let sealed else { preconditionFailure("a booking's personal fields are sealed before its row") }
      writer.reset()
      RawRecords.writeBooking(booking, sealed: sealed, into: &writer)
      try writer.bytes.withUnsafeBytes { row in
        try withUnsafeBytes(of: booking.id.uuid) { key in
          try RawLMDB.put(txn, bookingsByID, key: key, value: row)
        }
        try withUnsafeBytes(of: RawRecords.dateKey(booking.date, id: booking.id)) { key in
          try RawLMDB.put(txn, bookingsByDate, key: key, value: UnsafeRawBufferPointer(rebasing: row[0..<0]))
        }
      }
    case .bookingDeleted(let id):
      let booking = try withUnsafeBytes(of: id.uuid) { key in
        try RawLMDB.get(txn, bookingsByID, key: key) { row in
          var reader = ByteReader(row)
          return try RawRecords.readBookingRow(&reader)
        }
      }
      guard let booking else { return }
      try withUnsafeBytes(of: id.uuid) { try RawLMDB.delete(txn, bookingsByID, key: $0) }
      try withUnsafeBytes(of: RawRecords.dateKey(booking.date, id: id)) {
        try RawLMDB.delete(txn, bookingsByDate, key: $0)
      }
    case .restaurantAdded(let row):
      try putRestaurant(row, in: txn, writer: &writer)
    case .restaurantUpdated(let id, let old, let new):
      try RawRecords.nameKey(old.name, id: id).withUnsafeBytes {
        try RawLMDB.delete(txn, restaurantsByName, key: $0)
      }
      try putRestaurant(new, in: txn, writer: &writer)
    case .restaurantRemoved(let row):
      try withUnsafeBytes(of: row.id.uuid) { try RawLMDB.delete(txn, restaurantsByID, key: $0) }
      try RawRecords.nameKey(row.name, id: row.id).withUnsafeBytes {
        try RawLMDB.delete(txn, restaurantsByName, key: $0)
      }
    case .restaurantsRefreshed:
      break
    }
  }

  private func putRestaurant(_ row: RemoteRestaurant, in txn: OpaquePointer, writer: inout ByteWriter) throws
  {
    writer.reset()
    RawRecords.writeRestaurant(row, into: &writer)
    try writer.bytes.withUnsafeBytes { value in
      try withUnsafeBytes(of: row.id.uuid) { key in
        try RawLMDB.put(txn, restaurantsByID, key: key, value: value)
      }
      try RawRecords.nameKey(row.name, id: row.id).withUnsafeBytes { key in
        try RawLMDB.put(txn, restaurantsByName, key: key, value: value)
      }
    }
  }

  private static func precedes(_ a: UUID, _ b: UUID) -> Bool {
    withUnsafeBytes(of: a.uuid) { x in
      withUnsafeBytes(of: b.uuid) { y in
        let a0 = UInt64(bigEndian: x.loadUnaligned(as: UInt64.self))
        let b0 = UInt64(bigEndian: y.loadUnaligned(as: UInt64.self))
        if a0 != b0 { return a0 < b0 }
        return UInt64(bigEndian: x.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
          < UInt64(bigEndian: y.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      }
    }
  }
}
