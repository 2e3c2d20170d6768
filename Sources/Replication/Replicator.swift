import EventLog
import Foundation
import Sodium

/// How a ``Replicator`` batches, pages and retries.
public struct ReplicationOptions: Sendable {
  /// Events per push (one server transaction each; the server takes at most 1,000).
  public var pushBatchSize = 500
  /// Events per pulled page (one local write transaction each).
  public var pullPageSize = 1_000
  /// The most payload bytes a pulled page holds past its first event (the server caps it at
  /// 16 MiB; an event holds at most 4 MiB).
  public var pullPageBytes = 8 << 20
  /// How long a one-shot push or pull may go without progress (a batch pushed, a page pulled)
  /// before it gives up (``ReplicationError/gaveUp(after:lastError:)``): retries, connecting and
  /// a statement in flight included; `nil` retries until stopped. A ``ReplicationDeadline`` set
  /// by the caller (a command doing both) is used instead.
  public var retryFor: Duration? = .seconds(30)
  /// The first wait before a retry; it doubles up to ``maximumBackoff``.
  public var initialBackoff: Duration = .milliseconds(100)
  /// The longest wait between retries.
  public var maximumBackoff: Duration = .seconds(5)
  /// In live mode, how often to pull without a notification (the poll fallback).
  public var pollInterval: Duration = .seconds(5)
  /// In live mode, the shortest time between two pulls that notifications start: a flood of
  /// notifications (anyone who learns the channel may send them) costs at most one pull per
  /// interval.
  public var minimumPullInterval: Duration = .seconds(1)

  /// The defaults.
  public init() {}
}

/// What a push did.
public struct PushSummary: Sendable, Hashable {
  /// Events the server stored.
  public var pushed = 0
  /// Events the server held already (same ID, same content): acknowledged.
  public var alreadyStored = 0
  /// Events the server refused for good (recorded: ``ReplicationStatus/rejected``), conflicts
  /// included.
  public var rejected = 0
  /// Of ``rejected``, events whose ID the server holds with other content.
  public var conflicts = 0
  /// Events the server refused in an earlier push, for a cause that may have passed
  /// (``Rejection/mayPass``), sent again: those it stores or holds count in ``pushed`` and
  /// ``alreadyStored`` (and are no longer recorded as rejected), those it refuses again in
  /// ``rejected``.
  public var retried = 0
  /// Events still waiting (when the push was stopped early).
  public var pending = 0
  /// The last local sequence the server acknowledged.
  public var pushedThrough: UInt64 = 0
  /// Data subjects' keys the server stored (server schema version 6).
  public var keysPushed = 0
  /// Keys the server refused: their subjects are erased there.
  public var keysRefused = 0

  /// An empty summary.
  public init() {}
}

/// What a pull did.
public struct PullSummary: Sendable, Hashable {
  /// Server events stored locally.
  public var pulled = 0
  /// Server events the local log held already (this device's own, or an earlier pull's).
  public var alreadyPresent = 0
  /// Of ``pulled``, those the projections skip (unreadable or breaking the domain's rules), and
  /// those that could not be stored at all.
  public var unreadable = 0
  /// Of ``alreadyPresent``, those this log holds with other content than the server's
  /// (recorded: ``ReplicationStatus/conflicts``).
  public var conflicts = 0
  /// The last server position pulled.
  public var cursor: UInt64 = 0
  /// Data subjects' keys pulled and stored here (server schema version 6; one of a subject this
  /// device holds a key of, or erased, is not).
  public var keysStored = 0

  /// An empty summary.
  public init() {}
}

/// How far a push or pull has come, for a progress line.
public struct ReplicationProgress: Sendable {
  /// `push` or `pull`.
  public var phase: String
  /// Events done.
  public var completed: Int
  /// Events to do in all (as known when the work began).
  public var total: Int
}

/// Shares a log's replicated streams with the owner's other devices through a server.
///
/// - **Push.** The outbox is the log itself: every event past the pushed mark on a replicated
///   stream that did not come from the server (this device's own, and those an import loaded),
///   in local order, in batches of one server transaction each. The server checks each event on
///   its own: stored and already stored acknowledge; a refused event or a conflict (the server
///   holds other content under its ID) is recorded (``ReplicationStatus/rejected``) and passed,
///   so it never blocks the events after it. A refusal whose cause may pass (a stream the server
///   does not replicate yet, ``Rejection/mayPass``) is sent again by later pushes; an event the
///   server stores or holds is no longer recorded as rejected. The server keeps this device's
///   mark under the device's secret key, and the mark names the last event it acknowledged: the device trusts
///   the mark only when its own log holds that event there, and past that event only as far as
///   its own mark goes (a log that lost its last commits to a power cut or a restore numbers
///   new events there); it pushes again from the server's mark when that is lower than its own
///   (a server restored from an older backup).
/// - **Pull.** Pages of the owner's server events after the cursor, bounded by count and bytes,
///   each stored with ``EventStore/ingest(_:expectingHead:allOrNothing:updatingState:)`` in one
///   local transaction that also moves the cursor: a crash leaves the old state or the new. The
///   server checks that it still holds, at the cursor, the event the device pulled there, and the
///   device checks that the events the server acknowledged are where it said: when either fails
///   the device stops replicating and says so until ``resync()``, instead of skipping events.
///   A row that is not a well-formed event, an event on a stream this app does not replicate,
///   or one this build cannot store is recorded and passed; an event the domain cannot read is
///   stored and skipped by the projections.
/// - **Owner.** Each push and pull first asks the server which owner it takes the credentials in
///   use for (``ReplicationTransport/serverInfo()``). The device records that owner at its first
///   contact and from then on refuses, before anything is sent or marked, to push or pull as
///   another (``ReplicationError/ownerMismatch(server:recorded:found:)``): a wrong access token
///   or database role cannot move this device's events into another owner's log, where they
///   would stay. ``reassign(to:onRetry:)`` moves a device to another owner on purpose.
/// - **Live** (``watch(shouldStop:report:)``): pushes what commits locally, pulls what the server
///   announces (at most once per ``ReplicationOptions/minimumPullInterval``) or, without
///   notifications, every ``ReplicationOptions/pollInterval``, and retries through outages until
///   stopped.
///
/// It knows nothing of the domain: which streams replicate, and the payloads' JSON form on the
/// server, come from the store's schema (``EventLog/AppSchema/replicatedStreams``,
/// ``EventLog/AppSchema/eventTypes``), so the store and the replicator cannot disagree.
public final class Replicator: Sendable {
  /// The local log.
  public let store: EventStore
  /// The server.
  public let transport: any ReplicationTransport
  /// Whether a stream's events are shared: ``EventLog/AppSchema/isReplicated(_:)`` of the store's
  /// schema.
  public let isReplicated: @Sendable (StreamID) -> Bool
  /// Batching, paging and retrying.
  public let options: ReplicationOptions

  /// Creates a replicator of `store`'s replicated streams (its schema's
  /// ``EventLog/AppSchema/replicatedStreams``), whose payloads take their JSON form on the server
  /// from its schema's event types and the layouts its environment recorded (a payload without
  /// either travels as `{"$binary": …}`).
  /// - Parameters:
  ///   - store: the local log.
  ///   - transport: the server.
  ///   - options: batching, paging and retrying.
  public init(
    store: EventStore, transport: any ReplicationTransport, options: ReplicationOptions = ReplicationOptions()
  ) {
    self.store = store
    self.transport = transport
    let streams = store.appSchema.replicatedStreams
    self.isReplicated = { streams.contains($0) }
    self.options = options
  }

  private var deviceID: UUID {
    get throws {
      guard let device = store.deviceID else { throw ReplicationError.noDevice(path: store.path) }
      return device
    }
  }

  /// This device's credentials on the server: its ID, and its secret key, made (and stored in the
  /// environment's state) on first use. The key is the device's alone: never print or send it
  /// elsewhere.
  public func deviceCredentials() async throws -> DeviceCredentials {
    guard let credentials = try await credentials(creating: true) else {
      throw ReplicationError.noDevice(path: store.path)
    }
    return credentials
  }

  func credentials(creating: Bool) async throws -> DeviceCredentials? {
    let id = try deviceID
    if let key = try store.stateValue(forKey: ReplicationState.deviceKeyKey), key.count == 64 {
      return DeviceCredentials(id: id, key: String(decoding: key, as: UTF8.self))
    }
    guard creating else { return nil }
    var generator = SystemRandomNumberGenerator()
    let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
      .joined()
    try await store.updateState([.put(ReplicationState.deviceKeyKey, Array(key.utf8))])
    return DeviceCredentials(id: id, key: key)
  }

  /// SHA-256 of this device's secret key, as the server keeps marks and attestations under it, or
  /// `nil` before the key was made (nothing was pushed). Reads only.
  func deviceKeyHash() throws -> [UInt8]? {
    guard let key = try store.stateValue(forKey: ReplicationState.deviceKeyKey), key.count == 64 else {
      return nil
    }
    return SHA256.hash(key)
  }

  // MARK: Retrying

  /// Runs `body` with the command's deadline: the caller's ``ReplicationDeadline`` when it set
  /// one, else ``ReplicationOptions/retryFor`` from now (none in live mode).
  func withDeadline<T>(_ body: () async throws -> T) async throws -> T {
    guard ReplicationDeadline.current == nil, let budget = options.retryFor else { return try await body() }
    return try await ReplicationDeadline.$current.withValue(ReplicationDeadline(budget: budget)) {
      try await body()
    }
  }

  /// Runs `body` until it succeeds, retrying transient failures with backoff until the
  /// deadline (forever without one).
  func retrying<T>(
    onRetry: (@Sendable (String, Duration) -> Void)?, _ body: () async throws -> T
  ) async throws -> T {
    let start = ContinuousClock.now
    var delay = options.initialBackoff
    while true {
      do {
        return try await body()
      } catch let error as any ReplicationTransportError where error.failureKind == .transient {
        if let deadline = ReplicationDeadline.current, ContinuousClock.now + delay >= deadline.instant {
          throw ReplicationError.gaveUp(
            after: options.retryFor ?? (ContinuousClock.now - start), lastError: error.description)
        }
        onRetry?(error.description, delay)
        try await Task.sleep(for: delay)
        delay = min(delay * 2, options.maximumBackoff)
      }
    }
  }

  /// Checks that the server can be reached and has a schema this build speaks, retrying a
  /// transient failure until the deadline.
  /// - Throws: ``ReplicationError`` (a missing, older or newer schema; gave up) or a fatal
  ///   transport error (a wrong password).
  public func checkServer(onRetry: (@Sendable (String, Duration) -> Void)? = nil) async throws {
    try await withDeadline { try await retrying(onRetry: onRetry) { try await transport.checkSchema() } }
  }

  /// The server's view of this device: its schema, the owner's head and this device's mark
  /// there (0 when it has pushed nothing under its key).
  public func serverStatus(
    onRetry: (@Sendable (String, Duration) -> Void)? = nil
  ) async throws -> (info: ServerInfo, mark: ServerMark) {
    try await withDeadline {
      let info = try await retrying(onRetry: onRetry) { try await transport.serverInfo() }
      guard let device = try await credentials(creating: false) else {
        return (info, ServerMark(pushedThrough: 0))
      }
      let mark = try await retrying(onRetry: onRetry) { try await transport.pushedMark(device: device) }
      return (info, mark)
    }
  }

  /// Checks that the server takes this device's credentials for the owner it replicates as,
  /// and records that owner at the device's first contact with a server (a device an older build
  /// replicated, which has marks but no owner, records it at its next contact).
  /// - Throws: ``ReplicationError/ownerMismatch(server:recorded:found:)``, before anything is sent
  ///   or marked as another owner; ``ReplicationError/protocolViolation(server:reason:)`` for an
  ///   owner no server names.
  private func admit(_ info: ServerInfo) async throws {
    try checkOwnerName(info.owner)
    if let recorded = try local.owner() {
      guard recorded == info.owner else {
        throw ReplicationError.ownerMismatch(server: transport.server, recorded: recorded, found: info.owner)
      }
      return
    }
    try await store.updateState([.put(ReplicationState.ownerKey, Array(info.owner.utf8))])
  }

  /// An owner as a server names it: 1 to 256 bytes, no control characters.
  private func checkOwnerName(_ owner: String) throws {
    guard !owner.isEmpty, owner.utf8.count <= 256,
      !owner.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      throw ReplicationError.protocolViolation(
        server: transport.server,
        reason: "server_info named an owner no server names (\(owner.utf8.count) bytes)")
    }
  }

  /// Moves this device to `owner`, which must be the owner the server takes the credentials in
  /// use for: it is recorded as the owner this device replicates as, and what the device knew of
  /// its old owner's log is forgotten (the pushed mark, the cursor, the acknowledgements a pull
  /// had yet to see, the rows of that log it did not store or found in conflict, and the record
  /// that the log changed under it).
  ///
  /// The events this device pushed under the old owner stay in that owner's log on the server
  /// (it is append-only). The next push sends the whole outbox to `owner`: the events the old
  /// owner's log does not hold are stored; those it holds are refused (`the event ID is taken`)
  /// and recorded (``ReplicationStatus/rejected``). The next pull brings `owner`'s events from
  /// the start. Events pulled from the old owner's log stay in this log, and are not pushed.
  /// - Parameters:
  ///   - owner: the owner to move to, as the server names it (`remote status` shows it).
  ///   - onRetry: called before each retry of a transient failure.
  /// - Returns: the owner the device replicated as before (`nil`: none was recorded), or `owner`
  ///   when nothing changed.
  /// - Throws: ``ReplicationError/reassignRefused(server:requested:found:)`` when the server takes
  ///   the credentials for another owner (nothing changes), a transport or storage error.
  public func reassign(
    to owner: String, onRetry: (@Sendable (String, Duration) -> Void)? = nil
  ) async throws -> String? {
    try await withDeadline {
      let info = try await retrying(onRetry: onRetry) { try await transport.serverInfo() }
      try checkOwnerName(info.owner)
      guard info.owner == owner else {
        throw ReplicationError.reassignRefused(server: transport.server, requested: owner, found: info.owner)
      }
      let previous = try local.owner()
      guard previous != owner else { return previous }
      var changes: [EventStore.StateChange] = [
        .put(ReplicationState.ownerKey, Array(owner.utf8)), .delete(ReplicationState.pushedKey),
        .delete(ReplicationState.cursorKey), .delete(ReplicationState.divergedKey),
        .delete(ReplicationState.serverHeadKey), .put(ReplicationState.repushKey, [1]),
        .delete(ReplicationState.keyCursorKey),
      ]
      for prefix in [
        ReplicationState.ackedPrefix, ReplicationState.unstorablePrefix, ReplicationState.conflictPrefix,
        ReplicationState.positionPrefix, ReplicationState.atPrefix, ReplicationState.keySentPrefix,
      ] {
        for entry in try store.stateEntries(withPrefix: prefix) { changes.append(.delete(entry.key)) }
      }
      try await store.updateState(changes)
      return previous
    }
  }

  private func checkNotDiverged() throws {
    if let reason = try local.diverged() { throw ReplicationError.diverged(path: store.path, reason: reason) }
  }

  /// Records that the server's log no longer matches this device's; every later push and pull
  /// refuses until ``resync()``.
  private func diverge(_ reason: String) async throws -> Never {
    try await store.updateState([.put(ReplicationState.divergedKey, Array(reason.utf8))])
    throw ReplicationError.serverChanged(server: transport.server, reason: reason)
  }

  /// Forgets what this device knew of the server (its marks, its cursor, the server head it
  /// recorded there, the acknowledgements a pull had yet to see, the events' server positions, and
  /// the record that the server's log changed): the next push sends every event of the outbox
  /// again (the server acknowledges those it holds and stores those it lost), and the next pull
  /// starts from the server's first event (those this log holds are not stored again, and their
  /// positions are learnt again). Run it once the server is the one to keep.
  public func resync() async throws {
    var changes: [EventStore.StateChange] = [
      .delete(ReplicationState.divergedKey), .delete(ReplicationState.pushedKey),
      .delete(ReplicationState.cursorKey), .delete(ReplicationState.serverHeadKey),
      .put(ReplicationState.repushKey, [1]), .delete(ReplicationState.keyCursorKey),
    ]
    for prefix in [
      ReplicationState.ackedPrefix, ReplicationState.positionPrefix, ReplicationState.atPrefix,
      ReplicationState.keySentPrefix,
    ] {
      for entry in try store.stateEntries(withPrefix: prefix) { changes.append(.delete(entry.key)) }
    }
    try await store.updateState(changes)
  }

  // MARK: Push

  /// Sends the outbox.
  ///
  /// First, when `retryingRejections`, it sends again the events the server refused in earlier
  /// pushes for a cause that may have passed (``Rejection/mayPass``: a stream the server did not
  /// replicate then), oldest first, a batch at a time, and stops at the first batch the server
  /// stores or holds none of (the cause is still there): a push costs at most one batch more
  /// while it is. Those the server stores or holds are no longer recorded as rejected.
  /// - Parameters:
  ///   - retryingRejections: whether to send again the refusals whose cause may have passed.
  ///   - progress: called after each batch.
  ///   - onRetry: called before each retry of a transient failure, with the error and the wait.
  ///   - shouldStop: asked between batches; the batch in flight finishes.
  /// - Throws: a fatal transport error, ``ReplicationError/gaveUp(after:lastError:)``,
  ///   ``ReplicationError/diverged(path:reason:)``,
  ///   ``ReplicationError/ownerMismatch(server:recorded:found:)`` (before anything is sent, when
  ///   the server takes the credentials for another owner than the one this device replicates
  ///   as), a local storage error. Nothing is marked pushed that the server did not acknowledge;
  ///   the batches acknowledged before a failure stay marked.
  /// - Returns: how many events the server stored, already held or refused, how many still wait,
  ///   and the last sequence it acknowledged.
  public func push(
    retryingRejections: Bool = true,
    progress: (@Sendable (ReplicationProgress) -> Void)? = nil,
    onRetry: (@Sendable (String, Duration) -> Void)? = nil,
    shouldStop: @Sendable () -> Bool = { false }
  ) async throws -> PushSummary {
    try await withDeadline {
      try checkNotDiverged()
      let info = try await retrying(onRetry: onRetry) { try await transport.serverInfo() }
      try await admit(info)
      // From schema version 5 each batch attests this device's chain value at its mark.
      let anchored = info.schemaVersion >= Self.anchoringSchema
      guard let device = try await credentials(creating: true) else {
        throw ReplicationError.noDevice(path: store.path)
      }
      let serverMark = try await retrying(onRetry: onRetry) { try await transport.pushedMark(device: device) }
      let localMark = try local.pushedThrough()
      // After a resync, the server's mark is what changed under this device: the whole outbox
      // goes again, and the server acknowledges what it holds.
      let repush = try store.stateValue(forKey: ReplicationState.repushKey) != nil
      var mark = repush ? 0 : try trustedMark(serverMark, localMark: localMark)
      if mark != localMark || repush {
        var changes: [EventStore.StateChange] = [
          .put(ReplicationState.pushedKey, ReplicationState.encode(mark))
        ]
        if mark < localMark {
          // The server lost what it acknowledged after its mark (restored from an older backup):
          // those acknowledgements say nothing any more, and the events go again.
          for entry in try store.stateEntries(withPrefix: ReplicationState.ackedPrefix) {
            changes.append(.delete(entry.key))
          }
        }
        try await store.updateState(changes)
      }
      var summary = PushSummary()
      if info.schemaVersion >= Self.keysSchema {
        try await pushKeys(device: device.id, into: &summary, onRetry: onRetry, shouldStop: shouldStop)
      }
      let conversion = try PayloadConversion(store: store)
      let total = try local.outbox(after: mark).count
      // Rejections of events the server now stores or holds are no longer shown (after a resync
      // or a reassign, the whole outbox goes again).
      let rejections = try local.rejections()
      var rejected = Set(rejections.map(\.sequence))
      if retryingRejections && mark > 0 {
        // Sent with the mark as it is: the server's mark neither moves nor names another event.
        var retry = rejections.filter { $0.sequence <= mark && $0.mayPass }.map(\.sequence)[...]
        let size = max(1, min(options.pushBatchSize, 1_000))
        while !retry.isEmpty && !shouldStop() {
          let batch = try retry.prefix(size).compactMap { try outgoing(at: $0, conversion: conversion) }
          retry = retry.dropFirst(size)
          guard !batch.isEmpty else { continue }
          let before = summary
          let outcomes = try await send(
            batch, device: device, through: mark, keepingThrough: true, anchored: anchored, onRetry: onRetry)
          try await store.updateState(record(outcomes, rejected: &rejected, into: &summary))
          ReplicationDeadline.current?.progressed()
          summary.retried += batch.count
          if summary.pushed + summary.alreadyStored == before.pushed + before.alreadyStored { break }
        }
      }
      var done = 0
      while !shouldStop() {
        let (batch, through) = try collect(
          after: mark, limit: max(1, min(options.pushBatchSize, 1_000)), conversion: conversion)
        if batch.isEmpty {
          if through > mark {
            mark = through
            try await store.updateState([.put(ReplicationState.pushedKey, ReplicationState.encode(mark))])
          }
          break
        }
        let outcomes = try await send(
          batch, device: device, through: through, anchored: anchored, onRetry: onRetry)
        var changes = record(outcomes, rejected: &rejected, into: &summary)
        mark = through
        changes.append(.put(ReplicationState.pushedKey, ReplicationState.encode(mark)))
        try await store.updateState(changes)
        ReplicationDeadline.current?.progressed()
        done += batch.count
        progress?(ReplicationProgress(phase: "push", completed: done, total: max(total, done)))
      }
      summary.pushedThrough = mark
      summary.pending = try local.outbox(after: mark).count
      // The whole outbox went again: the server's mark can be trusted from here on.
      if repush && summary.pending == 0 { try await store.updateState([.delete(ReplicationState.repushKey)]) }
      return summary
    }
  }

  /// The state changes that record what the server did with pushed events, counted into
  /// `summary`: a stored or already held event is located (and no longer recorded as rejected),
  /// a refused one recorded.
  private func record(
    _ outcomes: [(OutgoingEvent, PushOutcome)], rejected: inout Set<UInt64>, into summary: inout PushSummary
  ) -> [EventStore.StateChange] {
    var changes: [EventStore.StateChange] = []
    for (event, outcome) in outcomes {
      switch outcome {
      case .stored(let position):
        summary.pushed += 1
        changes.append(
          .put(
            ReplicationState.key(ReplicationState.ackedPrefix, position), ReplicationState.uuidBytes(event.id)
          ))
        changes += ReplicationState.located(event.localSequence, at: position)
        if rejected.remove(event.localSequence) != nil {
          changes.append(.delete(ReplicationState.key(ReplicationState.rejectedPrefix, event.localSequence)))
        }
      case .alreadyStored(let position):
        summary.alreadyStored += 1
        changes += ReplicationState.located(event.localSequence, at: position)
        if rejected.remove(event.localSequence) != nil {
          changes.append(.delete(ReplicationState.key(ReplicationState.rejectedPrefix, event.localSequence)))
        }
      case .conflict(_, let reason):
        summary.rejected += 1
        summary.conflicts += 1
        rejected.insert(event.localSequence)
        changes.append(
          .put(
            ReplicationState.key(ReplicationState.rejectedPrefix, event.localSequence),
            ReplicationState.note(event.id, "conflict: " + reason)))
      case .refused(let reason):
        summary.rejected += 1
        rejected.insert(event.localSequence)
        changes.append(
          .put(
            ReplicationState.key(ReplicationState.rejectedPrefix, event.localSequence),
            ReplicationState.note(event.id, reason)))
      }
    }
    return changes
  }

  /// The outgoing form of the local event `sequence`, or `nil` when it is not one to push (gone,
  /// or no longer on a replicated stream).
  private func outgoing(at sequence: UInt64, conversion: PayloadConversion) throws -> OutgoingEvent? {
    guard let event = try store.event(at: sequence), isReplicated(event.stream) else { return nil }
    return outgoing(event, conversion: conversion)
  }

  /// The outgoing form of `event`.
  private func outgoing(_ event: RecordedEvent, conversion: PayloadConversion) -> OutgoingEvent {
    OutgoingEvent(
      localSequence: event.sequence, id: event.id, stream: event.stream, type: event.type,
      schemaVersion: event.schemaVersion, payload: conversion.outgoing(event), metadata: event.metadata,
      recordedAt: event.recordedAt, provenance: event.provenance, subjects: event.subjects)
  }

  /// The mark to push after, from the server's mark and this log's own (`localMark`).
  ///
  /// The server's mark names the last event it acknowledged (its local sequence and ID) and the
  /// sequence its acknowledgement covers (`pushedThrough`: past that event when the push's range
  /// held pulled events after it). When this log holds that event at that sequence, its history up
  /// to there is the one the server saw (sequences are never reused within one history, and the ID
  /// is unique), so every event of the outbox up to it is on the server: the mark is at least that
  /// sequence, even above this log's own (a crash between the server's commit and the local one).
  /// Past that event the server can name nothing: a log that lost its last commits (a power cut,
  /// a restore from an older backup) numbers its new events there, so there the mark goes only as
  /// far as this log's own record of what the server acknowledged, and no further than the
  /// server's (a server restored from an older backup: the events it lost go again). When the
  /// event is not there (a mark under another key, or about another copy of this log), the mark
  /// is 0: the whole outbox goes again and the server acknowledges what it holds.
  private func trustedMark(_ mark: ServerMark, localMark: UInt64) throws -> UInt64 {
    guard let sequence = mark.lastSequence, let id = mark.lastID, sequence <= mark.pushedThrough else {
      return 0
    }
    guard try store.event(at: sequence)?.id == id else { return 0 }
    return max(sequence, min(mark.pushedThrough, localMark))
  }

  /// The server schema version from which a push attests the device's chain head and a pull
  /// records the server's (`eventlog_api.pull_chained`).
  static let anchoringSchema = 5

  /// The server schema version from which events carry their data subjects and the subjects'
  /// keys replicate (`eventlog_api.pull_subjects`, `push_keys`, `pull_keys`).
  static let keysSchema = 6

  /// Keys per `push_keys` and `pull_keys` call.
  static let keyBatchSize = 1_000

  // MARK: Keys

  /// Sends the data subjects' keys this device holds that the server has not answered for yet
  /// (``ReplicationState/keySentPrefix``), a batch at a time: each key the server answers for
  /// (stored, held, or refused because the subject is erased there) is not sent again. A key
  /// this device pulled is noted as answered when it is stored here.
  private func pushKeys(
    device: UUID, into summary: inout PushSummary, onRetry: (@Sendable (String, Duration) -> Void)?,
    shouldStop: @Sendable () -> Bool
  ) async throws {
    let sent = Set(
      try store.stateEntries(withPrefix: ReplicationState.keySentPrefix).compactMap {
        ReplicationState.uuid($0.key.dropFirst(ReplicationState.keySentPrefix.count))
      })
    var waiting = try store.subjectKeys().filter { !sent.contains($0.subject) }[...]
    while !waiting.isEmpty && !shouldStop() {
      let batch = Array(waiting.prefix(Self.keyBatchSize))
      waiting = waiting.dropFirst(Self.keyBatchSize)
      let outcomes = try await retrying(onRetry: onRetry) {
        try await transport.pushKeys(batch, device: device)
      }
      for outcome in outcomes {
        switch outcome {
        case .stored: summary.keysPushed += 1
        case .held: break
        case .erased: summary.keysRefused += 1
        }
      }
      try await store.updateState(
        batch.map { .put(ReplicationState.keySentPrefix + ReplicationState.uuidBytes($0.subject), []) })
      ReplicationDeadline.current?.progressed()
    }
  }

  /// Brings the owner's keys the server stored after the last this device pulled, and stores
  /// them (``EventLog/EventStore/storeSubjectKeys(_:)``: a subject this device holds a key of
  /// keeps it, an erased subject's key is refused here too).
  /// - Returns: how many keys were stored here.
  private func pullKeys(
    onRetry: (@Sendable (String, Duration) -> Void)?, shouldStop: @Sendable () -> Bool
  ) async throws -> Int {
    var serial = ReplicationState.decode(try store.stateValue(forKey: ReplicationState.keyCursorKey))
    var stored = 0
    while !shouldStop() {
      let after = serial
      let page = try await retrying(onRetry: onRetry) {
        try await transport.pullKeys(after: after, limit: Self.keyBatchSize)
      }
      guard let last = page.last else { break }
      guard page.allSatisfy({ $0.serial > after }) else {
        throw ReplicationError.protocolViolation(
          server: transport.server, reason: "pull_keys after \(after) answered a key at or before it")
      }
      stored += try await store.storeSubjectKeys(
        page.map(\.key))
      serial = last.serial
      var changes: [EventStore.StateChange] = [
        .put(ReplicationState.keyCursorKey, ReplicationState.encode(serial))
      ]
      changes += page.map {
        .put(ReplicationState.keySentPrefix + ReplicationState.uuidBytes($0.key.subject), [])
      }
      try await store.updateState(changes)
      ReplicationDeadline.current?.progressed()
      if page.count < Self.keyBatchSize { break }
    }
    return stored
  }

  /// Pushes `batch` in one server transaction; when the server refuses the batch as a whole
  /// (too large, say), pushes its events one by one, so that only those it refuses alone are
  /// rejected. When `anchored`, each push attests this log's chain value at its `through`.
  ///
  /// The pushes one by one give each event's own sequence as their `through`, unless
  /// `keepingThrough` (events sent again below the mark, which must not move back).
  /// - Returns: each event with what the server did.
  private func send(
    _ batch: [OutgoingEvent], device: DeviceCredentials, through: UInt64, keepingThrough: Bool = false,
    anchored: Bool, onRetry: (@Sendable (String, Duration) -> Void)?
  ) async throws -> [(OutgoingEvent, PushOutcome)] {
    // A record stored before environment format 5 and not rewritten yet has no chain value.
    let head = anchored ? try store.event(at: through)?.chain : nil
    do {
      let outcomes = try await retrying(onRetry: onRetry) {
        try await transport.push(batch, device: device, through: through, head: head)
      }
      return Array(zip(batch, outcomes))
    } catch let error as any ReplicationTransportError where error.failureKind == .rejected {
      guard batch.count > 1 else { return [(batch[0], .refused(reason: error.description))] }
      var results: [(OutgoingEvent, PushOutcome)] = []
      for event in batch {
        results += try await send(
          [event], device: device, through: keepingThrough ? through : event.localSequence,
          anchored: anchored,
          onRetry: onRetry)
      }
      return results
    }
  }

  /// The outbox events after `mark`, up to `limit`, and the last local sequence looked at.
  private func collect(
    after mark: UInt64, limit: Int, conversion: PayloadConversion
  ) throws -> ([OutgoingEvent], UInt64) {
    var batch: [OutgoingEvent] = []
    var through = mark
    while batch.count < limit {
      // No more than the batch still needs: the events read past it would be read (and decoded)
      // again by the next batch.
      let chunk = min(2_048, limit - batch.count)
      let events = try store.events(from: through + 1, limit: chunk)
      guard let last = events.last else { break }
      let pulled = try local.pulledSequences(from: through + 1, through: last.sequence)
      for event in events {
        if isReplicated(event.stream) && !pulled.contains(event.sequence) {
          batch.append(outgoing(event, conversion: conversion))
        }
        through = event.sequence
        if batch.count == limit { break }
      }
      if events.count < chunk && batch.count < limit { break }
    }
    return (batch, through)
  }

  // MARK: Pull

  /// Brings the owner's server events this log lacks.
  /// - Parameters: as ``push(progress:onRetry:shouldStop:)``; `shouldStop` is asked between
  ///   pages.
  /// - Throws: as ``push(progress:onRetry:shouldStop:)``, and
  ///   ``ReplicationError/serverChanged(server:reason:)`` (recorded) when the server no longer
  ///   holds what this device pulled or pushed.
  public func pull(
    progress: (@Sendable (ReplicationProgress) -> Void)? = nil,
    onRetry: (@Sendable (String, Duration) -> Void)? = nil,
    shouldStop: @Sendable () -> Bool = { false }
  ) async throws -> PullSummary {
    try await withDeadline {
      try checkNotDiverged()
      var cursor = try local.pullCursor()
      let start = cursor.position
      let info = try await retrying(onRetry: onRetry) { try await transport.serverInfo() }
      try await admit(info)
      let serverHead = info.head
      // From schema version 5 the rows come with the server's chain, whose value at the cursor
      // is recorded with it.
      let anchored = info.schemaVersion >= Self.anchoringSchema
      let withSubjects = info.schemaVersion >= Self.keysSchema
      if serverHead < cursor.position {
        try await diverge(
          "it holds \(serverHead) events of this owner, but this device has pulled \(cursor.position)")
      }
      let acked = try store.stateEntries(withPrefix: ReplicationState.ackedPrefix)
      if let last = acked.last,
        let position = ReplicationState.number(inKey: last.key, after: ReplicationState.ackedPrefix),
        position > serverHead
      {
        try await diverge(
          "it acknowledged an event of this device at position \(position), but holds only \(serverHead) events"
        )
      }
      var summary = PullSummary()
      let conversion = try PayloadConversion(store: store)
      let pageSize = max(1, options.pullPageSize)
      // The next page is fetched while this one is stored: the server's and the transport's work
      // hides behind the local durable commit. Positions are gap-free, so the next page starts
      // after this page's last row whatever the local commit does; a page fetched but never
      // stored (an error, a stop) changes nothing.
      var prefetched: Task<PulledPage, any Error>?
      defer { prefetched?.cancel() }
      var limit = pageSize
      while !shouldStop() {
        let page: [PulledRow]
        let asked: Int
        let chainHead: ServerChainHead?
        do {
          let fetched: PulledPage
          if let next = prefetched {
            prefetched = nil
            fetched = try await next.value
          } else {
            fetched = try await fetch(
              after: cursor, limit: limit, head: serverHead, anchored: anchored, withSubjects: withSubjects,
              onRetry: onRetry)
          }
          (page, asked, chainHead) = (fetched.rows, fetched.limit, fetched.chainHead)
        } catch ReplicationError.serverChanged(_, let reason) {
          try await diverge(reason)
        }
        // A page the server could not serve in time was asked again smaller: the next one grows
        // back by half again as much, up to the page size.
        limit = min(pageSize, asked + max(1, asked / 2))
        guard let last = page.last else {
          if serverHead > cursor.position {
            throw ReplicationError.protocolViolation(
              server: transport.server,
              reason:
                "it answered an empty page after position \(cursor.position) while its head is \(serverHead)")
          }
          break
        }
        let next = PullCursor(position: last.position, eventID: last.id)
        if page.count == asked || last.position < serverHead {
          prefetched = Task { [limit] in
            try await self.fetch(
              after: next, limit: limit, head: serverHead, anchored: anchored, withSubjects: withSubjects,
              onRetry: onRetry)
          }
        }
        let outcome = try await storePage(
          page, serverHead: chainHead, after: cursor, acked: acked, conversion: conversion, summary: &summary)
        if let reason = outcome { try await diverge(reason) }
        ReplicationDeadline.current?.progressed()
        cursor = next
        progress?(
          ReplicationProgress(
            phase: "pull", completed: Int(cursor.position - start),
            total: Int(max(serverHead, cursor.position) - start)))
        if page.count < asked && cursor.position >= serverHead { break }
      }
      summary.cursor = cursor.position
      // The keys after the events: the server stored a key before the events that hold its
      // subject's values were pushed, or with them, so that the bookings of this round open.
      if withSubjects && !shouldStop() {
        summary.keysStored = try await pullKeys(onRetry: onRetry, shouldStop: shouldStop)
      }
      return summary
    }
  }

  /// A pulled page, the number of rows it was asked for, and the server's chain value at its
  /// last row that came with one.
  struct PulledPage: Sendable {
    var rows: [PulledRow]
    var limit: Int
    var chainHead: ServerChainHead?
  }

  /// How many times a one-row page may time out before its row is passed.
  static let singleRowTimeouts = 3

  /// One page of at most `limit` rows after `cursor`, retried, from a server whose head was
  /// `head` when the pull began.
  ///
  /// A page the server gives up on for taking too long (``ReplicationTransportError/isTimeout``:
  /// rows whose text costs far more than they take stored, on a server before schema version 4,
  /// which renders a page's whole range) is asked again with half the rows, down to one. A
  /// single row that times out ``singleRowTimeouts`` times can never be served: it comes back as
  /// ``PulledRow/malformed(position:id:reason:)``, which the pull records and passes, instead of
  /// asking for it for ever (only below `head`: past it there is no row to pass). Each smaller
  /// request, and each try of the one row, is progress for the deadline (at most log₂ of the
  /// page size of them, then the tries), so that a one-shot pull gets down to the row before its
  /// budget runs out.
  private func fetch(
    after cursor: PullCursor, limit: Int, head: UInt64, anchored: Bool, withSubjects: Bool,
    onRetry: (@Sendable (String, Duration) -> Void)?
  ) async throws -> PulledPage {
    var limit = max(1, limit)
    var timeouts = 0
    var chainHead: ServerChainHead?
    let rows = try await retrying(onRetry: onRetry) { () async throws -> [PulledRow] in
      do {
        guard anchored else {
          return try await transport.pull(
            after: cursor, limit: limit, maxBytes: options.pullPageBytes, wait: .zero)
        }
        let fields =
          withSubjects
          ? try await transport.pullWithSubjects(after: cursor, limit: limit, maxBytes: options.pullPageBytes)
          : try await transport.pullChained(after: cursor, limit: limit, maxBytes: options.pullPageBytes)
        let rows = try fields.map { try ReplicationWire.row($0, server: transport.server) }
        chainHead =
          zip(rows, fields).reversed().lazy.compactMap { row, fields in
            fields.chain.flatMap(ChainValue.init(hex:)).map {
              ServerChainHead(position: row.position, value: $0)
            }
          }.first
        return rows
      } catch let error as any ReplicationTransportError
        where error.isTimeout && (limit > 1 || cursor.position < head)
      {
        ReplicationDeadline.current?.progressed()
        if limit > 1 {
          limit = max(1, limit / 2)
          throw error
        }
        timeouts += 1
        guard timeouts >= Self.singleRowTimeouts else { throw error }
        return [
          .malformed(
            position: cursor.position + 1, id: nil,
            reason:
              "the server could not serve this row in time, asked for alone \(timeouts) times (the last: "
              + "\(error.description)); its event ID is not known")
        ]
      }
    }
    var previous = cursor.position
    for row in rows {
      guard row.position == previous + 1 else {
        throw ReplicationError.protocolViolation(
          server: transport.server,
          reason: "a pull after \(cursor.position) answered position \(row.position) after \(previous)")
      }
      previous = row.position
    }
    return PulledPage(rows: rows, limit: limit, chainHead: chainHead)
  }

  /// Stores one page with the cursor after it.
  /// - Returns: why the server's log no longer matches this device's, when an event the server
  ///   acknowledged is not where it said; else `nil`.
  private func storePage(
    _ page: [PulledRow], serverHead: ServerChainHead?, after cursor: PullCursor,
    acked: [(key: [UInt8], value: [UInt8])], conversion: PayloadConversion,
    summary: inout PullSummary
  ) async throws -> String? {
    guard let last = page.last else { return nil }
    var ackedByPosition: [UInt64: [UInt8]] = [:]
    for entry in acked {
      guard let position = ReplicationState.number(inKey: entry.key, after: ReplicationState.ackedPrefix),
        position > cursor.position, position <= last.position
      else { continue }
      ackedByPosition[position] = entry.value
    }
    var events: [EventStore.IngestedEvent] = []
    var sources: [ServerEvent] = []
    var notes: [EventStore.StateChange] = []
    for row in page {
      if let expected = ackedByPosition[row.position], row.id.map(ReplicationState.uuidBytes) != expected {
        let id = ReplicationState.uuid(expected[...])?.lowercasedString ?? "?"
        return "it acknowledged event \(id) of this device at position \(row.position), but holds "
          + (row.id.map { "\($0.lowercasedString)" } ?? "a malformed row") + " there"
      }
      let unstorable: String
      switch row {
      case .malformed(_, _, let reason):
        unstorable = reason
      case .event(let event) where !isReplicated(event.stream):
        unstorable = "the stream '\(event.stream)' is not replicated by this app"
      case .event(let event):
        switch conversion.incoming(event) {
        case .event(let stored):
          events.append(
            EventStore.IngestedEvent(
              stream: event.stream, event: stored,
              provenance: RecordedEvent.Provenance(device: event.originDevice, sequence: event.originSequence)
            ))
          sources.append(event)
          continue
        case .unconvertible(let reason):
          unstorable = reason
        }
      }
      notes.append(
        .put(
          ReplicationState.key(ReplicationState.unstorablePrefix, row.position),
          ReplicationState.note(row.id, unstorable)))
      summary.unreadable += 1
    }
    let cursorValue = ReplicationState.encodeCursor(PullCursor(position: last.position, eventID: last.id))
    let ackedKeys = ackedByPosition.keys.map { ReplicationState.key(ReplicationState.ackedPrefix, $0) }
    let headValue = serverHead.map(ReplicationState.encodeServerHead)
    let outcomes = try await store.ingest(events) { [notes, sources] outcomes in
      var changes = notes + ackedKeys.map { .delete($0) }
      changes.append(.put(ReplicationState.cursorKey, cursorValue))
      if let headValue { changes.append(.put(ReplicationState.serverHeadKey, headValue)) }
      for (event, outcome) in zip(sources, outcomes) {
        switch outcome {
        case .stored(let sequence), .skipped(let sequence, _, _):
          changes.append(
            .put(
              ReplicationState.key(ReplicationState.pulledPrefix, sequence), ReplicationState.pulled(event)))
          changes += ReplicationState.located(sequence, at: event.position)
        case .refused(let reason):
          changes.append(
            .put(
              ReplicationState.key(ReplicationState.unstorablePrefix, event.position),
              ReplicationState.note(event.id, reason)))
        case .alreadyPresent(let sequence):
          // This device's own event (or one pulled before): its position is the server's.
          changes += ReplicationState.located(sequence, at: event.position)
        }
      }
      return changes
    }
    var conflicts: [EventStore.StateChange] = []
    for ((event, ingested), outcome) in zip(zip(sources, events), outcomes) {
      switch outcome {
      case .stored: summary.pulled += 1
      case .skipped:
        summary.pulled += 1
        summary.unreadable += 1
      case .refused: summary.unreadable += 1
      case .alreadyPresent(let sequence):
        summary.alreadyPresent += 1
        if let reason = try difference(between: ingested, and: sequence) {
          summary.conflicts += 1
          conflicts.append(
            .put(
              ReplicationState.key(ReplicationState.conflictPrefix, event.position),
              ReplicationState.note(event.id, reason)))
        }
      }
    }
    try await store.updateState(conflicts)
    return nil
  }

  /// How the local event at `sequence` differs from the pulled `event` with its ID, or `nil`
  /// when they are the same event.
  func difference(between event: EventStore.IngestedEvent, and sequence: UInt64) throws -> String? {
    guard let local = try store.event(at: sequence) else { return nil }
    var fields: [String] = []
    if local.stream != event.stream { fields.append("stream") }
    if local.type != event.event.type { fields.append("type") }
    if local.schemaVersion != event.event.schemaVersion { fields.append("schema version") }
    if local.payload != event.event.payload { fields.append("payload") }
    if local.metadata != event.event.metadata { fields.append("metadata") }
    if let recordedAt = event.event.recordedAt,
      local.recordedAt.microsecondsSince1970 != recordedAt.microsecondsSince1970
    {
      fields.append("recorded time")
    }
    guard !fields.isEmpty else { return nil }
    return "the server holds other content under the ID of local event \(sequence) (its "
      + fields.joined(separator: ", ") + " differ)"
  }

  // MARK: Status

  /// This device's replication, from the local log alone.
  public func status() throws -> ReplicationStatus { try local.status() }

  /// What the local log knows of its replication.
  public var local: LocalReplica { LocalReplica(store: store) }
}
