import EventLog
import Foundation
import HTTP
import HTTPTestSupport
import PostgRESTTestSupport
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import ReplicationSupabase
import RestaurantBooking
import Synchronization
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

/// The suites of this target that use PostgreSQL, one test at a time: each test holds a project
/// (a database, the stand-in and its pooled connections) on the shared server, whose connection
/// slots every suite running meanwhile needs too.
@Suite(.needsPostgres, .serialized)
enum SupabaseReplication {}

/// A Supabase project for one test: Supabase's auth pieces and the stand-in over a database of
/// its own, on which `eventlog remote init` (as the database's owner) set up API mode, and
/// `eventlog_api` exposed.
struct APIProject: Sendable {
  let project: SupabaseTestProject

  /// - Parameters:
  ///   - initialized: whether `remote init` runs.
  ///   - exposedSchemas: the API's exposed schemas.
  ///   - configure: changes to the stand-in's configuration.
  /// - Throws: when the project cannot be set up.
  init(
    initialized: Bool = true, exposedSchemas: [String] = ["eventlog_api"],
    configure: (inout PostgRESTStandIn.Configuration) -> Void = { _ in }
  ) async throws {
    // Tried again, up to five times a second apart, while the shared server has no connection
    // slot free (every suite running meanwhile uses them; the set-up is a test's precondition, not
    // what it checks).
    var attempt = 1
    while true {
      do {
        project = try await Self.setUp(
          initialized: initialized, exposedSchemas: exposedSchemas, configure: configure)
        return
      } catch let error where attempt < 5 && "\(error)".contains("remaining connection slots") {
        attempt += 1
        try await Task.sleep(for: .seconds(1))
      }
    }
  }

  private static func setUp(
    initialized: Bool, exposedSchemas: [String], configure: (inout PostgRESTStandIn.Configuration) -> Void
  ) async throws -> SupabaseTestProject {
    // Two pooled connections are enough for a test (a long poll and a call beside it).
    let project = try SupabaseTestProject(exposedSchemas: exposedSchemas) { configuration in
      configuration.poolSize = 2
      configure(&configuration)
    }
    if initialized {
      let transport = try PostgresTransport(url: project.ownerURL)
      defer { transport.close() }
      let report = try await transport.initializeSchema(
        replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes)
      #expect(report.api, "remote init set up API mode")
    }
    return project
  }

  var standIn: PostgRESTStandIn { project.standIn }
  var url: URL { project.baseURL }
  var anonKey: String { project.anonKey }

  /// A signed-in user's valid access token.
  func token(_ user: UUID, expiresIn: Duration = .seconds(3600)) -> String {
    project.accessToken(for: user, expiresIn: expiresIn)
  }

  /// A transport for `tokens`, with short timeouts for tests.
  func transport(
    _ tokens: Tokens, requestTimeout: Duration = .seconds(20), longPollWait: Duration = .seconds(2)
  ) throws -> SupabaseTransport {
    try SupabaseTransport(
      projectURL: url, apiKey: anonKey, requestTimeout: requestTimeout, longPollWait: longPollWait,
      accessToken: tokens.provider)
  }

  /// The IDs of `user`'s events on the server, in position order (as the superuser sees them).
  func serverEventIDs(of user: UUID) throws -> [UUID] {
    try query(
      "SELECT id FROM eventlog.events WHERE owner = $1 ORDER BY position",
      [.text("user:\(user.lowercasedString)")]
    ) { rows in try (0..<rows.count).map { try rows.uuid($0, "id") } }
  }

  /// How many events the server holds, of every owner.
  func serverEventCount() throws -> Int {
    try query("SELECT count(*) AS n FROM eventlog.events", []) { try $0.integer(0, "n", as: Int.self) }
  }

  /// Runs `sql` as the superuser on the project's database and reads its rows with `read`.
  func query<T>(_ sql: String, _ parameters: [PostgresValue], _ read: (PostgresRows) throws -> T) throws -> T
  {
    let connection = try PostgresConnection(
      PostgresConfiguration(url: project.server.url(database: project.database)))
    defer { connection.close() }
    return try read(try connection.query(sql, parameters, purpose: "inspect the server"))
  }
}

/// The access tokens a device's transport is given, and what it asked for: a queue of answers
/// (each used once; the last one stays), and a log of the `refresh` flags it was asked with.
final class Tokens: Sendable {
  private let state: Mutex<(answers: [String?], refreshes: [Bool])>
  /// The answer to a `refresh: true` request, when set; else the next one of the queue.
  private let refreshed: String?

  /// - Parameters:
  ///   - answers: the tokens given in turn, the last for ever after (`nil`: no session).
  ///   - refreshed: the token given when asked to refresh, if it differs.
  init(_ answers: String?..., refreshed: String? = nil) {
    state = Mutex((answers, []))
    self.refreshed = refreshed
  }

  var provider: SupabaseTransport.AccessTokenProvider {
    { [self] refresh in
      state.withLock { state in
        state.refreshes.append(refresh)
        if refresh, let refreshed { return refreshed }
        if state.answers.count > 1 { return state.answers.removeFirst() }
        return state.answers.first ?? nil
      }
    }
  }

  /// The `refresh` flag of every request, in order.
  var refreshes: [Bool] { state.withLock { $0.refreshes } }
}

/// One device of a user: an environment with the domain's projections, and its replicator through
/// the project's API.
final class APIDevice: Sendable {
  let directory: TemporaryDirectory
  let store: EventStore
  let transport: SupabaseTransport
  let replicator: Replicator

  init(_ project: APIProject, tokens: Tokens, options: ReplicationOptions = APIDevice.quickOptions) throws {
    directory = TemporaryDirectory("api-device")
    store = try EventStore(path: directory.environment(), schema: .restaurantBooking, options: .fast)
    transport = try project.transport(tokens)
    replicator = Replicator(store: store, transport: transport, options: options)
  }

  deinit { transport.close() }

  static var quickOptions: ReplicationOptions {
    var options = ReplicationOptions()
    // Generous for a loaded 2-core machine; the tests of the budget set their own.
    options.retryFor = .seconds(60)
    options.initialBackoff = .milliseconds(20)
    options.maximumBackoff = .milliseconds(200)
    options.pollInterval = .seconds(30)
    options.minimumPullInterval = .milliseconds(50)
    return options
  }

  var bookings: EventSourcedBookingRepository { EventSourcedBookingRepository(store: store, origin: "test") }

  /// Adds a restaurant to this device's catalog (as a sync would).
  func addRestaurant(_ name: String = "Pasta Palace") async throws -> UUID {
    let id = UUID()
    try await store.append(
      [try NewEvent(RestaurantAdded(restaurantID: id, name: name, cuisine: "italian"))],
      to: RestaurantBookingStreams.catalog)
    return id
  }

  /// Books a table at `restaurant`.
  @discardableResult
  func book(_ restaurant: UUID, name: String = "Ada") async throws -> Booking {
    try await bookings.create(
      restaurantID: restaurant, date: Date().addingTimeInterval(86_400 * 7), partySize: 2, customerName: name,
      notes: nil)
  }

  /// The bookings' IDs, sorted.
  func bookingIDs() async throws -> [UUID] {
    try await bookings.getAll().map(\.id).sorted { $0.uuidString < $1.uuidString }
  }

  /// The IDs of this device's replicated events, in local order.
  func replicatedEventIDs() throws -> [UUID] {
    try store.events(from: 1).filter { RestaurantBookingSchema.isReplicated($0.stream) }.map(\.id)
  }

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

/// Sorted UUIDs, for comparing sets of IDs.
func sorted(_ ids: [UUID]) -> [UUID] { ids.sorted { $0.uuidString < $1.uuidString } }

/// An answer of the stand-in to a call made by hand.
struct RPCAnswer: Sendable, CustomStringConvertible {
  var status: Int
  var body: String

  /// PostgREST's error `code`, if the body is an error.
  var code: String? { (object as? [String: Any])?["code"] as? String }
  /// The rows of a set-returning function's answer.
  var rows: [[String: Any]] { object as? [[String: Any]] ?? [] }
  private var object: Any? {
    try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])
  }

  var description: String { "HTTP \(status): \(body.prefix(500))" }
}

extension APIProject {
  /// `POST /rest/v1/rpc/<function>` by hand, with the project's API key, `token` as the bearer
  /// (none when `nil`) and `profile` as the `Content-Profile`.
  func rpc(
    _ function: String, _ body: String, token: String?, profile: String = "eventlog_api"
  ) async throws -> RPCAnswer {
    var headers = [
      HTTPHeader("apikey", anonKey), HTTPHeader("Content-Type", "application/json"),
      HTTPHeader("Content-Profile", profile),
    ]
    if let token { headers.append(HTTPHeader("Authorization", "Bearer \(token)")) }
    let response = try await HTTPClient.send(
      HTTPRequest(
        url: url.appending(path: "/rest/v1/rpc/\(function)"), method: .post, headers: headers,
        body: Data(body.utf8),
        timeout: .seconds(20), usesEnvironmentProxy: false))
    return RPCAnswer(status: response.status, body: String(decoding: response.body, as: UTF8.self))
  }
}

/// The JSON a push sends for a local event's payload.
enum PayloadJSON {
  static func of(_ event: RecordedEvent) -> [UInt8] {
    (try? RestaurantBookingSchema.eventTypes.json(of: event)).map { Array($0) } ?? Array("{}".utf8)
  }
}

/// A server that answers as a test says, at a project URL: a hostile or broken "Supabase".
struct HostileProject: Sendable {
  let server: LoopbackHTTPServer

  init(_ handler: @escaping LoopbackHTTPServer.Handler) throws {
    server = try LoopbackHTTPServer(maximumConnections: 1_000, handler: handler)
  }

  var url: URL { server.baseURL }
}
