import EventLog
import Foundation
import HTTP
import Redaction
import Replication

/// Replication over a Supabase project's HTTPS API: PostgREST's `rpc/` calling the very SQL
/// functions of `eventlog_api` that the libpq transport calls (server schema version 3; the
/// anchoring calls, `pull_chained`, `attested_heads` and `push` with `p_head`, version 5).
///
/// Each call is `POST {projectURL}/rest/v1/rpc/<function>` with the headers `apikey` (the project's
/// API key), `Authorization: Bearer <the signed-in user's access token>`, `Content-Type:
/// application/json` and `Content-Profile: eventlog_api`, and the arguments as a JSON object keyed
/// by the function's parameter names. On the server the request runs as the `authenticated` role,
/// and its owner is `auth.uid()`: a device holds no database credentials.
///
/// - **Sessions.** The access token comes from a provider the app gives (supabase-swift:
///   `try await supabase.auth.session.accessToken`), asked before every request; after the
///   server refuses a token it is asked once more with `refresh: true`, and a second refusal fails
///   with ``SupabaseError/signInAgain(server:reason:)``. With no session (the provider gives `nil`)
///   nothing is sent: the API key is never sent as the bearer. The first `server_info` answer pins
///   the transport to its owner (``OwnerPin``): every token given after it is checked with
///   `server_info` before it carries anything else, and one of another owner fails the call with
///   ``ReplicationError/ownerMismatch(server:recorded:found:)``.
/// - **Errors** are classified by PostgREST's `code`, the HTTP status only where there is none
///   (``SupabaseError``): connection failures, a gateway's 5xx without a JSON error, serialization
///   failures (`40001`, `40P01`), timeouts (`57014`, `55P03`) and an exhausted or lost pool
///   (`PGRST000`–`PGRST003`) are transient, which the replicator retries within its deadline; a
///   push's events refused as a whole (`22…`, `23…`, `54000`) are rejected; the cursor checks
///   (`EL001`, `EL002`) are ``ReplicationError/serverChanged(server:reason:)``; a missing function
///   or schema (`PGRST202`, `PGRST106`, `42883`, `3F000`) is ``SupabaseError/apiMissing(server:reason:)``.
/// - **Bounds.** Each request ends by ``ReplicationDeadline/remaining(capped:)`` of
///   ``requestTimeout``; a response body is capped by what the server may answer (a pulled page:
///   the byte budget asked for, plus one payload of at most 8 MiB, as JSON text escaped in a string).
/// - **Live mode.** ``waitForNews(upTo:)`` keeps one long poll open (`eventlog_api.pull` with
///   `p_wait_ms` = ``longPollWait``) across the replicator's short waits, and starts another after
///   each answer or failure; after an empty answer that came early (the server holds at most two
///   waits of an owner at once, from schema version 4), not before the wait would have ended.
/// - **Secrets.** The API key and the tokens live in memory only: they are sent in headers, never
///   in a URL, an error, a description or the environment; server text is cut free of both before
///   any error keeps it.
public final class SupabaseTransport: ReplicationTransport, CustomStringConvertible, CustomReflectable {
  /// Gives the signed-in user's access token, or `nil` when no user is signed in. `refresh` is
  /// `true` when the server refused the token given last: return a refreshed one
  /// (supabase-swift: `try await supabase.auth.refreshSession().accessToken`).
  ///
  /// An error it throws fails the call: fatal, unless the error conforms to
  /// ``ReplicationTransportError`` and says otherwise (a refresh that failed for want of a
  /// network may say `.transient`).
  public typealias AccessTokenProvider = @Sendable (_ refresh: Bool) async throws -> String?

  /// The server schema version whose `eventlog_api` functions this transport calls: it works with
  /// any server from this version on whose `clients_from` is at most this.
  public static let schemaVersion = 3

  /// The schema the functions live in, which the project's API must expose.
  public static let exposedSchema = "eventlog_api"

  /// The project's base URL, as given (without a trailing slash).
  public var projectURL: URL { project.base }
  /// The longest one request may take (a one-shot command's ``ReplicationDeadline`` bounds it
  /// further; a long poll adds its wait).
  public let requestTimeout: Duration
  /// How long a long poll of ``waitForNews(upTo:)`` asks the server to wait for an event (the
  /// server waits 10 s at most; Supabase's `authenticated` role has an 8 s statement timeout).
  public let longPollWait: Duration
  /// The server, as messages name it: the project URL without user, password or query.
  public var server: String { project.shown }

  let project: ProjectURL
  private let apiKey: String
  private let accessToken: AccessTokenProvider
  let poll = LongPoll()
  /// The owner this transport's requests go as, once `server_info` said so.
  let owner = OwnerPin()

  /// A transport to the project at `projectURL`; nothing is sent until the first call.
  /// - Parameters:
  ///   - projectURL: the project's base URL, `https://<ref>.supabase.co` (`http://` only for a
  ///     loopback host).
  ///   - apiKey: the project's API key (the anon or publishable key), sent as `apikey`.
  ///   - requestTimeout: the longest one request may take.
  ///   - longPollWait: how long a long poll asks the server to wait (at most 10 s).
  ///   - accessToken: the signed-in user's access token, asked per request.
  /// - Throws: ``SupabaseError/invalidURL(reason:)`` for a URL that can never be used.
  public init(
    projectURL: URL, apiKey: String, requestTimeout: Duration = .seconds(60),
    longPollWait: Duration = .seconds(5), accessToken: @escaping AccessTokenProvider
  ) throws(SupabaseError) {
    project = try ProjectURL(projectURL)
    self.apiKey = apiKey
    self.requestTimeout = max(requestTimeout, .milliseconds(1))
    self.longPollWait = min(max(longPollWait, .zero), .seconds(10))
    self.accessToken = accessToken
  }

  /// Whether `url` is one this transport takes (`http://` or `https://`, in any case) rather
  /// than a libpq URL; whether it can be used is checked when the transport is made.
  public static func handles(_ url: String) -> Bool { HTTPURLRules.isHTTP(url) }

  /// `SupabaseTransport(<project URL>)`: no key, no token.
  public var description: String { "SupabaseTransport(\(server))" }

  /// Shows no key or token to `dump` and debuggers.
  public var customMirror: Mirror {
    Mirror(self, children: ["server": server, "requestTimeout": requestTimeout] as KeyValuePairs)
  }

  /// Ends the long poll in flight, if any; a later call sends again.
  public func close() { poll.cancel() }

  // MARK: The functions

  /// Checks that the project's API has `eventlog_api` of a version this build speaks
  /// (`eventlog_api.server_info`).
  /// - Throws: ``SupabaseError/apiMissing(server:reason:)`` when the functions or the exposed
  ///   schema are missing, ``ReplicationError/schemaTooOld(server:found:required:)`` or
  ///   ``ReplicationError/schemaTooNew(server:found:supported:)``, or a ``SupabaseError``.
  public func checkSchema() async throws {
    let info = try await serverInfo()
    if info.schemaVersion < Self.schemaVersion {
      throw ReplicationError.schemaTooOld(
        server: server, found: info.schemaVersion, required: Self.schemaVersion)
    }
    if info.schemaVersion > Self.schemaVersion && info.clientsFrom > Self.schemaVersion {
      throw ReplicationError.schemaTooNew(
        server: server, found: info.schemaVersion, supported: Self.schemaVersion)
    }
  }

  /// The server's view (`eventlog_api.server_info`): its schema version, the owner it takes the
  /// user for (`user:<auth.uid()>`), and the owner's head.
  ///
  /// The first answer also pins the transport to that owner: a token given later (re-read or
  /// refreshed) is first checked with `server_info`, and one of another owner fails the call
  /// with ``ReplicationError/ownerMismatch(server:recorded:found:)`` before it carries anything.
  public func serverInfo() async throws -> ServerInfo {
    try Self.info(from: try await call("server_info", Array("{}".utf8)), server: server)
  }

  /// The server's view from `server_info`'s answer.
  static func info(from body: Data, server: String) throws -> ServerInfo {
    let row: PostgRESTBody.Row
    do {
      row = try PostgRESTBody.onlyRow(body)
    } catch {
      throw ReplicationError.protocolViolation(server: server, reason: "server_info: \(error.reason)")
    }
    guard let version = row["schema_version"]?.text.flatMap(Int.init),
      let clientsFrom = row["clients_from"]?.text.flatMap(Int.init),
      let owner = row["owner"]?.text, let head = row["owner_head"]?.text.flatMap(UInt64.init)
    else {
      throw ReplicationError.protocolViolation(server: server, reason: "server_info answered a malformed row")
    }
    return ServerInfo(schemaVersion: version, clientsFrom: clientsFrom, owner: owner, head: head)
  }

  /// Stores `events` with `eventlog_api.push` in one server transaction, setting the device's
  /// pushed mark to `through`, and attesting `head` there (`p_head`, server schema version 5)
  /// when given.
  /// - Returns: an outcome per event, in order.
  /// - Throws: a ``SupabaseError`` (its kind `.rejected` when the server refused the batch's
  ///   values as a whole), or `ReplicationError.protocolViolation` when the answer has another
  ///   number of rows, another order, or an outcome the server does not define.
  public func push(
    _ events: [OutgoingEvent], device: DeviceCredentials, through: UInt64, head: ChainValue?
  ) async throws -> [PushOutcome] {
    var body: [UInt8] = []
    body.reserveCapacity(events.reduce(256) { $0 + 256 + $1.payload.count })
    body.append(contentsOf: #"{"p_device":"#.utf8)
    JSONWriter.appendQuoted(device.id, to: &body)
    body.append(contentsOf: #","p_device_key":"#.utf8)
    JSONWriter.appendQuoted(device.key, to: &body)
    body.append(contentsOf: #","p_through":"#.utf8)
    body.append(contentsOf: String(through).utf8)
    if let head {
      body.append(contentsOf: #","p_head":"#.utf8)
      JSONWriter.appendQuoted(head.hex, to: &body)
    }
    body.append(contentsOf: #","p_events":"#.utf8)
    body.append(contentsOf: ReplicationWire.events(events))
    body.append(UInt8(ascii: "}"))
    // A row per event: its ID, position, outcome and reason (at most a few hundred bytes).
    let answer = try await call(
      "push", body, isPush: true, maximumBodyBytes: (64 << 10) + events.count * 1_024)
    let rows = try decoded("push") { () throws(PostgRESTBody.Malformed) in try PostgRESTBody.rows(answer) }
    guard rows.count == events.count else {
      throw ReplicationError.protocolViolation(
        server: server, reason: "push answered \(rows.count) rows for \(events.count) events")
    }
    return try zip(rows, events).enumerated().map { index, pair in
      let (row, event) = pair
      guard row["event_id"]?.text.flatMap(UUID.init(uuidString:)) == event.id else {
        throw ReplicationError.protocolViolation(
          server: server, reason: "push answered row \(index + 1) out of order")
      }
      return try outcome(
        row["outcome"]?.text ?? "", position: row["event_position"]?.text.flatMap(UInt64.init),
        reason: row["reason"]?.text)
    }
  }

  /// A push outcome from the server's words.
  private func outcome(_ outcome: String, position: UInt64?, reason: String?) throws -> PushOutcome {
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
    var body = Array(#"{"p_device":"#.utf8)
    JSONWriter.appendQuoted(device.id, to: &body)
    body.append(contentsOf: #","p_device_key":"#.utf8)
    JSONWriter.appendQuoted(device.key, to: &body)
    body.append(UInt8(ascii: "}"))
    let answer = try await call("device_mark", body)
    let row = try decoded("device_mark") { () throws(PostgRESTBody.Malformed) in
      try PostgRESTBody.onlyRow(answer)
    }
    guard let pushed = row["pushed_through"]?.text.flatMap(UInt64.init) else {
      throw ReplicationError.protocolViolation(server: server, reason: "device_mark answered no pushed mark")
    }
    return ServerMark(
      pushedThrough: pushed, lastSequence: row["last_sequence"]?.text.flatMap(UInt64.init),
      lastID: row["last_id"]?.text.flatMap(UUID.init(uuidString:)))
  }

  /// The owner's last position on the server (`eventlog_api.head`), or 0.
  public func head() async throws -> UInt64 {
    let answer = try await call("head", Array("{}".utf8))
    let text = try decoded("head") { () throws(PostgRESTBody.Malformed) in try PostgRESTBody.scalar(answer) }
    guard let head = UInt64(text) else {
      throw ReplicationError.protocolViolation(server: server, reason: "head answered '\(text.prefix(40))'")
    }
    return head
  }

  /// The owner's server events after `cursor` (`eventlog_api.pull`), in position order, each row
  /// checked field by field (``ReplicationWire/row(_:server:)``).
  ///
  /// A page larger than its cap (rows an operator wrote past the server's bounds) is asked again
  /// one row at a time; a single row past the cap cannot be a well-formed event and comes back as
  /// ``PulledRow/malformed(position:id:reason:)``, so that it never stops the pull.
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``SupabaseError``.
  public func pull(
    after cursor: PullCursor, limit: Int, maxBytes: Int, wait: Duration
  ) async throws -> [PulledRow] {
    let rows = try await pullRows(after: cursor, limit: limit, maxBytes: maxBytes, wait: wait)
    poll.pulled(through: rows.last?.position ?? cursor.position)
    return rows
  }

  /// ``pull(after:limit:maxBytes:wait:)`` without noting the position for the long poll.
  func pullRows(
    after cursor: PullCursor, limit: Int, maxBytes: Int, wait: Duration
  ) async throws -> [PulledRow] {
    let limit = min(max(limit, 1), 10_000)
    let maxBytes = min(max(maxBytes, 1_024), 16 << 20)
    let waitMilliseconds = max(0, min(10_000, Int(wait / .milliseconds(1))))
    let body = Self.pullBody(cursor, limit, maxBytes, waitMilliseconds)
    let cap = Self.pageCap(limit: limit, maxBytes: maxBytes)
    let answer: Data
    do {
      answer = try await call("pull", body, wait: .milliseconds(waitMilliseconds), maximumBodyBytes: cap)
    } catch is PageTooLarge {
      guard limit == 1 else {
        return try await pullRows(after: cursor, limit: 1, maxBytes: maxBytes, wait: .zero)
      }
      return [
        .malformed(
          position: cursor.position + 1, id: nil,
          reason: "the row is larger than the \(cap) bytes a pulled row may take (its payload is over 4 MiB)")
      ]
    }
    let rows = try decoded("pull") { () throws(PostgRESTBody.Malformed) in try PostgRESTBody.rows(answer) }
    return try rows.map { row in
      try ReplicationWire.row(
        ReplicationWire.RowFields(
          position: row["event_position"]?.text, id: row["event_id"]?.text,
          originDevice: row["origin_device"]?.text, originSequence: row["origin_sequence"]?.text,
          stream: row["stream"]?.text, type: row["type"]?.text, schemaVersion: row["schema_version"]?.text,
          payload: row["payload"]?.text.map { Array($0.utf8) }, correlationID: row["correlation_id"]?.text,
          causationID: row["causation_id"]?.text, origin: row["origin"]?.text,
          recordedAtMicroseconds: row["recorded_at_us"]?.text),
        server: server)
    }
  }

  /// The owner's server rows after `cursor` with the server's chain (`eventlog_api.pull_chained`,
  /// server schema version 5), every column as the server sent it. A page larger than its cap is
  /// asked again one row at a time, and a single row past it comes with only its position and
  /// why (``ReplicationWire/RowFields/unavailable``).
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``SupabaseError``.
  public func pullChained(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields] {
    try await pullChainedRows(after: cursor, limit: limit, maxBytes: maxBytes, withSubjects: false)
  }

  /// ``pullChained(after:limit:maxBytes:)``'s rows with each event's data subjects
  /// (`eventlog_api.pull_subjects`, server schema version 6), paged and capped as
  /// ``pullChained(after:limit:maxBytes:)`` is.
  /// - Throws: `ReplicationError.serverChanged` when the server holds another event at the
  ///   cursor, or fewer events than the cursor; a ``SupabaseError``.
  public func pullWithSubjects(
    after cursor: PullCursor, limit: Int, maxBytes: Int
  ) async throws -> [ReplicationWire.RowFields] {
    try await pullChainedRows(after: cursor, limit: limit, maxBytes: maxBytes, withSubjects: true)
  }

  /// The rows of `eventlog_api.pull_chained`, or of `pull_subjects` (the same columns and each
  /// event's subjects) when `withSubjects`, every column as the server sent it; a page larger
  /// than its cap is asked again one row at a time.
  private func pullChainedRows(
    after cursor: PullCursor, limit: Int, maxBytes: Int, withSubjects: Bool
  ) async throws -> [ReplicationWire.RowFields] {
    let function = withSubjects ? "pull_subjects" : "pull_chained"
    let limit = min(max(limit, 1), 10_000)
    let maxBytes = min(max(maxBytes, 1_024), 16 << 20)
    // With subjects, each row's subjects (at most 255 UUIDs of 37 bytes) besides pull_chained's columns.
    let cap = Self.pageCap(limit: limit, maxBytes: maxBytes) + (withSubjects ? limit * 10_000 : 0)
    let answer: Data
    do {
      answer = try await call(function, Self.pullBody(cursor, limit, maxBytes, 0), maximumBodyBytes: cap)
    } catch is PageTooLarge {
      guard limit == 1 else {
        return try await pullChainedRows(
          after: cursor, limit: 1, maxBytes: maxBytes, withSubjects: withSubjects)
      }
      return [
        ReplicationWire.RowFields(
          position: String(cursor.position + 1), id: nil, originDevice: nil, originSequence: nil, stream: nil,
          type: nil, schemaVersion: nil, payload: nil, correlationID: nil, causationID: nil, origin: nil,
          recordedAtMicroseconds: nil,
          unavailable:
            "the row is larger than the \(cap) bytes a pulled row may take (its payload is over 4 MiB)")
      ]
    }
    let rows = try decoded(function) { () throws(PostgRESTBody.Malformed) in
      try PostgRESTBody.rows(answer)
    }
    return rows.map { row in
      ReplicationWire.RowFields(
        position: row["event_position"]?.text, id: row["event_id"]?.text,
        originDevice: row["origin_device"]?.text, originSequence: row["origin_sequence"]?.text,
        stream: row["stream"]?.text, type: row["type"]?.text, schemaVersion: row["schema_version"]?.text,
        payload: row["payload"]?.text.map { Array($0.utf8) }, correlationID: row["correlation_id"]?.text,
        causationID: row["causation_id"]?.text, origin: row["origin"]?.text,
        recordedAtMicroseconds: row["recorded_at_us"]?.text, pushedBy: row["pushed_by"]?.text,
        pushedSequence: row["pushed_sequence"]?.text, metadata: row["metadata"]?.text.map { Array($0.utf8) },
        chain: row["chain"]?.text, subjects: withSubjects ? (row["subjects"]?.text ?? "") : nil)
    }
  }

  /// Stores data subjects' keys with `eventlog_api.push_keys` (server schema version 6).
  /// - Returns: what the server did with each key, in order.
  /// - Throws: a ``SupabaseError``, or `ReplicationError.protocolViolation` when the answer has
  ///   another number of rows, another order, or an outcome the server does not define.
  public func pushKeys(_ keys: [SubjectKey], device: UUID) async throws -> [KeyPushOutcome] {
    var body = Array(#"{"p_device":"#.utf8)
    JSONWriter.appendQuoted(device, to: &body)
    body.append(contentsOf: #","p_keys":"#.utf8)
    body.append(contentsOf: ReplicationWire.keys(keys))
    body.append(UInt8(ascii: "}"))
    // A row per key: its subject and outcome (under a hundred bytes).
    let answer = try await call("push_keys", body, maximumBodyBytes: (64 << 10) + keys.count * 256)
    let rows = try decoded("push_keys") { () throws(PostgRESTBody.Malformed) in try PostgRESTBody.rows(answer)
    }
    guard rows.count == keys.count else {
      throw ReplicationError.protocolViolation(
        server: server, reason: "push_keys answered \(rows.count) rows for \(keys.count) keys")
    }
    return try zip(rows, keys).enumerated().map { index, pair in
      guard pair.0["subject"]?.text.flatMap(UUID.init(uuidString:)) == pair.1.subject else {
        throw ReplicationError.protocolViolation(
          server: server, reason: "push_keys answered row \(index + 1) out of order")
      }
      return try ReplicationWire.keyOutcome(pair.0["outcome"]?.text, server: server)
    }
  }

  /// The owner's keys stored after `serial` (`eventlog_api.pull_keys`, server schema version 6).
  /// - Throws: a ``SupabaseError``, or `ReplicationError.protocolViolation` for a malformed row.
  public func pullKeys(after serial: UInt64, limit: Int) async throws -> [ServerSubjectKey] {
    let limit = min(max(limit, 1), 10_000)
    let body = Array(#"{"p_after":\#(serial),"p_limit":\#(limit)}"#.utf8)
    // A row of under two hundred bytes each.
    let answer = try await call("pull_keys", body, maximumBodyBytes: (64 << 10) + limit * 512)
    let rows = try decoded("pull_keys") { () throws(PostgRESTBody.Malformed) in try PostgRESTBody.rows(answer)
    }
    return try rows.map { row in
      try ReplicationWire.serverKey(
        serial: row["serial"]?.text, subject: row["subject"]?.text, key: row["key"]?.text,
        createdAtMicroseconds: row["created_at_us"]?.text, server: server)
    }
  }

  /// The heads the server accepted for `device` after attestation `after`
  /// (`eventlog_api.attested_heads`, server schema version 5).
  /// - Throws: a ``SupabaseError``, or `ReplicationError.protocolViolation` for a malformed answer.
  public func attestedHeads(device: UUID, after: UInt64, limit: Int) async throws -> [AttestedHead] {
    let limit = min(max(limit, 1), 10_000)
    var body = Array(#"{"p_device":"#.utf8)
    JSONWriter.appendQuoted(device, to: &body)
    body.append(contentsOf: #","p_after":\#(after),"p_limit":\#(limit)}"#.utf8)
    // A row of at most a few hundred bytes each.
    let answer = try await call("attested_heads", body, maximumBodyBytes: (64 << 10) + limit * 1_024)
    let rows = try decoded("attested_heads") { () throws(PostgRESTBody.Malformed) in
      try PostgRESTBody.rows(answer)
    }
    return try rows.map { row in
      try ReplicationWire.attestedHead(
        attestation: row["attestation"]?.text, sequence: row["sequence"]?.text, head: row["head"]?.text,
        keyHash: row["key_hash"]?.text, serverPosition: row["server_position"]?.text,
        serverHead: row["server_head"]?.text, attestedAtMicroseconds: row["attested_at_us"]?.text,
        server: server)
    }
  }

  /// The arguments of `pull`, `pull_chained` and `pull_subjects`.
  private static func pullBody(
    _ cursor: PullCursor, _ limit: Int, _ maxBytes: Int, _ waitMilliseconds: Int
  )
    -> [UInt8]
  {
    var body = Array(#"{"p_after":"#.utf8)
    body.append(contentsOf: String(cursor.position).utf8)
    body.append(contentsOf: #","p_after_id":"#.utf8)
    if let id = cursor.eventID {
      JSONWriter.appendQuoted(id, to: &body)
    } else {
      body.append(contentsOf: "null".utf8)
    }
    body.append(
      contentsOf: #","p_limit":\#(limit),"p_max_bytes":\#(maxBytes),"p_wait_ms":\#(waitMilliseconds)}"#.utf8)
    return body
  }

  /// The largest body a page of `limit` rows and `maxBytes` of payload past the first may have:
  /// the payloads (the budget and one event over it), each as JSON text inside a JSON string
  /// (escaping at most doubles it), and the other columns of every row.
  static func pageCap(limit: Int, maxBytes: Int) -> Int {
    2 * (maxBytes + ReplicationWire.maximumPayloadBytes) + limit * 4_096 + (64 << 10)
  }

  /// Waits up to `timeout` for news of the owner's events: the answer of a long poll
  /// (`eventlog_api.pull` after the last position pulled, waiting ``longPollWait`` on the server),
  /// which stays open across calls until it answers.
  /// - Returns: `true` when the server has events past the last position pulled (or no longer
  ///   holds what was pulled, or answered what the protocol does not allow: the next pull says
  ///   so), `false` when the time ran out first.
  /// - Throws: the long poll's failure (a ``SupabaseError``), once.
  public func waitForNews(upTo timeout: Duration) async throws -> Bool {
    try await poll.wait(upTo: timeout) { [self] after in
      let position: UInt64
      if let after { position = after } else { position = try await head() }
      do {
        let started = ContinuousClock.now
        let rows = try await pullRows(
          after: PullCursor(position: position, eventID: nil), limit: 1, maxBytes: 1_024, wait: longPollWait)
        // Nothing, well before the wait was up: the server holds as many waits of this owner as
        // it allows (the user's other devices' long polls), or this was the owner's first. Poll
        // no faster than a long poll would have: the rest of the wait passes here (the
        // replicator's poll interval goes on meanwhile).
        let left = longPollWait - (ContinuousClock.now - started)
        if rows.isEmpty && left > longPollWait / 2 { try await Task.sleep(for: left) }
        return !rows.isEmpty
      } catch is ReplicationError {
        // The server's log changed under the device, or its answer broke the protocol: a round
        // starts, and its pull says so (and records it) as a pull does.
        return true
      }
    }
  }

  // MARK: Requests

  /// A response body over its cap.
  struct PageTooLarge: Error {}

  /// Decodes with `body`, turning a malformed answer into a protocol violation.
  private func decoded<T>(_ function: String, _ body: () throws(PostgRESTBody.Malformed) -> T) throws -> T {
    do {
      return try body()
    } catch {
      throw ReplicationError.protocolViolation(server: server, reason: "\(function): \(error.reason)")
    }
  }

  /// `POST rpc/<function>` with `body` and the user's token; after an authentication failure,
  /// once more with a refreshed token.
  /// - Parameters:
  ///   - function: the `eventlog_api` function.
  ///   - body: the arguments, a JSON object.
  ///   - wait: how long the server may wait before it answers (a long poll), added to the timeout.
  ///   - isPush: whether a refusal of the values (`22…`, `23…`, `54000`) rejects the events.
  ///   - maximumBodyBytes: the largest answer accepted.
  /// - Returns: the body of a 2xx answer.
  /// - Throws: a ``SupabaseError``, `ReplicationError.serverChanged` (`EL001`, `EL002`),
  ///   `ReplicationError.ownerMismatch` (a token of another owner than the transport's),
  ///   ``PageTooLarge``, `CancellationError`.
  func call(
    _ function: String, _ body: [UInt8], wait: Duration = .zero, isPush: Bool = false,
    maximumBodyBytes: Int = 1 << 20
  ) async throws -> Data {
    var refresh = false
    while true {
      let token = try await token(refresh: refresh)
      var answer: Answer
      if function != "server_info" && !owner.admits(token) {
        // A token other than the one this transport checked (re-read, refreshed): whose it is,
        // before it carries anything.
        answer = try await exchange("server_info", Array("{}".utf8), token: token)
        if case .body(let info) = answer {
          try owner.admit(token, as: try Self.info(from: info, server: server).owner, server: server)
          answer = try await exchange(
            function, body, token: token, wait: wait, isPush: isPush, maximumBodyBytes: maximumBodyBytes)
        }
      } else {
        answer = try await exchange(
          function, body, token: token, wait: wait, isPush: isPush, maximumBodyBytes: maximumBodyBytes)
        if function == "server_info", case .body(let info) = answer {
          try owner.admit(token, as: try Self.info(from: info, server: server).owner, server: server)
        }
      }
      switch answer {
      case .body(let data):
        return data
      case .authentication(let reason):
        if refresh { throw SupabaseError.signInAgain(server: server, reason: reason) }
        refresh = true
      }
    }
  }

  /// What a request got: a 2xx answer's body, or a refusal of the session.
  enum Answer {
    /// The body of a 2xx answer.
    case body(Data)
    /// The server refused the session: refresh once, then
    /// ``SupabaseError/signInAgain(server:reason:)``.
    case authentication(String)
  }

  /// `POST rpc/<function>` with `body` and `token`, once.
  /// - Throws: as ``call(_:_:wait:isPush:maximumBodyBytes:)``, but a refused session is answered.
  private func exchange(
    _ function: String, _ body: [UInt8], token: String, wait: Duration = .zero, isPush: Bool = false,
    maximumBodyBytes: Int = 1 << 20
  ) async throws -> Answer {
    let request = HTTPRequest(
      url: project.function(function), method: .post,
      headers: [
        HTTPHeader("apikey", apiKey), HTTPHeader("Authorization", "Bearer \(token)"),
        HTTPHeader("Content-Type", "application/json"), HTTPHeader("Content-Profile", Self.exposedSchema),
        HTTPHeader("Accept", "application/json"),
      ],
      body: Data(body), timeout: ReplicationDeadline.remaining(capped: requestTimeout + wait),
      maximumBodyBytes: maximumBodyBytes, usesEnvironmentProxy: !project.isLoopback)
    let response: HTTPResponse
    do {
      response = try await HTTPClient.send(request)
    } catch {
      switch error {
      case .cancelled: throw CancellationError()
      case .bodyTooLarge: throw PageTooLarge()
      case .timedOut:
        throw SupabaseError.unreachable(
          server: server, reason: "no answer to \(function) within \(Self.seconds(request.timeout))")
      case .transport:
        throw SupabaseError.unreachable(server: server, reason: redacted(error.description, token: token))
      case .invalidRequest:
        throw SupabaseError.invalidRequest(reason: redacted(error.description, token: token))
      }
    }
    if (200..<300).contains(response.status) { return .body(response.body) }
    switch classify(response, function: function, isPush: isPush, token: token) {
    case .authentication(let reason):
      return .authentication(reason)
    case .serverChanged(let reason):
      throw ReplicationError.serverChanged(server: server, reason: reason)
    case .failure(let error):
      throw error
    }
  }

  /// The token to send: the provider's, checked.
  private func token(refresh: Bool) async throws -> String {
    let given: String?
    do {
      given = try await accessToken(refresh)
    } catch is CancellationError {
      throw CancellationError()
    } catch let error as any ReplicationTransportError {
      throw SupabaseError.tokenUnavailable(
        reason: redacted(error.description, token: nil), kind: error.failureKind)
    } catch {
      throw SupabaseError.tokenUnavailable(reason: redacted("\(error)", token: nil), kind: .fatal)
    }
    let token = given?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    // The API key is no user's session: supabase-js sends it as the bearer without one, which
    // makes the request the anon role's; this transport sends nothing instead.
    guard !token.isEmpty, token != apiKey else { throw SupabaseError.notSignedIn(server: server) }
    return token
  }

  /// What an error answer means.
  enum Classified {
    /// The session was refused: refresh once, then ``SupabaseError/signInAgain(server:reason:)``.
    case authentication(String)
    /// `EL001`, `EL002`: the server's log changed under the device.
    case serverChanged(String)
    /// Anything else.
    case failure(SupabaseError)
  }

  /// The SQLSTATEs (and PostgREST codes) that say: the same request may succeed later.
  static let transientCodes: Set<String> = [
    "PGRST000", "PGRST001", "PGRST002", "PGRST003", "40001", "40P01", "57014", "55P03", "53300", "57P01",
    "57P02", "57P03",
  ]

  /// What the non-2xx `response` to `function` means, by PostgREST's `code` first.
  func classify(_ response: HTTPResponse, function: String, isPush: Bool, token: String) -> Classified {
    let body = PostgRESTBody.error(response.body)
    let message = redacted(body.text ?? Self.summary(of: response), token: token)
    let status = response.status
    func failure(_ kind: TransportFailureKind) -> Classified {
      .failure(
        .server(
          server: server, function: function, status: status, code: body.code, message: message, kind: kind))
    }
    guard let code = body.code else {
      // No PostgREST code: a gateway's answer.
      switch status {
      case 401: return .authentication("HTTP 401: \(message)")
      case 408, 429, 500...599: return failure(.transient)
      case 404:
        return .failure(
          .apiMissing(server: server, reason: "HTTP 404 for /rest/v1/rpc/\(function): \(message)"))
      default: return failure(.fatal)
      }
    }
    switch code {
    case "PGRST301", "PGRST302", "PGRST303":
      return .authentication("\(code): \(message)")
    case "42501" where status == 401:
      // The anonymous role was refused: the request carried no user's session.
      return .authentication("\(code): \(message)")
    case "EL001", "EL002":
      return .serverChanged(message)
    case "PGRST202", "PGRST106", "42883", "3F000":
      return .failure(.apiMissing(server: server, reason: "\(code): \(message)"))
    case _ where Self.transientCodes.contains(code) || code.hasPrefix("08"):
      return failure(.transient)
    case "23505" where message.contains("events_pkey") || message.contains("events_positions_gap_free"):
      // Positions collided with an insert that bypassed push (an operator's): try again.
      return failure(.transient)
    case _ where isPush && (code.hasPrefix("22") || code.hasPrefix("23") || code == "54000"):
      return failure(.rejected)
    default:
      return failure(.fatal)
    }
  }

  /// `HTTP 502 (<the start of the body>)` for an answer that is not a JSON error.
  static func summary(of response: HTTPResponse) -> String {
    let text = String(decoding: response.body.prefix(2_048), as: UTF8.self)
      .replacingOccurrences(of: "<[^>]*>", with: " ", options: .regularExpression)
      .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    return "HTTP \(response.status)" + (text.isEmpty ? "" : " (\(text.prefix(200)))")
  }

  /// `text` without the API key or `token`, at most 1,000 characters: what any error keeps of a
  /// server's or a library's words. Each is cut whole, each segment of a JWT on its own, and
  /// every run of 8 or more of its characters (``SecretRedaction``), so a server that quotes a
  /// token in halves, or only its payload or signature, leaves none of it; secrets shorter than
  /// 4 characters are no secret worth the damage to the text.
  func redacted(_ text: String, token: String?) -> String {
    // Long answers are cut first: what the cut leaves of a secret is cut too when it has 8 characters.
    let bounded =
      text.unicodeScalars.count > 8_000
      ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(8_000))) : text
    let secrets = [apiKey, token ?? ""].filter { $0.count >= 4 }
    let text = SecretRedaction.redacting(bounded, secrets: secrets, marker: "[redacted]")
    return text.count > 1_000 ? String(text.prefix(1_000)) + "…" : text
  }

  static func seconds(_ duration: Duration) -> String {
    String(
      format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
  }
}
