import Synchronization

/// The long poll of ``SupabaseTransport/waitForNews(upTo:)``: one request in flight at a time,
/// which outlives the replicator's short waits (a quarter of a second each) so that the server
/// holds it for seconds, and whose answer the next wait collects.
///
/// It polls after the last position the replicator pulled (noted by every pull); when a pull
/// moves past the position a poll in flight waits after, that poll is stale (it would report the
/// events just pulled) and is replaced.
final class LongPoll: Sendable {
  /// The poll in flight or its answer, and the position to poll after.
  private struct State {
    /// The last position pulled, or `nil` before the first pull (the poll then starts at the
    /// owner's head).
    var pulled: UInt64?
    /// The poll in flight, the position it polls after, and its number.
    var task: Task<Void, Never>?
    var after: UInt64?
    var generation = 0
    /// The answer of the poll numbered `generation`, not yet collected.
    var answer: Result<Bool, any Error>?
  }

  private let state = Mutex(State())

  /// Notes that the replicator pulled through `position`.
  func pulled(through position: UInt64) {
    state.withLock { $0.pulled = max($0.pulled ?? 0, position) }
  }

  /// Collects the answer of the poll in flight, starting one with `body` when none is, waiting
  /// up to `timeout` for it.
  /// - Parameters:
  ///   - timeout: the longest to wait; the poll goes on past it.
  ///   - body: one long poll after a position (`nil`: the owner's head), answering whether there
  ///     is news.
  /// - Returns: the poll's answer, or `false` when it has not answered within `timeout`.
  /// - Throws: the poll's failure.
  func wait(
    upTo timeout: Duration, _ body: @escaping @Sendable (UInt64?) async throws -> Bool
  ) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    start(body)
    while true {
      let answer: Result<Bool, any Error>? = state.withLock { state in
        defer { if state.answer != nil { state.answer = nil } }
        return state.answer
      }
      if let answer { return try answer.get() }
      let left = deadline - ContinuousClock.now
      guard left > .zero else { return false }
      try await Task.sleep(for: min(left, .milliseconds(20)))
    }
  }

  /// Starts a poll unless one is in flight after the last position pulled, or has answered.
  private func start(_ body: @escaping @Sendable (UInt64?) async throws -> Bool) {
    state.withLock { state in
      if state.answer != nil { return }
      if state.task != nil {
        // Still current: it polls after the last position pulled.
        guard let after = state.after, let pulled = state.pulled, pulled > after else { return }
        state.task?.cancel()
      }
      state.generation += 1
      let generation = state.generation
      let after = state.pulled
      state.after = after
      state.task = Task { [weak self] in
        let answer: Result<Bool, any Error>
        do {
          answer = .success(try await body(after))
        } catch {
          answer = .failure(error)
        }
        self?.finish(generation, answer)
      }
    }
  }

  /// Keeps the answer of poll `generation`, unless a newer poll replaced it.
  private func finish(_ generation: Int, _ answer: Result<Bool, any Error>) {
    state.withLock { state in
      guard state.generation == generation else { return }
      state.task = nil
      state.after = nil
      if !Task.isCancelled { state.answer = answer }
    }
  }

  /// Cancels the poll in flight and forgets any answer.
  func cancel() {
    state.withLock { state in
      state.task?.cancel()
      state.task = nil
      state.after = nil
      state.answer = nil
      state.generation += 1
    }
  }
}
