import EventLog
import Foundation
import Replication
import ReplicationPostgres
import RestaurantBooking

/// `eventlog`: the library through its public API, as users run it: checksums, ID and stream
/// indexes, idempotency, inline projections (`AppSchema.restaurantBooking`'s), durable
/// commits; the repositories for `sync.diff` and `read.all`; `Replicator` through
/// `PostgresTransport` for the replicate workloads, as `eventlog push` and `eventlog pull` run it.
struct EventLogSystem: BenchmarkSystem {
  static func open(_ path: String, durable: Bool) throws -> EventStore {
    var options = EventStore.Options()
    options.mapSize = BenchmarkDefaults.mapSize
    options.durability = durable ? .durable : .noSync
    return try EventStore(path: path, schema: .restaurantBooking, options: options)
  }

  /// A replicator of `store` over libpq to `url` (its schema's event types give the payloads
  /// their JSON form), connected and with the server's schema checked, as `eventlog push` and
  /// `eventlog pull` do before they move any event.
  static func checkedReplicator(
    store: EventStore, url: String
  ) async throws -> (Replicator, PostgresTransport) {
    let transport = try PostgresTransport(url: url)
    let replicator = Replicator(
      store: store, transport: transport, options: BenchmarkServer.replicationOptions)
    try await replicator.checkServer()
    return (replicator, transport)
  }

  /// The domain event of a fixture record, encoded by the library, and its stream.
  static func append(for record: MixedEventRecord) throws -> EventStore.StreamAppend {
    let metadata = EventMetadata(origin: "bench")
    let event: NewEvent
    let stream: StreamID
    switch record.event {
    case .bookingCreated(let b):
      stream = RestaurantBookingStreams.booking(b.id)
      event = try NewEvent(
        BookingCreated(
          bookingID: b.id, restaurantID: b.restaurantID, restaurantName: b.restaurantName, date: b.date,
          partySize: b.partySize, customerID: b.customerID ?? Fixtures.customerID(of: b.customerName ?? ""),
          customerName: b.customerName ?? "", notes: b.notes, createdAt: b.createdAt),
        id: record.eventID, metadata: metadata)
    case .bookingDeleted(let id):
      stream = RestaurantBookingStreams.booking(id)
      event = try NewEvent(BookingDeleted(bookingID: id), id: record.eventID, metadata: metadata)
    case .restaurantAdded(let row):
      stream = RestaurantBookingStreams.catalog
      event = try NewEvent(
        RestaurantAdded(restaurantID: row.id, name: row.name, cuisine: row.cuisine), id: record.eventID,
        metadata: metadata)
    case .restaurantUpdated(let id, let old, let new):
      stream = RestaurantBookingStreams.catalog
      event = try NewEvent(
        RestaurantUpdated(
          restaurantID: id,
          name: old.name == new.name ? nil : .init(old: old.name, new: new.name),
          cuisine: old.cuisine == new.cuisine ? nil : .init(old: old.cuisine, new: new.cuisine)),
        id: record.eventID, metadata: metadata)
    case .restaurantRemoved(let row):
      stream = RestaurantBookingStreams.catalog
      event = try NewEvent(
        RestaurantRemoved(restaurantID: row.id, name: row.name, cuisine: row.cuisine), id: record.eventID,
        metadata: metadata)
    case .restaurantsRefreshed(let added, let updated, let removed, let unchanged):
      stream = RestaurantBookingStreams.catalog
      event = try NewEvent(
        RestaurantsRefreshed(
          source: "bench", fetchedAt: Fixtures.epoch, fetched: added + updated + unchanged, added: added,
          updated: updated, removed: removed, unchanged: unchanged),
        id: record.eventID, metadata: metadata)
    }
    // A booking's creation must find no stream, as `EventSourcedBookingRepository` demands.
    let expected: ExpectedVersion =
      record.version == 1 && record.stream != MixedEventRecord.catalogStream ? .noStream : .any
    return EventStore.StreamAppend(stream: stream, expectedVersion: expected, events: [event])
  }

  /// Appends `records` in commits of `batch` events (fixture building).
  static func load(
    _ records: some Sequence<MixedEventRecord>, into store: EventStore, batch: Int
  ) async throws {
    var pending: [EventStore.StreamAppend] = []
    pending.reserveCapacity(batch)
    for record in records {
      pending.append(try append(for: record))
      if pending.count == batch {
        try await store.append(pending)
        pending.removeAll(keepingCapacity: true)
      }
    }
    if !pending.isEmpty { try await store.append(pending) }
  }

  /// The outcome line of an append workload: events in the log, bookings in the read model.
  static func appendOutcome(_ store: EventStore) throws -> String {
    let bookings = try store.read { try BookingsProjection.table.reader(in: $0).count() }
    return "events=\(try store.head()) bookings=\(bookings)"
  }

  /// The outcome line of a replay (``ReadModelFingerprint``): the listings in name and date
  /// order, and the replay's by-ID tables.
  static func outcome(
    of replay: EventStore.ReplayResult, keyring: SubjectKeyring, restaurants: [Restaurant],
    bookings: [Booking]
  ) throws -> String {
    try outcome(
      restaurants: RestaurantsProjection.table.reader(in: replay),
      bookings: BookingsProjection.table.reader(in: replay), keyring: keyring, listed: (restaurants, bookings)
    )
  }

  /// The outcome line (``ReadModelFingerprint``) of the read models behind two table readers, a
  /// live snapshot's or a replay's: the listings in name and date order (`listed`, when the run
  /// already read them; else read here), then every row by ID.
  static func outcome(
    restaurants: TableReader<RestaurantRow>, bookings: TableReader<BookingRow>, keyring: SubjectKeyring,
    listed: (restaurants: [Restaurant], bookings: [Booking])? = nil
  ) throws -> String {
    try ReadModelFingerprint.outcome(
      restaurantsByName: listed?.restaurants
        ?? restaurants.rows(in: RestaurantsProjection.byName, as: Restaurant.init),
      restaurantCount: restaurants.count(),
      restaurant: { try restaurants.row(forKey: .uuid($0)).map(Restaurant.init) },
      bookingsByDate: listed?.bookings
        ?? bookings.rows(in: BookingsProjection.byDate) { Booking($0, keyring: keyring) },
      bookingCount: bookings.count(),
      booking: { try bookings.row(forKey: .uuid($0)).map { Booking($0, keyring: keyring) } })
  }

  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    if workload.needsServer { return try await ReplicationFixture.build(workload, size: size, at: path) }
    let store = try Self.open(path, durable: false)
    switch workload {
    case .replay:
      var generator = MixedEventGenerator()
      for range in batches(size, of: BenchmarkDefaults.fixtureBatch) {
        try await Self.load(generator.next(range.count), into: store, batch: range.count)
      }
    case .readAll:
      try await Self.load(
        Fixtures.readModelEvents(size: size), into: store, batch: BenchmarkDefaults.fixtureBatch)
    case .syncDiff:
      let scenario = SyncScenario(size: size)
      let repository = EventSourcedRestaurantRepository(
        store: store, source: MemoryRestaurantSource(rows: scenario.local), origin: "bench")
      _ = try await repository.refresh()
    case .auditQuery:
      try await EventLogAudit.prepare(size: size, at: path)
    case .appendBatched, .appendSingle, .appendConcurrent, .replicatePush, .replicatePull:
      throw UnsupportedWorkload(workload: workload, system: .eventlog)
    }
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    switch workload {
    case .appendBatched:
      let store = try Self.open(directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for range in batches(size, of: batchSize) {
          try await store.append(try records[range].map(Self.append(for:)))
        }
      } finish: {
        try Self.appendOutcome(store)
      }
    case .appendSingle:
      let store = try Self.open(directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      return PreparedRun(operations: size) {
        for record in records {
          let append = try Self.append(for: record)
          try await store.append(append.events, to: append.stream, expectedVersion: append.expectedVersion)
        }
      } finish: {
        try Self.appendOutcome(store)
      }
    case .appendConcurrent:
      let store = try Self.open(directory, durable: true)
      let records = Fixtures.bookingCreations(count: size)
      let shares = ConcurrentWorkload.shares(of: records)
      return PreparedRun(operations: size) {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for share in shares {
            group.addTask {
              for record in share {
                let append = try Self.append(for: record)
                try await store.append(
                  append.events, to: append.stream, expectedVersion: append.expectedVersion)
              }
            }
          }
          try await group.waitForAll()
        }
      } finish: {
        try Self.appendOutcome(store)
      }
    case .replay:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      let store = try Self.open(fixture, durable: true)
      let box = ReplayOutcome()
      return PreparedRun(operations: size) {
        // The replay, then the two orders as the repositories list them (`eventlog replay --json`).
        let replay = try store.replay()
        let keyring = replay.keyring
        box.restaurants = try RestaurantsProjection.table.reader(in: replay)
          .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
        box.bookings = try BookingsProjection.table.reader(in: replay)
          .rows(in: BookingsProjection.byDate) { Booking($0, keyring: keyring) }
        box.keyring = keyring
        box.result = replay
      } finish: {
        guard let replay = box.result else { return "no replay" }
        defer { box.clear() }
        return try Self.outcome(
          of: replay, keyring: box.keyring, restaurants: box.restaurants, bookings: box.bookings)
      }
    case .syncDiff:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      try FileSystem.copyDirectory(fixture, to: directory)
      let store = try Self.open(directory, durable: true)
      let scenario = SyncScenario(size: size)
      let repository = EventSourcedRestaurantRepository(
        store: store, source: MemoryRestaurantSource(rows: scenario.remote), origin: "bench")
      let box = SummaryBox()
      return PreparedRun(operations: size) {
        box.summary = try await repository.refresh()
      } finish: {
        guard let s = box.summary else { return "no refresh" }
        let catalog = try store.read {
          try RestaurantsProjection.table.reader(in: $0).rows(as: Restaurant.init)
        }
        return "added=\(s.added) updated=\(s.updated) removed=\(s.removed) unchanged=\(s.unchanged) "
          + ReadModelFingerprint.outcome(restaurants: catalog)
      }
    case .readAll:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      let store = try Self.open(fixture, durable: true)
      let restaurantRepository = EventSourcedRestaurantRepository(
        store: store, source: MemoryRestaurantSource(rows: []), origin: "bench")
      let bookingRepository = EventSourcedBookingRepository(store: store, origin: "bench")
      let box = ListsBox()
      return PreparedRun(operations: size) {
        box.restaurants = try await restaurantRepository.getAll()
        box.bookings = try await bookingRepository.getAll()
      } finish: {
        box.outcome()
      }
    case .replicatePush:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      let run = try ReplicationFixture.PushRun(fixture: fixture, directory: directory)
      let (replicator, transport) = try await Self.checkedReplicator(store: run.store, url: run.url)
      let box = ReplicationBox()
      return PreparedRun(
        operations: size,
        body: { box.push = try await replicator.push() },
        finish: {
          transport.close()
          guard let summary = box.push else { return "no push" }
          return try run.finish(stored: summary.pushed)
        },
        externalCPUSeconds: try run.backendCPU())
    case .replicatePull:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      let run = try ReplicationFixture.PullRun(fixture: fixture, directory: directory)
      let (replicator, transport) = try await Self.checkedReplicator(store: run.store, url: run.url)
      let box = ReplicationBox()
      return PreparedRun(
        operations: size,
        body: { box.pull = try await replicator.pull() },
        finish: {
          transport.close()
          guard let summary = box.pull else { return "no pull" }
          return "pulled=\(summary.pulled) " + (try run.finish())
        },
        externalCPUSeconds: try run.backendCPU())
    case .auditQuery:
      guard let fixture else { throw UnsupportedWorkload(workload: workload, system: .eventlog) }
      return try EventLogAudit.run(size: size, fixture: fixture)
    }
  }
}

/// What a replicate run's measured closure hands to its `finish`.
final class ReplicationBox {
  var push: PushSummary?
  var pull: PullSummary?
}

/// The in-memory remote of `sync.diff`: returns its snapshot at once, so only the diff and its
/// append are measured.
struct MemoryRestaurantSource: RestaurantSource {
  var rows: [RemoteRestaurant]
  var sourceDescription: String { "memory" }
  func fetchAll() async throws -> [RemoteRestaurant] { rows }
}

/// What the measured closure of a run hands to its `finish` (same task, one after the other).
final class ReplayOutcome {
  var result: EventStore.ReplayResult?
  var restaurants: [Restaurant] = []
  var bookings: [Booking] = []
  var keyring = SubjectKeyring()

  func clear() {
    result = nil
    keyring = SubjectKeyring()
    restaurants = []
    bookings = []
  }
}

final class SummaryBox {
  var summary: RefreshSummary?
}

/// The lists a `read.all` run read, for its `finish`.
final class ListsBox {
  var restaurants: [Restaurant] = []
  var bookings: [Booking] = []

  /// The outcome line (``ReadModelFingerprint``); empties the box.
  func outcome() -> String {
    defer { (restaurants, bookings) = ([], []) }
    return ReadModelFingerprint.outcome(restaurants: restaurants, bookings: bookings)
  }
}
