import CLMDB
import Foundation

/// `lmdb-append`: the least work any LMDB event log must do: event bytes only (each record with
/// its provenance, its value in the hash chain and its CRC-32C, as eventlog's, and a booking's
/// name and notes sealed under its customer's data key, ``RawSealing``: lmdb-raw's records),
/// appended with `MDB_APPEND` through one cursor, read back with one cursor scan that verifies
/// each CRC. The physical limit, reported for scale; it keeps no index and no read model, only
/// the data keys (`subject_keys`) without which its records could not be read.
struct LMDBAppendSystem: BenchmarkSystem {
  final class Log {
    let environment: RawEnvironment
    let events: MDB_dbi
    let subjectKeys: MDB_dbi
    var head: UInt64 = 0
    /// The head record's chain value (the log starts empty), the key of the next.
    var chain = RawChainValue.zero
    /// The data keys (the log starts empty), a new one added with the first event that seals for it.
    var keyring = RawKeyring()
    var writer = ByteWriter(capacity: 320)

    init(path: String, durable: Bool) throws {
      environment = try RawEnvironment(path: path, durable: durable)
      events = try environment.openDatabase("events", flags: MDB_INTEGERKEY)
      subjectKeys = try environment.openDatabase(RawLMDB.subjectKeys)
    }

    /// Appends `records` in one write transaction (one durable commit).
    func append(_ records: some Collection<MixedEventRecord>) throws {
      let recordedAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
      try environment.write { txn in
        var cursor: OpaquePointer?
        try mdbCheck(mdb_cursor_open(txn, events, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        for record in records {
          head += 1
          let sealed = try keyring.seal(record.event, eventID: record.eventID) { subject, key in
            try RawLMDB.putKey(txn, subjectKeys, subject: subject, key: key)
          }
          writer.reset()
          RawRecords.writeEvent(
            record, sealed: sealed, sequence: head, recordedAt: recordedAt, chain: &chain, into: &writer)
          var key = MDB_val(mv_size: 8, mv_data: nil)
          try withUnsafeMutableBytes(of: &head) { sequence in
            key.mv_data = sequence.baseAddress
            try writer.bytes.withUnsafeBytes { value in
              try withMDBVal(value) { v in
                try mdbCheck(mdb_cursor_put(cursor, &key, &v, UInt32(MDB_APPEND)), "mdb_cursor_put")
              }
            }
          }
        }
      }
    }
  }

  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    guard workload == .replay else { throw UnsupportedWorkload(workload: workload, system: .lmdbAppend) }
    let log = try Log(path: path, durable: false)
    var generator = MixedEventGenerator()
    for range in batches(size, of: BenchmarkDefaults.fixtureBatch) {
      try log.append(generator.next(range.count))
    }
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    switch workload {
    case .appendBatched:
      let log = try Log(path: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for range in batches(size, of: batchSize) { try log.append(records[range]) }
      } finish: {
        "events=\(try log.environment.read { try RawLMDB.count($0, log.events) })"
      }
    case .appendSingle:
      let log = try Log(path: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for record in records { try log.append(CollectionOfOne(record)) }
      } finish: {
        "events=\(try log.environment.read { try RawLMDB.count($0, log.events) })"
      }
    case .replay:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .lmdbAppend) }
      let environment = try RawEnvironment(path: fixture, durable: true)
      let events = try environment.openDatabase("events", flags: MDB_INTEGERKEY)
      let keys = try environment.openDatabase(RawLMDB.subjectKeys)
      let box = ModelsBox()
      return PreparedRun(operations: size) {
        box.models = try LMDBRawSystem.replay(environment, events, keys: keys)
      } finish: {
        defer { box.models = RawReadModels() }
        return try box.models.check()
      }
    case .appendConcurrent, .syncDiff, .readAll, .replicatePush, .replicatePull, .auditQuery:
      throw UnsupportedWorkload(workload: workload, system: .lmdbAppend)
    }
  }
}
