import Foundation
import Synchronization

/// Runs work on dedicated OS threads (not the cooperative pool, which a blocking LMDB or SQLite
/// writer would starve), one per item, and resumes when all are done.
enum Threads {
  static func run<Item: Sendable>(
    _ items: [Item], _ body: @escaping @Sendable (Item) throws -> Void
  ) async throws {
    let state = Mutex<(remaining: Int, error: (any Error)?)>((items.count, nil))
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      guard !items.isEmpty else { return continuation.resume() }
      for item in items {
        let thread = Thread {
          var failure: (any Error)?
          do { try body(item) } catch { failure = error }
          let done = state.withLock { state -> (Bool, (any Error)?) in
            state.remaining -= 1
            if state.error == nil { state.error = failure }
            return (state.remaining == 0, state.error)
          }
          if done.0 {
            if let error = done.1 { continuation.resume(throwing: error) } else { continuation.resume() }
          }
        }
        thread.stackSize = 1 << 20
        thread.start()
      }
    }
  }
}
