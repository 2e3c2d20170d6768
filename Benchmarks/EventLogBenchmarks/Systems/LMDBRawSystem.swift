import CLMDB
import Foundation
import RestaurantBooking

/// `lmdb-raw`: the same records as eventlog written and read with the LMDB C API in its own
/// minimal layout (``LMDBRawLog``): the ceiling for any library on LMDB.
struct LMDBRawSystem: BenchmarkSystem {
  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    let log = try LMDBRawLog(path: path, durable: false)
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
    case .appendBatched, .appendSingle, .appendConcurrent, .syncDiff, .replicatePush, .replicatePull,
      .auditQuery:
      throw UnsupportedWorkload(workload: workload, system: .lmdbRaw)
    }
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    switch workload {
    case .appendBatched:
      let log = try LMDBRawLog(path: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for range in batches(size, of: batchSize) { try log.append(records[range]) }
      } finish: {
        try log.appendOutcome()
      }
    case .appendSingle:
      let log = try LMDBRawLog(path: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for record in records { try log.append(CollectionOfOne(record)) }
      } finish: {
        try log.appendOutcome()
      }
    case .appendConcurrent:
      let log = try LMDBRawLog(path: directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      let shares = ConcurrentWorkload.shares(of: records)
      return PreparedRun(operations: size) {
        // One OS thread per writer: each blocks in its own write transaction, which LMDB serialises.
        try await Threads.run(shares) { share in
          for record in share { try log.append(CollectionOfOne(record)) }
        }
      } finish: {
        try log.appendOutcome()
      }
    case .replay:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .lmdbRaw) }
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
    case .readAll:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .lmdbRaw) }
      let log = try LMDBRawLog(path: fixture, durable: true)
      let box = ListsBox()
      return PreparedRun(operations: size) {
        (box.restaurants, box.bookings) = try log.environment.read { txn -> ([Restaurant], [Booking]) in
          // The data keys, then every row shown with its name and notes opened.
          let keyring = try RawLMDB.keyring(txn, log.subjectKeys)
          var restaurants: [Restaurant] = []
          restaurants.reserveCapacity(try RawLMDB.count(txn, log.restaurantsByName))
          try RawLMDB.scan(txn, log.restaurantsByName) { _, value in
            var reader = ByteReader(value)
            restaurants.append(try RawRecords.readRestaurant(&reader))
          }
          var bookings: [Booking] = []
          bookings.reserveCapacity(try RawLMDB.count(txn, log.bookingsByDate))
          // The date index in order, each row from the ID table, as eventlog's query reads them.
          try RawLMDB.scan(txn, log.bookingsByDate) { key, _ in
            let id = UnsafeRawBufferPointer(rebasing: key[(key.count - 16)...])
            let booking = try RawLMDB.get(txn, log.bookingsByID, key: id) { row in
              var reader = ByteReader(row)
              return try RawRecords.readBooking(&reader, keyring: keyring)
            }
            guard let booking else {
              throw RawRecords.CorruptRecord(description: "the date index names a missing booking")
            }
            bookings.append(booking)
          }
          return (restaurants, bookings)
        }
      } finish: {
        box.outcome()
      }
    case .syncDiff, .replicatePush, .replicatePull, .auditQuery:
      throw UnsupportedWorkload(workload: workload, system: .lmdbRaw)
    }
  }

  /// The data keys of `keys`, then one cursor scan of the event records, each verified against
  /// its checksum, decoded and folded into dictionaries by ID (names and notes copied sealed);
  /// then the name and date orders, the bookings listed opened (``RawReadModels``).
  static func replay(_ environment: RawEnvironment, _ events: MDB_dbi, keys: MDB_dbi) throws -> RawReadModels
  {
    var models = RawReadModels()
    try environment.read { txn in
      models.keyring = try RawLMDB.keyring(txn, keys)
      try RawLMDB.scan(txn, events) { _, record in try models.apply(record: record) }
    }
    try models.buildOrders()
    return models
  }
}

final class ModelsBox {
  var models = RawReadModels()
}
