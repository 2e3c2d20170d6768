import CLibPQ
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A notification received on a channel this connection listens to (`LISTEN`/`NOTIFY`).
public struct PostgresNotification: Sendable, Hashable {
  /// The channel.
  public var channel: String
  /// The payload (empty when the sender gave none).
  public var payload: String

  /// Creates a notification.
  public init(channel: String, payload: String) {
    self.channel = channel
    self.payload = payload
  }
}

/// One connection to a PostgreSQL server, through libpq.
///
/// - Statements take their values as parameters (``PostgresValue``), never spliced into the SQL
///   text; results are copied out (``PostgresRows``) before the call returns.
/// - Every statement has a deadline (``PostgresConfiguration/statementTimeout``): one that runs
///   past it is cancelled and the call fails with ``PostgresError/Kind/timeout``.
/// - A connection found broken (the server restarted, the network dropped) fails the statement
///   with ``PostgresError/Kind/connectionLost``; the next call connects again and listens again
///   on the channels of ``listen(_:)``.
/// - TCP keepalives are on, so a silent peer is noticed.
///
/// The connection serializes its callers: each call holds it for its duration, so it may be
/// shared between threads, but one slow statement makes the others wait.
public final class PostgresConnection: Sendable {
  /// The server and the client's timeouts.
  public let configuration: PostgresConfiguration

  private struct State: ~Copyable {
    var handle: OpaquePointer?
    var channels: [String] = []

    deinit { if let handle { PQfinish(handle) } }
  }

  private let state: Mutex<State>

  /// Connects to the server.
  /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/connect`` naming the server and
  ///   libpq's reason (refused, wrong password, no such database, timeout).
  public init(_ configuration: PostgresConfiguration) throws(PostgresError) {
    self.configuration = configuration
    let handle = try Self.connect(configuration)
    state = Mutex(State(handle: handle))
  }

  /// Closes the connection; a later call connects again.
  public func close() {
    state.withLock { state in
      if let handle = state.handle { PQfinish(handle) }
      state.handle = nil
    }
  }

  /// Whether the connection is up, as far as libpq knows without asking the server.
  public var isConnected: Bool {
    state.withLock { state in state.handle.map { PQstatus($0) == CONNECTION_OK } ?? false }
  }

  /// The server's version as an integer (`150018` for 15.18), or 0 when not connected.
  public var serverVersion: Int {
    state.withLock { state in state.handle.map { Int(PQserverVersion($0)) } ?? 0 }
  }

  private static func connect(
    _ configuration: PostgresConfiguration, within limit: Duration? = nil
  ) throws(PostgresError) -> OpaquePointer {
    var seconds = configuration.connectTimeoutSeconds
    if let limit {
      // libpq counts whole seconds, and takes anything below 2 as 2.
      let (whole, fraction) = limit.components
      seconds = max(2, min(seconds, Int(whole) + (fraction > 0 ? 1 : 0)))
    }
    // Processed in order, a later keyword overriding an earlier one: our defaults first, then the
    // URL (expanded from `dbname`), so that the URL's own settings win; the encoding last, and
    // the sslmode a remote host requires when the URL names none.
    var pairs: [(String, String)] = [
      ("connect_timeout", String(seconds)),
      ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
      ("tcp_user_timeout", "30000"),
      ("application_name", configuration.applicationName),
      ("dbname", configuration.url),
      ("client_encoding", "UTF8"),
    ]
    if let sslMode = configuration.addedSSLMode { pairs.append(("sslmode", sslMode)) }
    let handle = withCStrings(pairs.map(\.0)) { keywords in
      withCStrings(pairs.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
    }
    guard let handle else {
      throw PostgresError(
        kind: .connect, purpose: "connect", message: "libpq could not allocate a connection",
        server: configuration.server)
    }
    guard PQstatus(handle) == CONNECTION_OK else {
      let message = configuration.redact(Self.message(PQerrorMessage(handle)))
      PQfinish(handle)
      throw PostgresError(kind: .connect, purpose: "connect", message: message, server: configuration.server)
    }
    // Notices (and the server's goodbye on shutdown) would go to standard error; errors reach
    // the caller as PostgresError instead.
    PQsetNoticeProcessor(handle, { _, _ in }, nil)
    return handle
  }

  /// libpq's message on one line: its continuation lines (a newline, then a tab) joined.
  private static func message(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(cString: pointer).split(whereSeparator: \.isNewline)
      .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
  }

  /// The live handle, connecting again (and listening again) when the last one broke.
  private func handle(
    _ state: inout State, purpose: String, within limit: Duration? = nil
  ) throws(PostgresError) -> OpaquePointer {
    if let handle = state.handle, PQstatus(handle) == CONNECTION_OK { return handle }
    if let handle = state.handle { PQfinish(handle) }
    state.handle = nil
    let handle = try Self.connect(configuration, within: limit)
    state.handle = handle
    for channel in state.channels {
      _ = try run(handle, &state, purpose: "listen on '\(channel)' again after reconnecting") { conn in
        PQsendQuery(conn, Self.listenStatement(channel, conn) ?? "")
      }
    }
    return handle
  }

  /// Runs a statement with parameters and returns its rows.
  ///
  /// - Parameters:
  ///   - sql: one statement; parameters are `$1`, `$2`, …
  ///   - parameters: the values, sent apart from the text.
  ///   - purpose: what the statement is for, named by its errors (`push a batch`).
  ///   - timeout: the deadline of this statement (and of the connection it may have to make
  ///     first), when it is shorter than the configuration's.
  /// - Returns: the statement's rows (none for a command), and the number of rows it changed.
  /// - Throws: ``PostgresError``: the server's error with its SQLSTATE, a lost connection, a
  ///   timeout.
  @discardableResult
  public func query(
    _ sql: String, _ parameters: [PostgresValue] = [], purpose: String, timeout: Duration? = nil
  ) throws(PostgresError) -> PostgresRows {
    try state.withLock { (state) throws(PostgresError) -> PostgresRows in
      let start = ContinuousClock.now
      let handle = try self.handle(&state, purpose: purpose, within: timeout)
      let left = timeout.map { max(.milliseconds(1), $0 - (ContinuousClock.now - start)) }
      return try run(handle, &state, purpose: purpose, timeout: left) { conn in
        Self.send(sql, parameters, on: conn)
      }
    }
  }

  /// Runs SQL text without parameters: several statements separated by `;` (a schema script).
  /// - Throws: ``PostgresError`` for the first statement that fails; with the script in one
  ///   transaction (`BEGIN … COMMIT` in the text), nothing of it is kept.
  public func execute(_ script: String, purpose: String) throws(PostgresError) {
    try state.withLock { (state) throws(PostgresError) in
      let handle = try self.handle(&state, purpose: purpose)
      let before = PQtransactionStatus(handle)
      do throws(PostgresError) {
        _ = try run(handle, &state, purpose: purpose) { conn in PQsendQuery(conn, script) }
      } catch {
        // A script that opened a transaction and failed inside it leaves it open and aborted.
        if before == PQTRANS_IDLE, let handle = state.handle, PQtransactionStatus(handle) != PQTRANS_IDLE {
          _ = try? run(handle, &state, purpose: "roll back after: \(purpose)") { PQsendQuery($0, "ROLLBACK") }
        }
        throw error
      }
    }
  }

  /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it
  /// throws (the error is rethrown).
  ///
  /// Other callers of this connection may run statements between those of `body`, inside the
  /// transaction: give a transaction a connection of its own.
  public func transaction<R>(
    purpose: String, _ body: () throws(PostgresError) -> R
  ) throws(PostgresError) -> R {
    try execute("BEGIN", purpose: "begin: \(purpose)")
    let result: R
    do throws(PostgresError) {
      result = try body()
    } catch {
      try? execute("ROLLBACK", purpose: "roll back: \(purpose)")
      throw error
    }
    try execute("COMMIT", purpose: "commit: \(purpose)")
    return result
  }

  /// Listens on `channel` from now on, and again after every reconnection.
  public func listen(_ channel: String) throws(PostgresError) {
    try state.withLock { (state) throws(PostgresError) in
      let purpose = "listen on '\(channel)'"
      let handle = try self.handle(&state, purpose: purpose)
      guard let statement = Self.listenStatement(channel, handle) else {
        throw PostgresError(
          kind: .invalidInput, purpose: purpose, message: "the channel name cannot be quoted",
          server: configuration.server)
      }
      _ = try run(handle, &state, purpose: purpose) { conn in PQsendQuery(conn, statement) }
      if !state.channels.contains(channel) { state.channels.append(channel) }
    }
  }

  /// `LISTEN "channel"`, the identifier quoted by libpq.
  private static func listenStatement(_ channel: String, _ conn: OpaquePointer) -> String? {
    let utf8 = Array(channel.utf8)
    guard let quoted = PQescapeIdentifier(conn, channel, utf8.count) else { return nil }
    defer { PQfreemem(quoted) }
    return "LISTEN " + String(cString: quoted)
  }

  /// The notifications that arrive within `timeout` (those already received come back at once).
  /// - Returns: the notifications, possibly none when the time ran out.
  /// - Throws: ``PostgresError/Kind/connectionLost`` when the connection broke while waiting.
  public func notifications(waitingUpTo timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
    try state.withLock { (state) throws(PostgresError) -> [PostgresNotification] in
      let purpose = "wait for notifications"
      let handle = try self.handle(&state, purpose: purpose)
      var received = try self.drainNotifications(handle, &state, purpose: purpose)
      guard received.isEmpty else { return received }
      let deadline = ContinuousClock.now + timeout
      while received.isEmpty {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { break }
        if Self.waitReadable(PQsocket(handle), for: remaining) {
          received = try self.drainNotifications(handle, &state, purpose: purpose)
        }
      }
      return received
    }
  }

  private func drainNotifications(
    _ handle: OpaquePointer, _ state: inout State, purpose: String
  ) throws(PostgresError) -> [PostgresNotification] {
    guard PQconsumeInput(handle) == 1 else { throw lost(handle, &state, purpose: purpose) }
    var received: [PostgresNotification] = []
    while let notify = PQnotifies(handle) {
      received.append(
        PostgresNotification(
          channel: String(cString: notify.pointee.relname),
          payload: notify.pointee.extra.map { String(cString: $0) } ?? ""))
      PQfreemem(notify)
    }
    return received
  }

  /// The error for a connection that broke; the handle is dropped, so the next call reconnects.
  private func lost(_ handle: OpaquePointer, _ state: inout State, purpose: String) -> PostgresError {
    let message = configuration.redact(Self.message(PQerrorMessage(handle)))
    PQfinish(handle)
    state.handle = nil
    return PostgresError(
      kind: .connectionLost, sqlState: nil, purpose: purpose,
      message: message.isEmpty ? "the server closed the connection" : message, server: configuration.server)
  }

  /// Waits until `socket` is readable or `timeout` passes; `true` when readable (or in error,
  /// which the following read reports).
  private static func waitReadable(_ socket: Int32, for timeout: Duration) -> Bool {
    guard socket >= 0 else { return true }
    let (seconds, attoseconds) = timeout.components
    let milliseconds = max(1, min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    while true {
      let ready = poll(&descriptor, 1, Int32(milliseconds))
      if ready < 0 && errno == EINTR { continue }
      return ready != 0
    }
  }

  /// Sends a statement with `send`, waits for every result up to the deadline, and returns the
  /// rows of the last one (or throws the first error).
  private func run(
    _ handle: OpaquePointer, _ state: inout State, purpose: String, timeout: Duration? = nil,
    send: (OpaquePointer) -> Int32
  ) throws(PostgresError) -> PostgresRows {
    let statementTimeout = min(timeout ?? configuration.statementTimeout, configuration.statementTimeout)
    guard send(handle) == 1 else {
      if PQstatus(handle) != CONNECTION_OK { throw lost(handle, &state, purpose: purpose) }
      throw PostgresError(
        kind: .invalidInput, purpose: purpose,
        message: configuration.redact(Self.message(PQerrorMessage(handle))),
        server: configuration.server)
    }
    let deadline = ContinuousClock.now + statementTimeout
    var rows: PostgresRows?
    var failure: PostgresError?
    while true {
      while PQisBusy(handle) == 1 {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero, Self.waitReadable(PQsocket(handle), for: remaining) else {
          // Cancel on the server, then drop the connection rather than wait for it to answer.
          if let cancel = PQgetCancel(handle) {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(cancel, &buffer, Int32(buffer.count))
            PQfreeCancel(cancel)
          }
          PQfinish(handle)
          state.handle = nil
          throw PostgresError(
            kind: .timeout, purpose: purpose,
            message: "no answer within \(statementTimeout); the statement was cancelled",
            server: configuration.server)
        }
        guard PQconsumeInput(handle) == 1 else { throw lost(handle, &state, purpose: purpose) }
      }
      guard let result = PQgetResult(handle) else { break }
      defer { PQclear(result) }
      switch PQresultStatus(result) {
      case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
        rows = Self.copy(result, purpose: purpose, server: configuration.server)
      default:
        if failure == nil { failure = serverError(result, handle, purpose: purpose) }
      }
    }
    if PQstatus(handle) != CONNECTION_OK {
      let error = lost(handle, &state, purpose: purpose)
      // A server error that says why it closed (57P01 on shutdown) is more useful than libpq's.
      throw failure.map {
        PostgresError(
          kind: .connectionLost, sqlState: $0.sqlState, purpose: purpose, message: $0.message,
          server: configuration.server)
      } ?? error
    }
    if let failure { throw failure }
    return rows
      ?? PostgresRows(
        columns: [], count: 0, affectedRows: 0, values: [], purpose: purpose, server: configuration.server)
  }

  private func serverError(_ result: OpaquePointer, _ handle: OpaquePointer, purpose: String) -> PostgresError
  {
    func field(_ code: Int32) -> String? {
      PQresultErrorField(result, code).map { String(cString: $0) }
    }
    let primary = field(Int32(UInt8(ascii: "M"))) ?? Self.message(PQresultErrorMessage(result))
    let message = primary.isEmpty ? Self.message(PQerrorMessage(handle)) : primary
    return PostgresError(
      kind: .server, sqlState: field(Int32(UInt8(ascii: "C"))), constraint: field(Int32(UInt8(ascii: "n"))),
      purpose: purpose, message: configuration.redact(message),
      detail: field(Int32(UInt8(ascii: "D"))).map(configuration.redact),
      hint: field(Int32(UInt8(ascii: "H"))), server: configuration.server)
  }

  private static func copy(_ result: OpaquePointer, purpose: String, server: String) -> PostgresRows {
    let rowCount = Int(PQntuples(result))
    let columnCount = Int(PQnfields(result))
    var columns: [String] = []
    columns.reserveCapacity(columnCount)
    for column in 0..<columnCount {
      columns.append(PQfname(result, Int32(column)).map { String(cString: $0) } ?? "")
    }
    var values: [String?] = []
    values.reserveCapacity(rowCount * columnCount)
    for row in 0..<rowCount {
      for column in 0..<columnCount {
        if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
          values.append(nil)
        } else if let value = PQgetvalue(result, Int32(row), Int32(column)) {
          let length = Int(PQgetlength(result, Int32(row), Int32(column)))
          values.append(
            value.withMemoryRebound(to: UInt8.self, capacity: length) {
              String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            })
        } else {
          values.append(nil)
        }
      }
    }
    let affected = PQcmdTuples(result).map { Int(String(cString: $0)) ?? 0 } ?? 0
    return PostgresRows(
      columns: columns, count: rowCount, affectedRows: affected, values: values, purpose: purpose,
      server: server)
  }

  /// `PQsendQueryParams` with text parameters and binary `bytea` ones; text results.
  private static func send(_ sql: String, _ parameters: [PostgresValue], on conn: OpaquePointer) -> Int32 {
    var buffers: [[UInt8]] = []
    var lengths: [Int32] = []
    var formats: [Int32] = []
    var nulls: [Bool] = []
    buffers.reserveCapacity(parameters.count)
    for parameter in parameters {
      switch parameter {
      case .null:
        buffers.append([])
        lengths.append(0)
        formats.append(0)
        nulls.append(true)
      case .text(let text):
        buffers.append(Array(text.utf8) + [0])
        lengths.append(0)
        formats.append(0)
        nulls.append(false)
      case .bytes(let bytes):
        // One byte more, so that an empty value still has an address (libpq reads none of it).
        buffers.append(bytes + [0])
        lengths.append(Int32(bytes.count))
        formats.append(1)
        nulls.append(false)
      }
    }
    return withBufferPointers(buffers, nulls: nulls) { values in
      PQsendQueryParams(conn, sql, Int32(parameters.count), nil, values, lengths, formats, 0)
    }
  }
}

/// Calls `body` with a C array of pointers to NUL-terminated copies of `strings`.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
  let copies = strings.map { Array($0.utf8CString) }
  return withBufferPointers(copies.map { $0.map { UInt8(bitPattern: $0) } }, nulls: nil) { pointers in
    body(pointers + [nil])
  }
}

/// Calls `body` with pointers to each buffer's bytes (`nil` where `nulls` says so), valid only
/// during the call.
private func withBufferPointers<R>(
  _ buffers: [[UInt8]], nulls: [Bool]?, _ body: ([UnsafePointer<CChar>?]) -> R
) -> R {
  var pointers: [UnsafePointer<CChar>?] = []
  pointers.reserveCapacity(buffers.count)
  func next(_ index: Int) -> R {
    if index == buffers.count { return body(pointers) }
    return buffers[index].withUnsafeBufferPointer { buffer in
      let isNull = nulls?[index] ?? false
      pointers.append(
        isNull ? nil : buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) })
      return next(index + 1)
    }
  }
  return next(0)
}
