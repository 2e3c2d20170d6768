import EventLog
import Foundation

/// How a ``Replicator`` batches, pages and retries.
public struct ReplicationOptions: Sendable {
  /// Events per push (one server transaction each).
  public var pushBatchSize = 500
  /// Events per pulled page (one local write transaction each).
  public var pullPageSize = 1_000
  /// How long a one-shot push or pull retries a transient failure before it gives up
  /// (``ReplicationError/gaveUp(after:lastError:)``); `nil` retries until stopped.
  public var retryFor: Duration? = .seconds(30)
  /// The first wait before a retry; it doubles up to ``maximumBackoff``.
  public var initialBackoff: Duration = .milliseconds(100)
  /// The longest wait between retries.
  public var maximumBackoff: Duration = .seconds(5)
  /// In live mode, how often to pull without a notification (the poll fallback).
  public var pollInterval: Duration = .seconds(5)

  /// The defaults.
  public init() {}
}

/// What a push did.
public struct PushSummary: Sendable, Hashable {
  /// Events the server stored.
  public var pushed = 0
  /// Events the server held already (same ID): acknowledged.
  public var alreadyStored = 0
  /// Events the server refused for good (recorded: ``ReplicationStatus/rejected``).
  public var rejected = 0
  /// Events still waiting (when the push was stopped early).
  public var pending = 0
  /// The last local sequence the server acknowledged.
  public var pushedThrough: UInt64 = 0

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
  /// The last server position pulled.
  public var cursor: UInt64 = 0

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
///   in local order, in batches of one server transaction each. Stored and already stored both
///   acknowledge; the server's transaction also sets this device's pushed mark. A transient
///   failure retries the same batch with backoff; a batch the server refuses is pushed event by
///   event, and an event refused alone is recorded (``ReplicationStatus/rejected``) and passed,
///   so it never blocks the events after it.
/// - **Pull.** Pages of the owner's server events after the cursor, each stored with
///   ``EventStore/ingest(_:expectingHead:allOrNothing:updatingState:)`` in one local transaction that also moves the
///   cursor: a crash leaves the old state or the new. An event the log holds already is not
///   stored again; one the domain cannot read is stored and skipped by the projections.
/// - **Live** (``watch(shouldStop:report:)``): pushes what commits locally, pulls what the server
///   announces (or, without notifications, every ``ReplicationOptions/pollInterval``), and
///   retries through outages until stopped.
///
/// It knows nothing of the domain: which streams replicate is the store's schema's answer
/// (``EventLog/AppSchema/replicatedStreams``), so the store and the replicator cannot disagree.
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
  /// ``EventLog/AppSchema/replicatedStreams``).
  public init(
    store: EventStore, transport: any ReplicationTransport, options: ReplicationOptions = ReplicationOptions()
  ) {
    self.store = store
    self.transport = transport
    let streams = store.appSchema.replicatedStreams
    self.isReplicated = { streams.contains($0) }
    self.options = options
  }

  private var device: UUID {
    get throws {
      guard let device = store.deviceID else { throw ReplicationError.noDevice(path: store.path) }
      return device
    }
  }

  // MARK: Retrying

  /// Runs `body` until it succeeds, retrying transient failures with backoff for up to
  /// `budget` (forever when `nil`).
  func retrying<T>(
    _ budget: Duration?, onRetry: (@Sendable (String, Duration) -> Void)?, _ body: () async throws -> T
  ) async throws -> T {
    let start = ContinuousClock.now
    var delay = options.initialBackoff
    while true {
      do {
        return try await body()
      } catch let error as any ReplicationTransportError where error.failureKind == .transient {
        if let budget, ContinuousClock.now - start + delay > budget {
          throw ReplicationError.gaveUp(after: budget, lastError: error.description)
        }
        onRetry?(error.description, delay)
        try await Task.sleep(for: delay)
        delay = min(delay * 2, options.maximumBackoff)
      }
    }
  }

  /// Checks that the server can be reached and has a schema this build speaks, retrying a
  /// transient failure for ``ReplicationOptions/retryFor``.
  /// - Throws: ``ReplicationError`` (a missing, older or newer schema; gave up) or a fatal
  ///   transport error (a wrong password).
  public func checkServer(onRetry: (@Sendable (String, Duration) -> Void)? = nil) async throws {
    try await retrying(options.retryFor, onRetry: onRetry) { try await transport.checkSchema() }
  }

  // MARK: Push

  /// Sends the outbox.
  /// - Parameters:
  ///   - progress: called after each batch.
  ///   - onRetry: called before each retry of a transient failure, with the error and the wait.
  ///   - shouldStop: asked between batches; the batch in flight finishes.
  /// - Throws: a fatal transport error, ``ReplicationError/gaveUp(after:lastError:)``, a local
  ///   storage error. Nothing is marked pushed that the server did not acknowledge.
  /// - Returns: how many events the server stored, already held or refused, how many still wait,
  ///   and the last sequence it acknowledged.
  public func push(
    progress: (@Sendable (ReplicationProgress) -> Void)? = nil,
    onRetry: (@Sendable (String, Duration) -> Void)? = nil,
    shouldStop: @Sendable () -> Bool = { false }
  ) async throws -> PushSummary {
    let device = try self.device
    var mark = ReplicationState.decode(try store.stateValue(forKey: ReplicationState.pushedKey))
    let head = try store.head()
    // After a crash between the server's commit and the local mark, the server knows better.
    // (A server mark past the local head means this log was restored from an older copy: its
    // new events reuse those sequence numbers, so only the local mark can be trusted.)
    let serverMark = try await retrying(options.retryFor, onRetry: onRetry) {
      try await transport.pushedMark(device: device)
    }
    if serverMark > mark && serverMark <= head {
      mark = serverMark
      try await store.updateState([.put(ReplicationState.pushedKey, ReplicationState.encode(mark))])
    }
    var summary = PushSummary()
    let total = try outbox(after: mark).count
    var done = 0
    while !shouldStop() {
      let (batch, through) = try collect(after: mark, limit: max(1, options.pushBatchSize))
      if batch.isEmpty {
        if through > mark {
          mark = through
          try await store.updateState([.put(ReplicationState.pushedKey, ReplicationState.encode(mark))])
        }
        break
      }
      var changes: [StateChange] = []
      for (event, outcome) in try await send(batch, device: device, through: through, onRetry: onRetry) {
        switch outcome {
        case .success(.stored): summary.pushed += 1
        case .success(.alreadyStored): summary.alreadyStored += 1
        case .failure(let reason):
          summary.rejected += 1
          changes.append(
            .put(
              ReplicationState.key(ReplicationState.rejectedPrefix, event.localSequence),
              ReplicationState.note(event.id, reason.text)))
        }
      }
      mark = through
      changes.append(.put(ReplicationState.pushedKey, ReplicationState.encode(mark)))
      try await store.updateState(changes)
      done += batch.count
      progress?(ReplicationProgress(phase: "push", completed: done, total: max(total, done)))
    }
    summary.pushedThrough = mark
    summary.pending = try outbox(after: mark).count
    return summary
  }

  /// Pushes `batch` in one server transaction; when the server refuses its events, pushes them
  /// one by one, so that only those it refuses alone are rejected.
  /// - Returns: each event with what the server did, or the reason it refused it.
  private func send(
    _ batch: [OutgoingEvent], device: UUID, through: UInt64, onRetry: (@Sendable (String, Duration) -> Void)?
  ) async throws -> [(OutgoingEvent, Result<PushOutcome, RejectionReason>)] {
    do {
      let outcomes = try await retrying(options.retryFor, onRetry: onRetry) {
        try await transport.push(batch, device: device, through: through)
      }
      return zip(batch, outcomes.map { .success($0) }).map { ($0, $1) }
    } catch let error as any ReplicationTransportError where error.failureKind == .rejected {
      guard batch.count > 1 else { return [(batch[0], .failure(RejectionReason(error.description)))] }
      var results: [(OutgoingEvent, Result<PushOutcome, RejectionReason>)] = []
      for event in batch {
        results += try await send([event], device: device, through: event.localSequence, onRetry: onRetry)
      }
      return results
    }
  }

  /// Why the server refused an event.
  private struct RejectionReason: Error {
    var text: String
    init(_ text: String) { self.text = text }
  }

  /// The outbox events after `mark`, up to `limit`, and the last local sequence looked at.
  private func collect(after mark: UInt64, limit: Int) throws -> ([OutgoingEvent], UInt64) {
    var batch: [OutgoingEvent] = []
    var through = mark
    while batch.count < limit {
      // No more than the batch still needs: the events read past it would be read (and decoded)
      // again by the next batch (reading 2,048 for each batch of 500 decoded every event four
      // times).
      let chunk = min(2_048, limit - batch.count)
      let events = try store.events(from: through + 1, limit: chunk)
      guard let last = events.last else { break }
      let pulled = try pulledSequences(from: through + 1, through: last.sequence)
      for event in events {
        if isReplicated(event.stream) && !pulled.contains(event.sequence) {
          batch.append(OutgoingEvent(event))
        }
        through = event.sequence
        if batch.count == limit { break }
      }
      if events.count < chunk && batch.count < limit { break }
    }
    return (batch, through)
  }

  private func outbox(after mark: UInt64) throws -> [UInt64] { try local.outbox(after: mark) }

  private func pulledSequences(from first: UInt64, through last: UInt64) throws -> Set<UInt64> {
    try local.pulledSequences(from: first, through: last)
  }

  // MARK: Pull

  /// Brings the owner's server events this log lacks.
  /// - Parameters: as ``push(progress:onRetry:shouldStop:)``; `shouldStop` is asked between
  ///   pages.
  public func pull(
    progress: (@Sendable (ReplicationProgress) -> Void)? = nil,
    onRetry: (@Sendable (String, Duration) -> Void)? = nil,
    shouldStop: @Sendable () -> Bool = { false }
  ) async throws -> PullSummary {
    var cursor = ReplicationState.decode(try store.stateValue(forKey: ReplicationState.cursorKey))
    let start = cursor
    let serverHead = try await retrying(options.retryFor, onRetry: onRetry) { try await transport.head() }
    guard serverHead >= cursor else {
      throw ReplicationError.serverBehind(server: transport.server, head: serverHead, cursor: cursor)
    }
    var summary = PullSummary()
    let pageSize = max(1, options.pullPageSize)
    // The next page is fetched while this one is stored: the server's and the transport's work
    // hides behind the local durable commit. Positions are gap-free, so the next page starts
    // after this page's last position whatever the local commit does; a page fetched but never
    // stored (an error, a stop) changes nothing.
    var prefetched: Task<[ServerEvent], any Error>?
    defer { prefetched?.cancel() }
    while !shouldStop() {
      let page: [ServerEvent]
      if let next = prefetched {
        prefetched = nil
        page = try await next.value
      } else {
        let after = cursor
        page = try await retrying(options.retryFor, onRetry: onRetry) {
          try await transport.pull(after: after, limit: pageSize)
        }
      }
      guard let last = page.last else { break }
      if page.count == pageSize {
        let after = last.position
        prefetched = Task {
          try await self.retrying(self.options.retryFor, onRetry: onRetry) {
            try await self.transport.pull(after: after, limit: pageSize)
          }
        }
      }
      let events = page.map { event in
        IngestedEvent(
          stream: event.stream,
          event: NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt))
      }
      let outcomes = try await store.ingest(events) { outcomes in
        var changes: [StateChange] = [
          .put(ReplicationState.cursorKey, ReplicationState.encode(last.position))
        ]
        for (event, outcome) in zip(page, outcomes) {
          switch outcome {
          case .stored(let sequence), .skipped(let sequence, _, _):
            changes.append(
              .put(
                ReplicationState.key(ReplicationState.pulledPrefix, sequence), ReplicationState.pulled(event))
            )
          case .refused(let reason):
            changes.append(
              .put(
                ReplicationState.key(ReplicationState.unstorablePrefix, event.position),
                ReplicationState.note(event.id, reason)))
          case .alreadyPresent:
            break
          }
        }
        return changes
      }
      for outcome in outcomes {
        switch outcome {
        case .stored: summary.pulled += 1
        case .skipped:
          summary.pulled += 1
          summary.unreadable += 1
        case .refused: summary.unreadable += 1
        case .alreadyPresent: summary.alreadyPresent += 1
        }
      }
      cursor = last.position
      progress?(
        ReplicationProgress(
          phase: "pull", completed: Int(cursor - start), total: Int(max(serverHead, cursor) - start)))
      if page.count < pageSize { break }
    }
    summary.cursor = cursor
    return summary
  }

  // MARK: Status

  /// This device's replication, from the local log alone.
  public func status() throws -> ReplicationStatus { try local.status() }

  /// What the local log knows of its replication.
  public var local: LocalReplica { LocalReplica(store: store) }
}
