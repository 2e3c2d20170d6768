import Dispatch
import Synchronization

/// The single writer: at most one commit runs at a time. Jobs wait here while a commit is in
/// progress, and the appends that waited are then committed together (group commit). A lone
/// append may instead claim the writer and commit on its caller's thread
/// (``claimForCaller()``).
final class Writer: Sendable {
  /// An append waiting for the writer.
  struct PendingAppend: Sendable {
    let appends: [StreamAppend]
    let continuation: CheckedContinuation<AppendResult, any Error>
  }

  enum Job: Sendable {
    case append(PendingAppend)
    /// Work that needs the write lock to itself (catch-up, applying a replay).
    case exclusive(@Sendable () -> Void)
  }

  /// Queued jobs run here, one at a time. A write transaction begins and ends inside one job (or
  /// one caller's synchronous commit) on one thread, so it never crosses an `await`.
  let queue = DispatchQueue(label: "EventLog.writer", qos: .userInitiated)
  private let state = Mutex(State())

  struct State {
    var jobs: [Job] = []
    /// A commit is running: a drain on the queue, or an append committing on its caller's thread.
    var busy = false
    /// Appends between ``enter()`` and ``leave()``: queued, committing, or about to decide.
    var inFlight = 0
    /// The writer sleeps until a job arrives (``waitForJob(until:)``).
    var writerWaiting = false
    /// ``close()`` was called: ``enter()`` refuses new work.
    var closed = false
    /// The callers of ``close()`` waiting for the work in flight to end.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []

    /// Nothing in flight, queued or committing.
    var isIdle: Bool { inFlight == 0 && !busy && jobs.isEmpty }

    /// The ``close()`` callers to resume, when the writer is closed and idle.
    mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
      guard closed, isIdle, !idleWaiters.isEmpty else { return [] }
      defer { idleWaiters = [] }
      return idleWaiters
    }

    /// Removes and returns the append jobs before the first job of another kind.
    mutating func takeLeadingAppends() -> [PendingAppend] {
      var appends: [PendingAppend] = []
      for job in jobs {
        guard case .append(let pending) = job else { break }
        appends.append(pending)
      }
      jobs.removeFirst(appends.count)
      return appends
    }
  }

  /// Signalled by the job that ends ``State/writerWaiting``.
  private let arrivals = DispatchSemaphore(value: 0)

  /// Adds a job.
  /// - Returns: `true` when no commit is running and the caller must start a drain.
  func push(_ job: Job) -> Bool {
    let (start, wake) = state.withLock { state -> (Bool, Bool) in
      state.jobs.append(job)
      let wake = state.writerWaiting
      state.writerWaiting = false
      if state.busy { return (false, wake) }
      state.busy = true
      return (true, wake)
    }
    if wake { arrivals.signal() }
    return start
  }

  /// Counts an append (or an exclusive job) in flight, until ``leave()``.
  /// - Throws: ``EventStoreError/closed`` after ``close()``.
  func enter() throws(EventStoreError) {
    try state.withLock { state throws(EventStoreError) in
      guard !state.closed else { throw .closed }
      state.inFlight += 1
    }
  }

  /// Ends what ``enter()`` began.
  func leave() {
    let waiters = state.withLock { state in
      state.inFlight -= 1
      return state.takeIdleWaiters()
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Refuses new work (``enter()`` throws from now on) and returns once the work in flight has
  /// ended: the appends and jobs that entered before, queued ones included, are committed first.
  /// Calling it again waits the same way.
  func close() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let idle = state.withLock { state in
        state.closed = true
        if state.isIdle { return true }
        state.idleWaiters.append(continuation)
        return false
      }
      if idle { continuation.resume() }
    }
  }

  /// Claims the writer for a commit on the caller's thread: only when this append is the only one
  /// in flight, no commit is running and no job waits. Concurrent appends go through the queue,
  /// where they are committed together.
  func claimForCaller() -> Bool {
    state.withLock { state in
      guard state.inFlight == 1, !state.busy, state.jobs.isEmpty else { return false }
      state.busy = true
      return true
    }
  }

  /// Ends a commit made on the caller's thread.
  /// - Returns: `true` when jobs queued meanwhile: the writer stays claimed and the caller must
  ///   start a drain for them.
  func releaseClaim() -> Bool {
    let (drain, waiters) = state.withLock { state in
      if state.jobs.isEmpty {
        state.busy = false
        return (false, state.takeIdleWaiters())
      }
      return (true, [])
    }
    for waiter in waiters { waiter.resume() }
    return drain
  }

  /// The number of waiting jobs.
  var pendingCount: Int { state.withLock { $0.jobs.count } }

  /// Waits until a job waits, or until `deadline`.
  ///
  /// After a group commit resumes n callers, those that append again arrive within microseconds;
  /// waiting for them lets the next commit carry both cohorts instead of alternating between two
  /// half-size groups (8 durable appenders: ~3.3× one appender's rate without it). The drain waits
  /// here for each arrival in turn; the job that arrives wakes the writer at once, without polling.
  func waitForJob(until deadline: DispatchTime) {
    let ready = state.withLock { state in
      if !state.jobs.isEmpty { return true }
      state.writerWaiting = true
      return false
    }
    if ready { return }
    guard arrivals.wait(timeout: deadline) == .timedOut else { return }
    let signalled = state.withLock { state in
      defer { state.writerWaiting = false }
      return !state.writerWaiting
    }
    // A job signalled between the timeout and the lock: take its signal, which is there.
    if signalled { arrivals.wait() }
  }

  /// What the writer does next.
  enum Work {
    /// The appends that waited before the first job of another kind: one commit.
    case appends([PendingAppend])
    /// A job that needs the write lock to itself.
    case exclusive(@Sendable () -> Void)
  }

  /// Takes the next work, in the order the jobs came; `nil` (and the drain ends) when no job waits.
  func takeNext() -> Work? {
    let (work, waiters) = state.withLock { state -> (Work?, [CheckedContinuation<Void, Never>]) in
      guard let first = state.jobs.first else {
        state.busy = false
        return (nil, state.takeIdleWaiters())
      }
      if case .exclusive(let body) = first {
        state.jobs.removeFirst()
        return (.exclusive(body), [])
      }
      return (.appends(state.takeLeadingAppends()), [])
    }
    for waiter in waiters { waiter.resume() }
    return work
  }

  /// Takes the appends that wait before any job of another kind, for a commit already running
  /// (the drain goes on when there is none).
  func takeAppends() -> [PendingAppend] {
    state.withLock { $0.takeLeadingAppends() }
  }
}
