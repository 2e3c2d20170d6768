extension EventStore {
  /// What `read` finds in the store now, then again after each commit that changes it: a view's
  /// rows kept current, as GRDB's `ValueObservation` and SQLiteData's `@FetchAll` keep them.
  ///
  /// ```swift
  /// func observeAll() -> AsyncThrowingStream<[User], any Error> {
  ///   store.observe { try Users.projection.reader(in: $0).rows(in: Users.byName, as: User.init) }
  /// }
  /// ```
  ///
  /// The first value is read at once. After that `read` runs again, in a snapshot of its own,
  /// once the head moves: at once for a commit of this process, within
  /// ``Options/subscriptionPollInterval`` for another process's (a pull, a sync in the
  /// background). Commits that land while it reads are read together, and a value equal to the
  /// last one yielded is not yielded again, so a commit that changes other rows yields nothing.
  /// Each value is what the projections held at one commit: with the convergent rule of a table
  /// with updates, the winner of two concurrent edits, not the last event applied.
  ///
  /// Use ``changes(_:)`` instead to react to what happened (an event to animate or notify), not
  /// to show the current state.
  /// - Parameter read: reads the value from a snapshot of the store (its rows, a count, a range).
  /// - Returns: the values, each different from the one before; the stream finishes with the
  ///   error `read` or the store throws, and ends when its consumer stops iterating or
  ///   ``close()`` is called.
  public func observe<Value: Equatable & Sendable>(
    _ read: @escaping @Sendable (StoreSnapshot) throws -> Value
  ) -> AsyncThrowingStream<Value, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task {
        var last: Value?
        var seenHead: UInt64?
        do {
          while true {
            // Counted while it reads, so that `close()` waits for the read to end.
            guard notifier.beginNext() else { break }
            let step = Result { () throws -> UInt64 in
              defer { notifier.endNext() }
              let head = try self.head()
              if head == seenHead { return head }
              let (readHead, value) = try self.read { snapshot in (try snapshot.head(), try read(snapshot)) }
              if value != last {
                last = value
                continuation.yield(value)
              }
              return readHead
            }
            seenHead = try step.get()
            if Task.isCancelled || notifier.isClosed { break }
            await notifier.wait(after: seenHead ?? 0, timeout: options.subscriptionPollInterval)
            if Task.isCancelled { break }
          }
          continuation.finish()
        } catch EventStoreError.closed {
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
