import Dispatch
import EventLog
import Foundation
import Postgres
import Replication

/// Replication over libpq: the SQL functions of ``ServerSchema``, called with parameters.
///
/// Two connections, each made on first use and made again after it broke: one for pushes and
/// pulls, one that only listens for the owner's notifications (`LISTEN` needs a direct or
/// session connection: Supabase's transaction pooler on port 6543 has none; live mode then
/// falls back to polling). Every blocking libpq call runs on a queue of the transport's own,
/// never on the caller's executor.
public final class PostgresTransport: ReplicationTransport {
  /// The server and the client's timeouts.
  public let configuration: PostgresConfiguration
  /// The server, as messages name it: `user@host:port/database`, never with the password.
  public var server: String { configuration.server }

  private let worker: LazyConnection
  private let listener: LazyConnection
  private let queue = DispatchQueue(label: "eventlog.replication.postgres")
  private let listenQueue = DispatchQueue(label: "eventlog.replication.postgres.listen")

  /// A transport for `url`; nothing connects until the first call.
  /// - Parameters:
  ///   - url: a `postgres://` or `postgresql://` URI.
  ///   - statementTimeout: the longest one statement may take (a one-shot command's deadline
  ///     bounds it further, ``ReplicationDeadline``).
  ///   - allowUnencrypted: whether a server on another host may be reached without TLS.
  /// - Throws: ``PostgresError`` when `url` is not a URI libpq accepts, or asks for an
  ///   unencrypted connection to another host without `allowUnencrypted`.
  public init(url: String, statementTimeout: Duration = .seconds(60), allowUnencrypted: Bool = false) throws {
    var configuration = try PostgresConfiguration(url: url, allowUnencrypted: allowUnencrypted)
    configuration.statementTimeout = statementTimeout
    self.configuration = configuration
    worker = LazyConnection(configuration)
    listener = LazyConnection(configuration)
  }

  /// Drops both connections; a later call connects again.
  public func close() {
    worker.close()
    listener.close()
  }

  /// Creates or upgrades the server schema and sets who may call it
  /// (``ServerSchema/initialize(on:migrations:replicatedStreamPrefixes:)``).
  /// - Returns: the schema versions before and after, the mode, and warnings.
  public func initializeSchema(
    migrations: [String] = ServerSchema.migrations, replicatedStreamPrefixes: [String]? = nil
  ) async throws -> ServerSchema.InitReport {
    try await run(on: queue) { [worker] in
      try ServerSchema.initialize(
        on: try worker.connection(), migrations: migrations,
        replicatedStreamPrefixes: replicatedStreamPrefixes)
    }
  }

  /// The stream-name prefixes the server accepts (``ServerSchema/replicatedStreams(on:)``), as the
  /// database's owner.
  /// - Returns: the prefixes, sorted; empty: every stream.
  /// - Throws: `ReplicationError.schemaMissing` when the server has no `eventlog` schema (or one
  ///   older than version 3, which had no such list), a ``PostgresError``.
  public func replicatedStreams() async throws -> [String] {
    try await ownerCall { connection in try ServerSchema.replicatedStreams(on: connection) }
  }

  /// Stops the server accepting the streams `prefix` starts
  /// (``ServerSchema/removeReplicatedStream(_:on:)``), as the database's owner.
  /// - Returns: the prefixes the server accepts after the removal, sorted.
  /// - Throws: ``ServerSchema/StreamsError`` (the prefix is not there, or is the last one),
  ///   `ReplicationError.schemaMissing`, a ``PostgresError``.
  public func removeReplicatedStream(_ prefix: String) async throws -> [String] {
    try await ownerCall { connection in try ServerSchema.removeReplicatedStream(prefix, on: connection) }
  }

  /// Runs `body` on the worker connection, reporting a database without the schema as such.
  private func ownerCall<T: Sendable>(
    _ body: @escaping @Sendable (PostgresConnection) throws -> T
  ) async throws -> T {
    let server = self.server
    do {
      return try await run(on: queue) { [worker] in try body(try worker.connection()) }
    } catch let error as PostgresError where ["3F000", "42P01"].contains(error.sqlState ?? "") {
      throw ReplicationError.schemaMissing(server: server)
    }
  }

  /// The server's view (`eventlog_api.server_info`).
  public func serverInfo() async throws -> ServerInfo {
    try await query("read the server's view") { connection, timeout in
      let rows = try connection.query(
        "SELECT schema_version, clients_from, owner, owner_head FROM eventlog_api.server_info()",
        purpose: "read the server's view", timeout: timeout)
      return ServerInfo(
        schemaVersion: Int(try rows.integer(0, "schema_version", as: Int64.self)),
        clientsFrom: Int(try rows.integer(0, "clients_from", as: Int64.self)),
        owner: try rows.string(0, "owner"), head: try rows.integer(0, "owner_head", as: UInt64.self))
    }
  }

  /// Stores `events` with `eventlog_api.push` in one server transaction, setting the device's
  /// pushed mark to `through`, and attesting `head` there (server schema version 5) when given.
  /// - Parameters:
  ///   - events: the batch, in local sequence order.
  ///   - device: this device's ID and key.
  ///   - through: the last local sequence the batch accounts for.
  ///   - head: this device's chain value at `through`, or `nil` (then the four-argument `push`,
  ///     which every server version has, is called).
  /// - Returns: an outcome per event, in order.
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` when the server
  ///   answers another number of rows, another order or an outcome it does not define.
  public func push(
    _ events: [OutgoingEvent], device: DeviceCredentials, through: UInt64, head: ChainValue?
  ) async throws -> [PushOutcome] {
    let body = String(decoding: ReplicationWire.events(events), as: UTF8.self)
    let server = self.server
    var parameters: [PostgresValue] = [.uuid(device.id), .text(device.key), .integer(through), .text(body)]
    if let head { parameters.append(.text(head.hex)) }
    let call =
      head == nil
      ? "eventlog_api.push($1, $2, $3, $4::jsonb)" : "eventlog_api.push($1, $2, $3, $4::jsonb, $5)"
    return try await query("push \(events.count) events") { [parameters] connection, timeout in
      let rows = try connection.query(
        "SELECT event_id, event_position, outcome, reason FROM \(call)", parameters,
        purpose: "push \(events.count) events", timeout: timeout)
      guard rows.count == events.count else {
        throw ReplicationError.protocolViolation(
          server: server, reason: "push answered \(rows.count) rows for \(events.count) events")
      }
      return try (0..<rows.count).map { row in
        guard try rows.value(row, "event_id").flatMap(UUID.init(uuidString:)) == events[row].id else {
          throw ReplicationError.protocolViolation(
            server: server, reason: "push answered row \(row + 1) out of order")
        }
        return try Self.outcome(
          try rows.string(row, "outcome"),
          position: try rows.value(row, "event_position").flatMap(UInt64.init),
          reason: try rows.value(row, "reason"), server: server)
      }
    }
  }

  /// A push outcome from the server's words.
  static func outcome(
    _ outcome: String, position: UInt64?, reason: String?, server: String
  ) throws -> PushOutcome {
    switch (outcome, position) {
    case ("stored", let position?): return .stored(position: position)
    case ("already_stored", let position?): return .alreadyStored(position: position)
    case ("conflict", _):
      return .conflict(position: position, reason: reason ?? "the server holds other content")
    case ("refused", _): return .refused(reason: reason ?? "refused by the server")
    default:
      throw ReplicationError.protocolViolation(
        server: server, reason: "push answered the outcome '\(outcome.prefix(40))' without a position")
    }
  }

  /// The device's pushed mark on the server (`eventlog_api.device_mark`), under its key.
  public func pushedMark(device: DeviceCredentials) async throws -> ServerMark {
    try await query("read the device's pushed mark") { connection, timeout in
      let rows = try connection.query(
        "SELECT pushed_through, last_sequence, last_id FROM eventlog_api.device_mark($1, $2)",
        [.uuid(device.id), .text(device.key)], purpose: "read the device's pushed mark", timeout: timeout)
      return ServerMark(
        pushedThrough: try rows.integer(0, "pushed_through", as: UInt64.self),
        lastSequence: try rows.value(0, "last_sequence").flatMap(UInt64.init),
        lastID: try rows.value(0, "last_id").flatMap(UUID.init(uuidString:)))
    }
  }

  /// The owner's last position on the server (`eventlog_api.head`), or 0.
  public func head() async throws -> UInt64 {
    try await query("read the owner's last position") { connection, timeout in
      try connection.query(
        "SELECT eventlog_api.head() AS head", purpose: "read the owner's last position", timeout: timeout
      ).integer(0, "head", as: UInt64.self)
    }
  }

  /// The owner's server events after `cursor` (`eventlog_api.pull`), in position order.
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``PostgresError``.
  public func pull(
    after cursor: PullCursor, limit: Int, maxBytes: Int, wait: Duration
  ) async throws -> [PulledRow] {
    let server = self.server
    let waitMilliseconds =
      wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000
    do {
      return try await query("pull the events after position \(cursor.position)") { connection, timeout in
        let rows = try connection.query(
          """
          SELECT event_position, event_id, origin_device, origin_sequence, stream, type, schema_version, payload,
            correlation_id, causation_id, origin, recorded_at_us FROM eventlog_api.pull($1, $2, $3, $4, $5)
          """,
          [
            .integer(cursor.position), cursor.eventID.map(PostgresValue.uuid) ?? .null, .integer(limit),
            .integer(maxBytes), .integer(waitMilliseconds),
          ], purpose: "pull the events after position \(cursor.position)", timeout: timeout)
        return try (0..<rows.count).map { row in
          try ReplicationWire.row(
            ReplicationWire.RowFields(
              position: try rows.value(row, "event_position"), id: try rows.value(row, "event_id"),
              originDevice: try rows.value(row, "origin_device"),
              originSequence: try rows.value(row, "origin_sequence"), stream: try rows.value(row, "stream"),
              type: try rows.value(row, "type"), schemaVersion: try rows.value(row, "schema_version"),
              payload: try rows.value(row, "payload").map { Array($0.utf8) },
              correlationID: try rows.value(row, "correlation_id"),
              causationID: try rows.value(row, "causation_id"), origin: try rows.value(row, "origin"),
              recordedAtMicroseconds: try rows.value(row, "recorded_at_us")),
            server: server)
        }
      }
    } catch let error as PostgresError where error.sqlState == "EL001" || error.sqlState == "EL002" {
      throw ReplicationError.serverChanged(server: server, reason: error.message)
    }
  }

  /// The owner's server rows after `cursor` with the server's chain (`eventlog_api.pull_chained`,
  /// server schema version 5), every column as the server sent it.
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``PostgresError``.
  public func pullChained(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields] {
    try await pullRows(after: cursor, limit: limit, maxBytes: maxBytes, withSubjects: false)
  }

  /// ``pullChained(after:limit:maxBytes:)``'s rows with each event's data subjects
  /// (`eventlog_api.pull_subjects`, server schema version 6).
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``PostgresError``.
  public func pullWithSubjects(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields] {
    try await pullRows(after: cursor, limit: limit, maxBytes: maxBytes, withSubjects: true)
  }

  /// The rows of `eventlog_api.pull_chained`, or of `pull_subjects` (the same columns and each
  /// event's subjects) when `withSubjects`.
  private func pullRows(
    after cursor: PullCursor, limit: Int, maxBytes: Int, withSubjects: Bool
  ) async throws -> [ReplicationWire.RowFields] {
    let server = self.server
    let source =
      withSubjects ? ", subjects FROM eventlog_api.pull_subjects" : " FROM eventlog_api.pull_chained"
    do {
      return try await query("pull the events after position \(cursor.position)") { connection, timeout in
        let rows = try connection.query(
          """
          SELECT event_position, event_id, origin_device, origin_sequence, pushed_by, pushed_sequence, stream,
            type, schema_version, payload, metadata, correlation_id, causation_id, origin, recorded_at_us, chain\(source)($1, $2, $3, $4, 0)
          """,
          [
            .integer(cursor.position), cursor.eventID.map(PostgresValue.uuid) ?? .null, .integer(limit),
            .integer(maxBytes),
          ], purpose: "pull the events after position \(cursor.position)", timeout: timeout)
        return try (0..<rows.count).map { row in
          ReplicationWire.RowFields(
            position: try rows.value(row, "event_position"), id: try rows.value(row, "event_id"),
            originDevice: try rows.value(row, "origin_device"),
            originSequence: try rows.value(row, "origin_sequence"), stream: try rows.value(row, "stream"),
            type: try rows.value(row, "type"), schemaVersion: try rows.value(row, "schema_version"),
            payload: try rows.value(row, "payload").map { Array($0.utf8) },
            correlationID: try rows.value(row, "correlation_id"),
            causationID: try rows.value(row, "causation_id"), origin: try rows.value(row, "origin"),
            recordedAtMicroseconds: try rows.value(row, "recorded_at_us"),
            pushedBy: try rows.value(row, "pushed_by"),
            pushedSequence: try rows.value(row, "pushed_sequence"),
            metadata: try rows.value(row, "metadata").map { Array($0.utf8) },
            chain: try rows.value(row, "chain"),
            subjects: withSubjects ? (try rows.value(row, "subjects") ?? "") : nil)
        }
      }
    } catch let error as PostgresError where error.sqlState == "EL001" || error.sqlState == "EL002" {
      throw ReplicationError.serverChanged(server: server, reason: error.message)
    }
  }

  /// Stores data subjects' keys with `eventlog_api.push_keys` (server schema version 6).
  /// - Returns: what the server did with each key, in order.
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` when the answer has
  ///   another number of rows, another order, or an outcome the server does not define.
  public func pushKeys(_ keys: [SubjectKey], device: UUID) async throws -> [KeyPushOutcome] {
    let server = self.server
    let body = String(decoding: ReplicationWire.keys(keys), as: UTF8.self)
    return try await query("push \(keys.count) data subjects' keys") { connection, timeout in
      let rows = try connection.query(
        "SELECT subject, outcome FROM eventlog_api.push_keys($1, $2::jsonb)", [.uuid(device), .text(body)],
        purpose: "push \(keys.count) data subjects' keys", timeout: timeout)
      guard rows.count == keys.count else {
        throw ReplicationError.protocolViolation(
          server: server, reason: "push_keys answered \(rows.count) rows for \(keys.count) keys")
      }
      return try (0..<rows.count).map { row in
        guard try rows.value(row, "subject").flatMap(UUID.init(uuidString:)) == keys[row].subject else {
          throw ReplicationError.protocolViolation(
            server: server, reason: "push_keys answered row \(row + 1) out of order")
        }
        return try ReplicationWire.keyOutcome(try rows.value(row, "outcome"), server: server)
      }
    }
  }

  /// The owner's keys stored after `serial` (`eventlog_api.pull_keys`, server schema version 6).
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` for a malformed row.
  public func pullKeys(after serial: UInt64, limit: Int) async throws -> [ServerSubjectKey] {
    let server = self.server
    return try await query("pull the data subjects' keys after \(serial)") { connection, timeout in
      let rows = try connection.query(
        "SELECT serial, subject, key, created_at_us FROM eventlog_api.pull_keys($1, $2)",
        [.integer(serial), .integer(limit)], purpose: "pull the data subjects' keys after \(serial)",
        timeout: timeout)
      return try (0..<rows.count).map { row in
        try ReplicationWire.serverKey(
          serial: try rows.value(row, "serial"), subject: try rows.value(row, "subject"),
          key: try rows.value(row, "key"), createdAtMicroseconds: try rows.value(row, "created_at_us"),
          server: server)
      }
    }
  }

  /// The heads the server accepted for `device` after attestation `after`
  /// (`eventlog_api.attested_heads`, server schema version 5).
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` for a malformed row.
  public func attestedHeads(device: UUID, after: UInt64, limit: Int) async throws -> [AttestedHead] {
    let server = self.server
    return try await query("read the heads attested for device \(device.lowercasedString)") {
      connection, timeout in
      let rows = try connection.query(
        """
        SELECT attestation, sequence, head, key_hash, server_position, server_head, attested_at_us
        FROM eventlog_api.attested_heads($1, $2, $3)
        """, [.uuid(device), .integer(after), .integer(limit)],
        purpose: "read the heads attested for device \(device.lowercasedString)", timeout: timeout)
      return try (0..<rows.count).map { row in
        try ReplicationWire.attestedHead(
          attestation: try rows.value(row, "attestation"), sequence: try rows.value(row, "sequence"),
          head: try rows.value(row, "head"), keyHash: try rows.value(row, "key_hash"),
          serverPosition: try rows.value(row, "server_position"),
          serverHead: try rows.value(row, "server_head"),
          attestedAtMicroseconds: try rows.value(row, "attested_at_us"), server: server)
      }
    }
  }

  /// Waits up to `timeout` for a notification on the owner's channel, listening to it first on
  /// the listening connection.
  /// - Parameter timeout: the longest to wait.
  /// - Returns: `true` when a notification arrived, `false` when the time ran out.
  /// - Throws: a ``PostgresError`` when connecting, finding the channel, `LISTEN` or the wait fails.
  public func waitForNews(upTo timeout: Duration) async throws -> Bool {
    try await run(on: listenQueue) { [listener] in
      let connection = try listener.connection()
      if !listener.isListening {
        let channel = try connection.query(
          "SELECT eventlog_api.channel() AS channel", purpose: "find the channel"
        )
        .string(0, "channel")
        try connection.listen(channel)
        listener.isListening = true
      }
      return !(try connection.notifications(waitingUpTo: timeout).isEmpty)
    }
  }

  /// Runs `body` on the worker's connection, on the transport's queue, with the statement
  /// deadline the command's ``ReplicationDeadline`` leaves.
  ///
  /// A function or schema that does not exist (`3F000`, `42883`) means a server of another
  /// schema version: the error says which, as ``checkSchema()`` does.
  func query<T: Sendable>(
    _ purpose: String, _ body: @escaping @Sendable (PostgresConnection, Duration) throws -> T
  ) async throws -> T {
    let timeout = ReplicationDeadline.remaining(capped: configuration.statementTimeout)
    do {
      return try await run(on: queue) { [worker] in try body(try worker.connection(within: timeout), timeout)
      }
    } catch let error as PostgresError where ["3F000", "42883"].contains(error.sqlState ?? "") {
      try await checkSchema()
      throw error
    }
  }

  func run<T: Sendable>(
    on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Result { try body() }) }
    }
  }
}
