/// The events of the log from a sequence number on: first those already stored, then each new
/// one as it is committed, every event exactly once and in order.
///
/// Iteration reads the log itself by sequence number, so there is no gap and no duplicate
/// between catching up and going live. Events appended by this process arrive as soon as they
/// commit; those of other processes within ``EventStore/Options/subscriptionPollInterval``.
/// Iteration ends (returns `nil`) when the task is cancelled or the store is closed
/// (``EventStore/close()``).
public struct EventSubscription: AsyncSequence, Sendable {
  /// A subscription yields the recorded events, in sequence order.
  public typealias Element = RecordedEvent

  let store: EventStore
  let start: UInt64

  /// An iterator that starts at the subscription's first sequence number (1 at the lowest).
  public func makeAsyncIterator() -> Iterator {
    Iterator(store: store, next: Swift.max(1, start))
  }

  /// Iterates a subscription.
  public struct Iterator: AsyncIteratorProtocol {
    let store: EventStore
    var next: UInt64
    var buffer: [RecordedEvent] = []
    var index = 0

    /// The next event, waiting for it if needed; `nil` once the task is cancelled or the store
    /// is closed.
    /// - Throws: ``EventStoreError`` when a record is damaged.
    public mutating func next() async throws -> RecordedEvent? {
      // Counted while it runs, so that the store's `close()` waits for it to end.
      guard store.notifier.beginNext() else { return nil }
      defer { store.notifier.endNext() }
      while true {
        if index < buffer.count {
          let event = buffer[index]
          index += 1
          next = event.sequence + 1
          return event
        }
        if Task.isCancelled || store.notifier.isClosed { return nil }
        buffer = try store.events(from: next, limit: 512)
        index = 0
        if buffer.isEmpty {
          await store.notifier.wait(after: next - 1, timeout: store.options.subscriptionPollInterval)
        }
      }
    }
  }
}

extension EventStore {
  /// Subscribes to the log from `sequence` (inclusive) on: stored events, then live ones.
  public func subscribe(from sequence: UInt64 = 1) -> EventSubscription {
    EventSubscription(store: self, start: sequence)
  }
}

extension EventStore {
  /// The changes `transform` finds in the events committed from now on, as a stream that ends
  /// when its consumer stops or the store closes (a repository's `changes()`).
  ///
  /// ```swift
  /// func changes() -> AsyncThrowingStream<UserChange, any Error> {
  ///   store.changes { try UserChange($0) }  // nil for the events of other entities
  /// }
  /// ```
  /// - Parameter transform: the change an event records, or `nil` to skip the event; an error
  ///   it throws ends the stream with that error.
  /// - Returns: the stream of changes, in commit order; it finishes with the error of a failed
  ///   read of the log (``EventStoreError/closed`` when the store is closed already), and ends
  ///   when its consumer stops iterating or ``close()`` is called.
  public func changes<Change: Sendable>(
    _ transform: @escaping @Sendable (RecordedEvent) throws -> Change?
  ) -> AsyncThrowingStream<Change, any Error> {
    let start: UInt64
    do {
      start = try head() + 1
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: error) }
    }
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          for try await event in self.subscribe(from: start) {
            if let change = try transform(event) { continuation.yield(change) }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
