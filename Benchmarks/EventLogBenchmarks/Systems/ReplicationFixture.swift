import EventLog
import Foundation
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit

/// The fixtures and the per-run set-up of `replicate.push` and `replicate.pull`, the same for
/// every system.
///
/// - `replicate.push` starts from a local log of N `BookingCreated` events (the append
///   workloads' records, version-7 IDs from ``FixtureIDs``), built once with the library; every
///   run works on a fresh copy of it (a push writes its mark) and pushes it into a fresh server
///   database (``ReplicationDatabase/create(on:for:)``).
/// - `replicate.pull` starts from a server database holding those N events, pushed once by
///   ``Replicator/push(progress:onRetry:shouldStop:)`` with the domain's event types (so the
///   server holds their JSON payloads, as a device's push leaves them) from such a log; the
///   fixture directory records the database and its roles (``serverFile``). The same log is then
///   pushed through the HTTPS transport into a Supabase project's database on the same server
///   (``APIDatabase``, ``apiServerFile``), for `eventlog-https`. Every run pulls one of them
///   into a fresh local log.
///
/// `eventlog` connects as a customer role (neither a superuser nor the database's owner), as a
/// device does; `libpq-raw` as the database's owner (``ReplicationDatabase``); `eventlog-https`
/// reaches a Supabase project's database through the PostgREST stand-in, as a signed-in user.
/// Local logs are durable during the runs, as users run them.
enum ReplicationFixture {
  /// The fixture's local log (`replicate.push`).
  static let localLog = "local"
  /// The fixture's server database, as JSON (`replicate.pull`).
  static let serverFile = "server.json"
  /// The fixture's Supabase project database for `eventlog-https` (``APIDatabase``), as JSON
  /// (`replicate.pull`).
  static let apiServerFile = "api-server.json"

  /// Opens a local log as the `eventlog` command does, with the domain's schema (its projections,
  /// admission, event types and replicated streams).
  static func open(_ path: String, durable: Bool) throws -> EventStore {
    var options = EventStore.Options()
    options.mapSize = BenchmarkDefaults.mapSize
    options.durability = durable ? .durable : .noSync
    return try EventStore(path: path, schema: .restaurantBooking, options: options)
  }

  /// Builds the fixture of `workload` at `path` (not measured).
  static func build(_ workload: Workload, size: Int, at path: String) async throws {
    try FileSystem.createDirectory(path)
    let local = path + "/" + localLog
    let store = try open(local, durable: false)
    try await EventLogSystem.load(
      Fixtures.bookingCreations(count: size), into: store, batch: BenchmarkDefaults.fixtureBatch)
    guard workload == .replicatePull else { return }
    let server = try BenchmarkServer.attached()
    let database = try ReplicationDatabase.create(on: server, for: try BenchmarkServer.customer(on: server))
    let transport = try PostgresTransport(url: database.url(on: server))
    defer { transport.close() }
    // The store's schema gives the payloads their JSON form on the server.
    let summary = try await Replicator(
      store: store, transport: transport, options: BenchmarkServer.replicationOptions
    ).push()
    guard summary.pushed == size else {
      throw BenchmarkServer.Failure(
        description: "the pull fixture's push stored \(summary.pushed) of \(size) events")
    }
    try PayloadJSONEncoder().encode(database).write(to: URL(fileURLWithPath: path + "/" + serverFile))
    // The same events for `eventlog-https`, in a Supabase project's database on the same server,
    // pushed through its API as the user's: the same log pushed again, so that the rows differ only
    // by their owner.
    let api = try APIDatabase.create(on: server)
    defer { api.stop() }
    let https = try api.transport()
    defer { https.close() }
    // Another owner (the API's user) for the same log: the device is moved to it on purpose, which
    // forgets its marks, so that the whole outbox goes again.
    let apiReplicator = Replicator(
      store: store, transport: https, options: BenchmarkServer.replicationOptions)
    _ = try await apiReplicator.reassign(to: try await https.serverInfo().owner)
    let apiSummary = try await apiReplicator.push()
    guard apiSummary.pushed == size else {
      throw BenchmarkServer.Failure(
        description: "the pull fixture's push through the API stored \(apiSummary.pushed) of \(size) events")
    }
    try PayloadJSONEncoder().encode(api.record).write(to: URL(fileURLWithPath: path + "/" + apiServerFile))
    FileSystem.remove(local)  // the server holds the fixture now
  }

  /// What one run of `replicate.push` starts from, made before the clock: a fresh copy of the
  /// fixture's local log, opened durable, and a fresh server database.
  struct PushRun {
    let server: PostgresTestServer
    let database: ReplicationDatabase
    let store: EventStore

    /// A fresh copy of `fixture`'s local log in `directory`, opened durable, and a fresh server
    /// database.
    init(fixture: String, directory: String) throws {
      let server = try BenchmarkServer.attached()
      try self.init(
        fixture: fixture, directory: directory, server: server,
        database: try ReplicationDatabase.create(on: server, for: try BenchmarkServer.customer(on: server)))
    }

    /// A fresh copy of `fixture`'s local log in `directory`, opened durable, to be pushed into
    /// `database` (fresh; `eventlog-https`: a Supabase project's, ``APIDatabase``).
    init(fixture: String, directory: String, server: PostgresTestServer, database: ReplicationDatabase) throws
    {
      try FileSystem.copyDirectory(fixture + "/" + ReplicationFixture.localLog, to: directory)
      self.server = server
      self.database = database
      store = try ReplicationFixture.open(directory, durable: true)
    }

    var url: String { database.url(on: server) }

    /// The URL the database's owner connects with.
    var ownerURL: String { database.ownerURL(on: server) }

    /// The CPU seconds of the customer's server backends, found now (after the run's connection
    /// was made), read at each call.
    func backendCPU() throws -> () -> Double {
      let pids = try database.backends(on: server)
      return { ReplicationDatabase.cpuSeconds(of: pids) }
    }

    /// The outcome line after the push: the events the run stored, what the server holds
    /// (``ReplicationDatabase/pushOutcome(on:device:deviceKey:)``), the local pushed mark and
    /// replication state (``stateOutcome(_:)``); then the database is dropped.
    func finish(stored: Int) throws -> String {
      let local = try LocalReplica(store: store).pushedThrough()
      guard let device = store.deviceID,
        let key = try store.stateValue(forKey: Array("replication.device-key".utf8))
      else {
        throw BenchmarkServer.Failure(description: "the pushed log has no device ID or no device key")
      }
      let line =
        "pushed=\(stored) "
        + (try database.pushOutcome(
          on: server, device: device, deviceKey: String(decoding: key, as: UTF8.self)))
        + " localMark=\(local) " + (try ReplicationFixture.stateOutcome(store))
      try database.drop(on: server)
      return line
    }
  }

  /// What one run of `replicate.pull` starts from, made before the clock: the fixture's server
  /// database and a fresh local log, opened durable.
  struct PullRun {
    let server: PostgresTestServer
    let database: ReplicationDatabase
    let store: EventStore

    init(fixture: String, directory: String) throws {
      server = try BenchmarkServer.attached()
      database = try PayloadJSONDecoder().decode(
        ReplicationDatabase.self, from: Data(contentsOf: URL(fileURLWithPath: fixture + "/" + serverFile)))
      store = try ReplicationFixture.open(directory, durable: true)
    }

    var url: String { database.url(on: server) }

    /// The URL the database's owner connects with.
    var ownerURL: String { database.ownerURL(on: server) }

    /// As ``PushRun/backendCPU()``.
    func backendCPU() throws -> () -> Double {
      let pids = try database.backends(on: server)
      return { ReplicationDatabase.cpuSeconds(of: pids) }
    }

    /// The outcome line after the pull (``pullOutcome(_:)``).
    func finish() throws -> String { try ReplicationFixture.pullOutcome(store) }
  }

  /// The outcome line of a local log after a pull: `events=N cursor=C cursorEvent=<ID>
  /// restaurants=R bookings=B fingerprint=<read models> log=<events> state=<replication state>`.
  /// The cursor is the position and the event ID the pull recorded there; the read models'
  /// fingerprint is ``ReadModelFingerprint``'s (the repositories' listings and lookups); `log`
  /// hashes every event (sequence, ID, stream, version, type, schema version, payload, metadata,
  /// recorded-at, data subjects) with where the pull recorded it came from (server position,
  /// origin device and sequence); `keys` the data subjects' keys the pull stored; `state` is
  /// ``stateOutcome(_:)``.
  static func pullOutcome(_ store: EventStore) throws -> String {
    let replica = LocalReplica(store: store)
    var hash = FNV1a64()
    var count = 0
    try store.forEachEvent { event in
      count += 1
      hash.add(event.sequence)
      withUnsafeBytes(of: event.id.uuid) { hash.add($0) }
      hash.add(event.stream.rawValue)
      hash.add(event.version)
      hash.add(event.type)
      hash.add(UInt64(event.schemaVersion))
      hash.add(event.payload)
      hash.add(event.metadata.correlationID?.uuidString ?? "-")
      hash.add(event.metadata.causationID?.uuidString ?? "-")
      hash.add(event.metadata.origin)
      hash.add(UInt64(bitPattern: event.recordedAt.microsecondsSince1970))
      hash.add(UInt64(event.subjects.count))
      for subject in event.subjects { withUnsafeBytes(of: subject.uuid) { hash.add($0) } }
      if let origin = try replica.origin(ofLocalSequence: event.sequence) {
        hash.add(origin.position)
        withUnsafeBytes(of: origin.device.uuid) { hash.add($0) }
        hash.add(origin.sequence)
      } else {
        hash.add("not pulled")
      }
      return true
    }
    let models = try store.read { view in
      try EventLogSystem.outcome(
        restaurants: RestaurantsProjection.table.reader(in: view),
        bookings: BookingsProjection.table.reader(in: view), keyring: try view.keyring())
    }
    let cursor = try replica.pullCursor()
    // The data subjects' keys the pull brought (the read models open the names with them).
    var keys = FNV1a64()
    let held = try store.subjectKeys().sorted { $0.subject.uuidString < $1.subject.uuidString }
    for key in held {
      withUnsafeBytes(of: key.subject.uuid) { keys.add($0) }
      keys.add(key.key)
    }
    return "events=\(count) cursor=\(cursor.position) "
      + "cursorEvent=\(cursor.eventID.map { $0.uuidString.lowercased() } ?? "-") \(models) log=\(hash.hex) "
      + "keys=\(held.count) keysHash=\(keys.hex) " + (try stateOutcome(store))
  }

  /// `state=<FNV-1a>` of every replication state entry of `store` (`replication.` keys and
  /// their values, in key order: marks, cursor, acknowledgements, where pulled events came
  /// from, the events' server positions, notes, the owner, the server's chain head), the device's
  /// secret key by its length only (each run makes its own), the owner by its key only (a role's
  /// `role:<oid>` over libpq, a user's `user:<uuid>` through the API; `owned=` counts each
  /// system's rows under its own), and the server's chain head by its length only (its value
  /// covers the owner).
  static func stateOutcome(_ store: EventStore) throws -> String {
    let deviceKey = Array("replication.device-key".utf8)
    let ownerKey = Array("replication.owner".utf8)
    let serverHeadKey = Array("replication.server-head".utf8)
    var hash = FNV1a64()
    var count: UInt64 = 0
    for entry in try store.stateEntries(withPrefix: Array("replication.".utf8)) {
      count += 1
      hash.add(UInt64(entry.key.count))
      hash.add(entry.key)
      if entry.key == ownerKey { continue }
      hash.add(UInt64(entry.value.count))
      if entry.key != deviceKey && entry.key != serverHeadKey { hash.add(entry.value) }
    }
    return "stateEntries=\(count) state=\(hash.hex)"
  }
}
