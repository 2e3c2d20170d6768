import Dispatch
import Foundation
import LMDB

extension AppendResult {
  /// Where an appended event landed.
  public struct Position: Sendable, Hashable {
    /// The event's ID.
    public var id: UUID
    /// Its stream.
    public var stream: StreamID
    /// Its version within the stream.
    public var version: UInt64
    /// Its global sequence number.
    public var sequence: UInt64
  }
}

/// The outcome of an append.
public struct AppendResult: Sendable, Hashable {
  /// The positions of the events, in the order they were given.
  public var events: [Position]
  /// `true` when every event was stored already (by an earlier append with the same IDs) and
  /// nothing was written.
  public var alreadyStored: Bool

  /// The first event's sequence number.
  public var firstSequence: UInt64 { events.first?.sequence ?? 0 }
  /// The last event's sequence number.
  public var lastSequence: UInt64 { events.last?.sequence ?? 0 }
}

extension EventStoreError {
  /// Whether the error rejects one request before it wrote anything (the batch goes on).
  var isRejection: Bool {
    switch self {
    case .wrongExpectedVersion, .invalidStream, .emptyAppend, .duplicateEventInAppend, .partiallyStoredAppend,
      .invalidEvent:
      true
    default:
      false
    }
  }
}

extension EventStore {
  /// Appends events to one stream atomically.
  ///
  /// - Parameters:
  ///   - events: the events, in order.
  ///   - stream: the stream.
  ///   - expectedVersion: checked before anything is written.
  /// - Returns: where the events landed; if every event's ID is already stored, their existing
  ///   positions, and nothing is written.
  /// - Throws: ``EventStoreError/wrongExpectedVersion(stream:expected:actual:)`` and the other
  ///   rejections; nothing of a failed append is stored.
  /// - Complexity: O(k log n) for k events; the commit's flush dominates single appends.
  @discardableResult
  public func append(
    _ events: [NewEvent], to stream: StreamID, expectedVersion: ExpectedVersion = .any
  ) async throws -> AppendResult {
    try await append([StreamAppend(stream: stream, expectedVersion: expectedVersion, events: events)])
  }

  /// Appends to several streams atomically: all of it is stored, or none.
  ///
  /// Appends that wait while another commit is in progress are committed together in one
  /// transaction; each caller's events are contiguous, and one caller's rejection fails only
  /// that caller.
  ///
  /// An append that is the only one in flight and finds the writer idle commits on the caller's
  /// thread: that saves the two thread hand-overs of the queue (about a tenth of a durable single
  /// append here) and blocks the thread for the commit, as a synchronous file write would. The
  /// caller then yields its thread before returning, so that tasks kept waiting meanwhile (other
  /// appenders among them) run first; their appends find this one in flight and queue for one
  /// shared commit. (Without the yield, on a busy cooperative pool each appender ran all its
  /// appends alone, one commit each.)
  /// - Throws: as ``append(_:to:expectedVersion:)``.
  @discardableResult
  public func append(_ appends: [StreamAppend]) async throws -> AppendResult {
    guard !options.readOnly else { throw EventStoreError.readOnly(path: path) }
    try writer.enter()
    defer { writer.leave() }
    if writer.claimForCaller() {
      let result = commit([appends])[0]
      if writer.releaseClaim() { writer.queue.async { self.drain() } }
      // Still in flight: tasks that waited for this thread during the commit (other appenders
      // among them) run now, see this append in flight, and queue for a shared commit.
      await Task.yield()
      return try result.get()
    }
    return try await withCheckedThrowingContinuation { continuation in
      enqueue(.append(Writer.PendingAppend(appends: appends, continuation: continuation)))
    }
  }

  /// Runs `body` on the writer, alone, after the appends queued before it.
  func exclusive<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    guard !options.readOnly else { throw EventStoreError.readOnly(path: path) }
    try writer.enter()
    defer { writer.leave() }
    return try await withCheckedThrowingContinuation { continuation in
      enqueue(.exclusive({ continuation.resume(with: Result { try body() }) }))
    }
  }

  private func enqueue(_ job: Writer.Job) {
    if writer.push(job) {
      writer.queue.async { self.drain() }
    }
  }

  private func drain() {
    // Appends the next commit expects (0: it takes what waits), and until when it waits for them.
    var expected = 0
    var deadline = DispatchTime.now()
    while true {
      if expected > 1 { writer.waitForJob(until: deadline) }
      guard let work = writer.takeNext() else { return }
      switch work {
      case .exclusive(let body):
        body()
        expected = 0
      case .appends(let waiting):
        let (carried, queuedMeanwhile) = commit(waiting, collectingUpTo: expected, until: deadline)
        // The callers just resumed will likely append again: wait for them and for those that
        // queued during this commit, so that the next commit carries everyone.
        expected = carried > 1 ? carried + queuedMeanwhile : 0
        deadline = .now() + .microseconds(200)
      }
    }
  }

  /// Commits queued appends in one transaction and resumes their callers.
  ///
  /// While the transaction holds fewer than `expected` appends, it takes in those that arrive
  /// until `deadline` as they come, so that applying the first overlaps with the others' arrival
  /// (the callers of the previous commit, coming back).
  /// - Returns: how many appends the commit carried, and how many jobs queued during the commit
  ///   (counted before the callers resume, as those that append again queue too).
  private func commit(
    _ waiting: [Writer.PendingAppend], collectingUpTo expected: Int, until deadline: DispatchTime
  ) -> (carried: Int, queued: Int) {
    var group = waiting
    let results = commit(group.map(\.appends)) {
      guard group.count < expected else { return [] }
      writer.waitForJob(until: deadline)
      let arrived = writer.takeAppends()
      group += arrived
      return arrived.map(\.appends)
    }
    precondition(results.count == group.count, "a result for every append the commit took in")
    let queued = writer.pendingCount
    for (pending, result) in zip(group, results) {
      pending.continuation.resume(with: result)
    }
    return (group.count, queued)
  }

  /// Commits requests in one transaction, a result for each. If the transaction fails as a whole
  /// (a projection threw, the disk failed), each request is retried alone so that only the
  /// guilty one fails.
  /// - Parameters:
  ///   - requests: the appends, each one or more ``StreamAppend``s that succeed or fail together.
  ///   - more: called in the transaction after the requests are applied, until it returns none:
  ///     requests to add to the same transaction.
  /// - Returns: a result for each request, those of `more` after those of `requests`, in order.
  private func commit(
    _ requests: [[StreamAppend]], collecting more: () -> [[StreamAppend]] = { [] }
  ) -> [Result<AppendResult, any Error>] {
    var requests = requests
    do {
      let results = try environment.write { txn -> [Result<AppendResult, any Error>] in
        var batch = try WriteBatch(store: self, transaction: txn)
        var results: [Result<AppendResult, any Error>] = []
        results.reserveCapacity(requests.count)
        func apply(_ request: [StreamAppend]) throws {
          do {
            results.append(.success(try batch.append(request)))
          } catch let error as EventStoreError where error.isRejection {
            results.append(.failure(error))
          }
        }
        // A retried transaction (the map grew) applies again those collected in the first run.
        for request in requests { try apply(request) }
        while case let arrived = more(), !arrived.isEmpty {
          // Kept before they are applied: a run that stops halfway (the map is full) is retried.
          requests += arrived
          for request in arrived { try apply(request) }
        }
        try batch.finish()
        return results
      }
      if let head = results.compactMap({ try? $0.get().lastSequence }).max() {
        notifier.publish(head)
      }
      return results
    } catch {
      if requests.count > 1 { return requests.flatMap { commit([$0]) } }
      return [.failure(Self.wrap(error))]
    }
  }

  static func wrap(_ error: any Error) -> any Error {
    if let error = error as? LMDBError { return EventStoreError(storage: error) }
    return error
  }
}
