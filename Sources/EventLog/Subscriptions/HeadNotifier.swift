import Synchronization

/// Wakes subscriptions when the writer commits.
final class HeadNotifier: Sendable {
  private struct Waiter {
    let after: UInt64
    let continuation: CheckedContinuation<Void, Never>
  }

  private let state = Mutex<(head: UInt64, waiters: [Int: Waiter], nextID: Int)>((0, [:], 0))

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
          if state.head > sequence || Task.isCancelled { return true }
          state.waiters[id] = Waiter(after: sequence, continuation: continuation)
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      self.wake(id)
    }
  }
}
