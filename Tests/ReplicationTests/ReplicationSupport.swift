import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

extension EventStore.Options {
  /// Test options: no flush per commit.
  static var fast: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 16 << 20
    options.subscriptionPollInterval = .milliseconds(20)
    return options
  }
}

/// A database of its own on the shared test server, with the eventlog schema, and roles that
/// stand for customers (owners).
struct ServerFixture: Sendable {
  let server: PostgresTestServer
  let database: String
  let owner: String
  let ownerPassword: String

  /// A fresh database; `initialized` runs `remote init` on it as its owner, telling the server
  /// the app's replicated streams (an empty list: the server accepts every stream).
  init(
    initialized: Bool = true,
    replicatedStreamPrefixes: [String] = RestaurantBookingSchema.replicatedStreamPrefixes
  ) async throws {
    server = try PostgresTestServer.shared()
    (database, owner, ownerPassword) = try server.createDatabase()
    if initialized {
      let transport = try PostgresTransport(url: ownerURL)
      defer { transport.close() }
      _ = try await transport.initializeSchema(replicatedStreamPrefixes: replicatedStreamPrefixes)
    }
  }

  /// The database owner's URL (the role that runs `remote init`).
  var ownerURL: String { server.url(user: owner, password: ownerPassword, database: database) }

  /// A new customer: a login role, and its URL on this database.
  func customer(_ label: String = "customer") throws -> Customer {
    let name = server.uniqueName(label)
    let password = "pw" + UUID().uuidString.prefix(12).lowercased()
    try server.createRole(name, password: password)
    return Customer(
      role: name, password: password, url: server.url(user: name, password: password, database: database))
  }

  /// Runs `sql` as the superuser on this database.
  func superuser(_ sql: String) throws { try server.superuser(sql, database: database) }
}

/// A role that stands for one customer.
struct Customer: Sendable {
  var role: String
  var password: String
  var url: String
}

/// One device: an environment with the domain's projections, and its replicator.
final class Device: Sendable {
  let directory: TemporaryDirectory
  let store: EventStore
  let transport: PostgresTransport
  let replicator: Replicator

  init(
    _ customer: Customer, options: ReplicationOptions = Device.quickOptions,
    at directory: TemporaryDirectory = TemporaryDirectory("device"), schema: AppSchema = .restaurantBooking
  ) throws {
    self.directory = directory
    store = try EventStore(path: directory.environment(), schema: schema, options: .fast)
    transport = try PostgresTransport(url: customer.url, statementTimeout: .seconds(20))
    replicator = Replicator(store: store, transport: transport, options: options)
  }

  deinit { transport.close() }

  static var quickOptions: ReplicationOptions {
    var options = ReplicationOptions()
    // The deadline of a whole push or pull, not only of its retries: generous, for a loaded
    // machine; the tests of the budget itself set their own.
    options.retryFor = .seconds(60)
    options.initialBackoff = .milliseconds(20)
    options.maximumBackoff = .milliseconds(200)
    options.pollInterval = .milliseconds(300)
    return options
  }

  var bookings: EventSourcedBookingRepository { EventSourcedBookingRepository(store: store, origin: "test") }

  /// Adds a restaurant to this device's catalog (as a sync would).
  @discardableResult
  func addRestaurant(_ name: String = "Pasta Palace", id: UUID = UUID()) async throws -> UUID {
    try await store.append(
      [try NewEvent(RestaurantAdded(restaurantID: id, name: name, cuisine: "italian"))],
      to: RestaurantBookingStreams.catalog)
    return id
  }

  /// Books a table at `restaurant`.
  func book(_ restaurant: UUID, name: String = "Ada") async throws -> Booking {
    try await bookings.create(
      restaurantID: restaurant, date: Date().addingTimeInterval(86_400 * 7), partySize: 2, customerName: name,
      notes: nil)
  }

  func push() async throws -> PushSummary { try await replicator.push() }

  /// The outgoing form of this device's replicated events, with their payloads' JSON.
  func outgoing() throws -> [OutgoingEvent] {
    try store.events(from: 1).filter { RestaurantBookingSchema.isReplicated($0.stream) }.map(outgoing)
  }

  /// The outgoing form of `event`, with its payload's JSON as a push sends it.
  func outgoing(_ event: RecordedEvent) throws -> OutgoingEvent {
    OutgoingEvent(event, payload: Array(try #require(try RestaurantBookingSchema.eventTypes.json(of: event))))
  }
  func pull() async throws -> PullSummary { try await replicator.pull() }

  /// The bookings, as the repository returns them.
  func allBookings() async throws -> [Booking] { try await bookings.getAll() }

  /// Verify and replay agree with the live projections.
  func expectHealthy(sourceLocation: SourceLocation = #_sourceLocation) throws {
    let report = try store.verify()
    #expect(report.isClean, "verify: \(report.problems)", sourceLocation: sourceLocation)
    #expect(try store.firstDifference(from: store.replay()) == nil, sourceLocation: sourceLocation)
  }
}

extension DeviceCredentials {
  /// A device of its own, with a fresh key.
  static func random() -> DeviceCredentials {
    DeviceCredentials(
      id: UUID(), key: (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
    )
  }
}

/// The number of events of `role` on the server (as the superuser sees them).
func serverEventIDs(_ fixture: ServerFixture, owner: String) throws -> [UUID] {
  let connection = try PostgresConnection(
    PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
  defer { connection.close() }
  // Owners are keyed on the role's OID (schema version 3), which survives a rename.
  let rows = try connection.query(
    """
    SELECT id FROM eventlog.events
    WHERE owner = 'role:' || (SELECT oid FROM pg_roles WHERE rolname = $1)::text ORDER BY position
    """, [.text(owner)], purpose: "count")
  return try (0..<rows.count).map { try rows.uuid($0, "id") }
}
