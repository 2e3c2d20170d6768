import Dispatch
import EventLog
import Foundation
import Postgres
import Replication
import Synchronization

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

  private let worker: Lazy
  private let listener: Lazy
  private let queue = DispatchQueue(label: "eventlog.replication.postgres")
  private let listenQueue = DispatchQueue(label: "eventlog.replication.postgres.listen")

  /// A transport for `url`; nothing connects until the first call.
  /// - Throws: ``PostgresError`` when `url` is not a `postgres://` or `postgresql://` URI.
  public init(url: String, statementTimeout: Duration = .seconds(60)) throws {
    var configuration = try PostgresConfiguration(url: url)
    configuration.statementTimeout = statementTimeout
    self.configuration = configuration
    worker = Lazy(configuration)
    listener = Lazy(configuration)
  }

  /// Drops both connections; a later call connects again.
  public func close() {
    worker.close()
    listener.close()
  }

  /// Creates or upgrades the server schema (``ServerSchema/initialize(on:migrations:)``).
  /// - Returns: the schema version before and after.
  public func initializeSchema(
    migrations: [String] = ServerSchema.migrations
  ) async throws -> (from: Int, to: Int) {
    try await run(on: queue) { [worker] in
      try ServerSchema.initialize(on: try worker.connection(), migrations: migrations)
    }
  }

  /// Reads `eventlog.schema_info` and checks that this build speaks the server's schema version.
  /// - Throws: `ReplicationError.schemaMissing` when the server has no `eventlog` schema,
  ///   `ReplicationError.schemaTooOld` or `ReplicationError.schemaTooNew`, or a ``PostgresError``.
  public func checkSchema() async throws {
    let server = self.server
    let found: (version: Int, clientsFrom: Int?)
    do {
      found = try await run(on: queue) { [worker] in
        // `clients_from` arrived with version 2: read through the row's JSON so that a version 1
        // server answers too (null).
        let rows = try worker.connection().query(
          """
          SELECT s.version, (to_jsonb(s) ->> 'clients_from')::integer AS clients_from
          FROM eventlog.schema_info s
          """, purpose: "read the eventlog schema version")
        guard !rows.isEmpty else { return (0, nil) }
        let version = Int(try rows.integer(0, "version", as: Int64.self))
        guard try rows.value(0, "clients_from") != nil else { return (version, nil) }
        return (version, Int(try rows.integer(0, "clients_from", as: Int64.self)))
      }
    } catch let error as PostgresError where ["3F000", "42P01"].contains(error.sqlState ?? "") {
      throw ReplicationError.schemaMissing(server: server)
    }
    try Self.check(server: server, version: found.version, clientsFrom: found.clientsFrom)
  }

  /// Whether this build may use a server whose schema is `version`, which says that clients of
  /// schema `clientsFrom` and later may use it (`nil`: the server predates the column, and only
  /// clients of its own version or later may).
  static func check(server: String, version: Int, clientsFrom: Int?) throws {
    if version == 0 { throw ReplicationError.schemaMissing(server: server) }
    if version > ServerSchema.latestVersion && (clientsFrom ?? version) > ServerSchema.latestVersion {
      throw ReplicationError.schemaTooNew(
        server: server, found: version, supported: ServerSchema.latestVersion)
    }
    if version < ServerSchema.oldestServerVersion {
      throw ReplicationError.schemaTooOld(
        server: server, found: version, required: ServerSchema.oldestServerVersion)
    }
  }

  /// Stores `events` with `eventlog.push` in one server transaction, setting the device's pushed
  /// mark to `through`.
  /// - Parameters:
  ///   - events: the batch, in local sequence order.
  ///   - device: this device's ID.
  ///   - through: the last local sequence the batch accounts for.
  /// - Returns: an outcome per event, in order: stored, or held already, at its server position.
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` when the server
  ///   answers another number of rows or another order.
  public func push(_ events: [OutgoingEvent], device: UUID, through: UInt64) async throws -> [PushOutcome] {
    let body = Self.json(events)
    let server = self.server
    return try await run(on: queue) { [worker] in
      let rows = try worker.connection().query(
        "SELECT event_id, event_position, already_stored FROM eventlog.push($1, $2, $3::jsonb)",
        [.uuid(device), .integer(through), .text(body)], purpose: "push \(events.count) events")
      guard rows.count == events.count else {
        throw ReplicationError.protocolViolation(
          server: server, reason: "push answered \(rows.count) rows for \(events.count) events")
      }
      return try (0..<rows.count).map { row in
        guard try rows.uuid(row, "event_id") == events[row].id else {
          throw ReplicationError.protocolViolation(
            server: server, reason: "push answered row \(row + 1) out of order")
        }
        let position = try rows.integer(row, "event_position", as: UInt64.self)
        return try rows.string(row, "already_stored") == "t"
          ? .alreadyStored(position: position) : .stored(position: position)
      }
    }
  }

  /// The device's pushed mark on the server (`eventlog.device_mark`): the last local sequence it
  /// acknowledged, or 0.
  public func pushedMark(device: UUID) async throws -> UInt64 {
    try await run(on: queue) { [worker] in
      try worker.connection().query(
        "SELECT eventlog.device_mark($1) AS mark", [.uuid(device)], purpose: "read the device's pushed mark"
      ).integer(0, "mark", as: UInt64.self)
    }
  }

  /// The owner's last position on the server (`eventlog.head`), or 0.
  public func head() async throws -> UInt64 {
    try await run(on: queue) { [worker] in
      try worker.connection().query(
        "SELECT eventlog.head() AS head", purpose: "read the owner's last position"
      )
      .integer(0, "head", as: UInt64.self)
    }
  }

  /// The owner's server events after `position` (`eventlog.pull`), in position order.
  /// - Parameters:
  ///   - position: the last server position already pulled.
  ///   - limit: at most this many events.
  /// - Returns: the events, their positions following `position` without a gap.
  /// - Throws: a ``PostgresError``, or `ReplicationError.protocolViolation` when the positions
  ///   do not follow one another.
  public func pull(after position: UInt64, limit: Int) async throws -> [ServerEvent] {
    let server = self.server
    return try await run(on: queue) { [worker] in
      let rows = try worker.connection().query(
        """
        SELECT event_position, event_id, origin_device, origin_sequence, stream, type, schema_version, payload,
          correlation_id, causation_id, origin, recorded_at_us FROM eventlog.pull($1, $2)
        """, [.integer(position), .integer(limit)], purpose: "pull the events after position \(position)")
      var events: [ServerEvent] = []
      events.reserveCapacity(rows.count)
      var previous = position
      for row in 0..<rows.count {
        let event = ServerEvent(
          position: try rows.integer(row, "event_position", as: UInt64.self),
          id: try rows.uuid(row, "event_id"),
          originDevice: try rows.uuid(row, "origin_device"),
          originSequence: try rows.integer(row, "origin_sequence", as: UInt64.self),
          stream: StreamID(try rows.string(row, "stream")), type: try rows.string(row, "type"),
          schemaVersion: try rows.integer(row, "schema_version", as: UInt16.self),
          payload: try rows.bytes(row, "payload"),
          metadata: Self.metadata(
            correlation: try rows.value(row, "correlation_id"),
            causation: try rows.value(row, "causation_id"),
            origin: try rows.value(row, "origin")),
          recordedAt: Date(microsecondsSince1970: try rows.integer(row, "recorded_at_us", as: Int64.self)))
        guard event.position == previous + 1 else {
          throw ReplicationError.protocolViolation(
            server: server,
            reason: "pull after \(position) answered position \(event.position) after \(previous)")
        }
        previous = event.position
        events.append(event)
      }
      return events
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
          "SELECT eventlog.channel() AS channel", purpose: "find the channel"
        )
        .string(0, "channel")
        try connection.listen(channel)
        listener.isListening = true
      }
      return !(try connection.notifications(waitingUpTo: timeout).isEmpty)
    }
  }

  private func run<T: Sendable>(
    on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Result { try body() }) }
    }
  }

  // MARK: JSON

  /// The `p_events` argument of `eventlog.push`.
  ///
  /// Written byte by byte into one buffer (IDs as lower-case hex, payloads as base64, strings
  /// escaped where JSON needs it): building it with string appends and Foundation's formatters
  /// was a third of a push's client CPU time.
  static func json(_ events: [OutgoingEvent]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(
      2 + events.reduce(0) { $0 + 220 + $1.payload.count * 4 / 3 + $1.stream.rawValue.utf8.count })
    out.append(UInt8(ascii: "["))
    for (index, event) in events.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      out.append(contentsOf: #"{"id":""#.utf8)
      appendUUID(event.id, to: &out)
      out.append(contentsOf: #"","seq":"#.utf8)
      out.append(contentsOf: String(event.localSequence).utf8)
      out.append(contentsOf: #","stream":"#.utf8)
      appendQuoted(event.stream.rawValue, to: &out)
      out.append(contentsOf: #","type":"#.utf8)
      appendQuoted(event.type, to: &out)
      out.append(contentsOf: #","schemaVersion":"#.utf8)
      out.append(contentsOf: String(event.schemaVersion).utf8)
      out.append(contentsOf: #","payload":""#.utf8)
      appendBase64(event.payload, to: &out)
      out.append(contentsOf: #"","recordedAt":"#.utf8)
      out.append(contentsOf: String(event.recordedAt.microsecondsSince1970).utf8)
      out.append(contentsOf: #","metadata":{"origin":"#.utf8)
      appendQuoted(event.metadata.origin, to: &out)
      if let id = event.metadata.correlationID {
        out.append(contentsOf: #","correlationID":""#.utf8)
        appendUUID(id, to: &out)
        out.append(UInt8(ascii: "\""))
      }
      if let id = event.metadata.causationID {
        out.append(contentsOf: #","causationID":""#.utf8)
        appendUUID(id, to: &out)
        out.append(UInt8(ascii: "\""))
      }
      out.append(contentsOf: "}}".utf8)
    }
    out.append(UInt8(ascii: "]"))
    return String(decoding: out, as: UTF8.self)
  }

  /// `text` as a JSON string literal.
  static func quoted(_ text: String) -> String {
    var out: [UInt8] = []
    appendQuoted(text, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends `text` as a JSON string literal: `"`, `\` and the control characters escaped
  /// (`\n`, `\r`, `\t`, else `\u00XX`), everything else as its UTF-8 bytes.
  static func appendQuoted(_ text: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    let utf8 = text.utf8
    if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
      out.append(contentsOf: utf8)
      out.append(UInt8(ascii: "\""))
      return
    }
    for byte in utf8 {
      switch byte {
      case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
      case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
      case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
      case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
      case 0..<0x20:
        out.append(contentsOf: #"\u00"#.utf8)
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0xF)])
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
  }

  /// Appends `id` in lower-case hex, `8-4-4-4-12`.
  static func appendUUID(_ id: UUID, to out: inout [UInt8]) {
    withUnsafeBytes(of: id.uuid) { bytes in
      for (index, byte) in bytes.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0xF)])
      }
    }
  }

  private static let base64Digits = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  /// Appends `bytes` in base64 (RFC 4648, padded, no line breaks), as `decode(…, 'base64')` reads it.
  static func appendBase64(_ bytes: [UInt8], to out: inout [UInt8]) {
    let whole = bytes.count / 3
    let count = (bytes.count + 2) / 3 * 4
    let encoded = [UInt8](unsafeUninitializedCapacity: count) { text, initialized in
      base64Digits.withUnsafeBufferPointer { digits in
        bytes.withUnsafeBufferPointer { bytes in
          for group in 0..<whole {
            let chunk =
              UInt32(bytes[3 * group]) << 16 | UInt32(bytes[3 * group + 1]) << 8
              | UInt32(bytes[3 * group + 2])
            text[4 * group] = digits[Int(chunk >> 18 & 63)]
            text[4 * group + 1] = digits[Int(chunk >> 12 & 63)]
            text[4 * group + 2] = digits[Int(chunk >> 6 & 63)]
            text[4 * group + 3] = digits[Int(chunk & 63)]
          }
          let rest = bytes.count - 3 * whole
          guard rest > 0 else { return }
          let chunk = UInt32(bytes[3 * whole]) << 16 | (rest == 2 ? UInt32(bytes[3 * whole + 1]) << 8 : 0)
          text[4 * whole] = digits[Int(chunk >> 18 & 63)]
          text[4 * whole + 1] = digits[Int(chunk >> 12 & 63)]
          text[4 * whole + 2] = rest == 2 ? digits[Int(chunk >> 6 & 63)] : UInt8(ascii: "=")
          text[4 * whole + 3] = UInt8(ascii: "=")
        }
      }
      initialized = count
    }
    out.append(contentsOf: encoded)
  }

  /// The metadata of a pulled event; an ID that is not a UUID is left out, an origin past
  /// 1,000 bytes shortened (another writer than `push` may have put anything there).
  static func metadata(correlation: String?, causation: String?, origin: String?) -> EventMetadata {
    var origin = origin ?? ""
    while origin.utf8.count > 1_000 { origin.removeLast() }
    return EventMetadata(
      correlationID: correlation.flatMap(UUID.init(uuidString:)),
      causationID: causation.flatMap(UUID.init(uuidString:)),
      origin: origin)
  }
}

/// A connection made on first use, and again after ``close()``.
private final class Lazy: Sendable {
  private let configuration: PostgresConfiguration
  private let state = Mutex<(connection: PostgresConnection?, listening: Bool)>((nil, false))

  init(_ configuration: PostgresConfiguration) { self.configuration = configuration }

  func connection() throws -> PostgresConnection {
    try state.withLock { state in
      if let connection = state.connection { return connection }
      let connection = try PostgresConnection(configuration)
      state = (connection, false)
      return connection
    }
  }

  /// Whether the listener has issued its `LISTEN` (the connection repeats it after reconnecting).
  var isListening: Bool {
    get { state.withLock { $0.listening } }
    set { state.withLock { $0.listening = newValue } }
  }

  func close() {
    state.withLock { state in
      state.connection?.close()
      state = (nil, false)
    }
  }
}

extension PostgresError: ReplicationTransportError {
  /// Transient for what ``PostgresError/isTransient`` calls so, and for a collision of positions
  /// (another writer's insert that bypassed `push`); rejected when the server refused the
  /// events' values (integrity constraints `23…`, data exceptions `22…`); fatal otherwise.
  public var failureKind: TransportFailureKind {
    if isTransient { return .transient }
    if constraint == "events_pkey" || constraint == "events_positions_gap_free" { return .transient }
    if let sqlState, sqlState.hasPrefix("23") || sqlState.hasPrefix("22") { return .rejected }
    return .fatal
  }
}

extension ReplicationError: ReplicationTransportError {
  /// Fatal: a schema that does not fit or a protocol violation stays until someone changes it.
  public var failureKind: TransportFailureKind { .fatal }
}
