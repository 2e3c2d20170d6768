import Synchronization

/// Wakes subscriptions when the writer commits, and ends them when the store closes.
final class HeadNotifier: Sendable {
  private struct Waiter {
    let after: UInt64
    let continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var head: UInt64 = 0
    var waiters: [Int: Waiter] = [:]
    var nextID = 0
    /// ``close()`` was called: waits return at once, and ``beginNext()`` refuses.
    var closed = false
    /// Subscriptions between ``beginNext()`` and ``endNext()``.
    var active = 0
    /// The callers of ``close()`` waiting for the active subscriptions to end.
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Mutex(State())

  /// Records a new head and wakes every waiter it passes.
  func publish(_ head: UInt64) {
    let woken = state.withLock { state -> [Waiter] in
      state.head = max(state.head, head)
      let ready = state.waiters.filter { $0.value.after < state.head }
      for id in ready.keys { state.waiters[id] = nil }
      return Array(ready.values)
    }
    for waiter in woken { waiter.continuation.resume() }
  }

  private func wake(_ id: Int) {
    let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
    waiter?.continuation.resume()
  }

  /// Returns when an event after `sequence` was committed by this process, the task is
  /// cancelled, or `timeout` passed (to notice other processes' appends).
  func wait(after sequence: UInt64, timeout: Duration) async {
    let id = state.withLock { state -> Int in
      state.nextID += 1
      return state.nextID
    }
    let timer = Task {
      try? await Task.sleep(for: timeout)
      self.wake(id)
    }
    defer { timer.cancel() }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let ready = state.withLock { state -> Bool in
          if state.head > sequence || state.closed || Task.isCancelled { return true }
          state.waiters[id] = Waiter(after: sequence, continuation: continuation)
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      self.wake(id)
    }
  }

  /// Whether ``close()`` was called.
  var isClosed: Bool { state.withLock { $0.closed } }

  /// Counts a subscription's step (its iterator's `next()`) as active until ``endNext()``.
  /// - Returns: `false` (and counts nothing) once the store is closed: the subscription ends.
  func beginNext() -> Bool {
    state.withLock { state in
      guard !state.closed else { return false }
      state.active += 1
      return true
    }
  }

  /// Ends what ``beginNext()`` began.
  func endNext() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.active -= 1
      guard state.active == 0 else { return [] }
      defer { state.closeWaiters = [] }
      return state.closeWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Ends every subscription: wakes those that wait, refuses new steps, and returns once the
  /// active ones have ended.
  func close() async {
    let woken = state.withLock { state -> [Waiter] in
      state.closed = true
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in woken { waiter.continuation.resume() }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let done = state.withLock { state in
        if state.active == 0 { return true }
        state.closeWaiters.append(continuation)
        return false
      }
      if done { continuation.resume() }
    }
  }
}
