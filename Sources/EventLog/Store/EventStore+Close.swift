import Dispatch

extension EventStore {
  /// Closes the store: lets the work in flight finish, ends the subscriptions, and closes the
  /// environment, so that the same path can be opened again in this process.
  ///
  /// In order: new appends (and ingests, state changes, rebuilds) are refused; those that began
  /// before, queued ones included, are committed and their callers answered; every subscription
  /// ends (its iteration returns `nil`), and `close()` waits for those in the middle of a step;
  /// then the environment is closed once the reads running on other threads have ended. From then
  /// on every call that reads or writes the store throws ``EventStoreError/closed``.
  ///
  /// Closing again does nothing more (it returns once the first close has finished its work).
  /// Do not call it from inside a ``read(_:)`` closure or a projection: it would wait for that
  /// read or that commit to end. A store dropped without `close()` closes its environment when
  /// its last reference goes.
  public func close() async {
    await writer.close()
    await notifier.close()
    // `Environment.close()` waits for the transactions of other threads (a pthread lock): wait
    // for it off the cooperative pool.
    let environment = self.environment
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        environment.close()
        continuation.resume()
      }
    }
  }
}
