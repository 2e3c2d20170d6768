import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The single writer's queue: jobs wait here while a commit is in progress, and the appends that
/// waited are then committed together (group commit).
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

  /// Commits run here, one at a time. A write transaction begins and ends inside one job on one
  /// thread, so it never crosses an `await`.
  let queue = DispatchQueue(label: "EventLog.writer", qos: .userInitiated)
  private let state = Mutex<(jobs: [Job], draining: Bool)>(([], false))

  /// Adds a job.
  /// - Returns: `true` when no drain is running and the caller must start one.
  func push(_ job: Job) -> Bool {
    state.withLock { state in
      state.jobs.append(job)
      if state.draining { return false }
      state.draining = true
      return true
    }
  }

  /// Waits up to `limit` until at least `count` jobs wait (or any job that is not an append).
  ///
  /// After a group commit resumes n callers, those that append again arrive within microseconds;
  /// waiting for them lets the next commit carry both cohorts instead of alternating between two
  /// half-size groups (8 durable appenders: ~3.3× one appender's rate without it).
  /// The number of waiting jobs.
  var pendingCount: Int { state.withLock { $0.jobs.count } }

  func waitForArrivals(_ count: Int, limit: Duration) {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while clock.now < deadline {
      if state.withLock({ $0.jobs.count >= count }) { return }
      usleep(10)
    }
  }

  /// Takes every waiting job; `nil` (and the drain ends) when there is none.
  func take() -> [Job]? {
    state.withLock { state in
      if state.jobs.isEmpty {
        state.draining = false
        return nil
      }
      defer { state.jobs.removeAll(keepingCapacity: true) }
      return state.jobs
    }
  }
}
