import Dispatch
import Foundation
import Postgres
import Synchronization

/// A few connections logged in as the authenticator, lent to one request at a time, as PostgREST's
/// pool (`db-pool`, `db-pool-acquisition-timeout`: a request that waits longer for a connection is
/// answered `504` `PGRST003`).
///
/// Connections are made when first needed. A connection lost while idle (the server restarted, or
/// an administrator terminated it) is noticed by the request's first statement, which is then run
/// once more on a new connection: nothing of the request has run yet, so that is safe; PostgREST's
/// pool likewise drops a broken connection and connects again.
final class ConnectionPool: Sendable {
  private let configuration: PostgresConfiguration
  private let acquisitionTimeout: Duration
  private let idle = Mutex<[PostgresConnection]>([])
  private let permits: DispatchSemaphore
  /// Cleared by ``close()``: a connection coming back then is closed, not kept.
  private let isOpen = Atomic<Bool>(true)

  init(configuration: PostgresConfiguration, size: Int, acquisitionTimeout: Duration) {
    precondition(size > 0, "a pool needs at least one connection")
    self.configuration = configuration
    self.acquisitionTimeout = acquisitionTimeout
    permits = DispatchSemaphore(value: size)
  }

  /// Runs `body` with a connection of the pool's own for its duration.
  /// - Throws: ``PostgRESTError`` `PGRST003` (504) when no connection comes free in time,
  ///   `PGRST000` (503) when a new one cannot be made, or what `body` throws.
  func withConnection<R>(_ body: (PostgresConnection) throws(PostgRESTError) -> R) throws(PostgRESTError) -> R
  {
    let (seconds, attoseconds) = acquisitionTimeout.components
    let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    guard permits.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else {
      throw PostgRESTError(
        status: 504, code: "PGRST003", message: "Timed out acquiring connection from connection pool.")
    }
    defer { permits.signal() }
    let connection: PostgresConnection
    if let reused = idle.withLock({ $0.popLast() }) {
      connection = reused
    } else {
      do {
        connection = try PostgresConnection(configuration)
      } catch {
        throw PostgRESTError(
          status: 503, code: "PGRST000", message: "Database connection error.", details: error.message)
      }
    }
    defer {
      if isOpen.load(ordering: .sequentiallyConsistent) {
        idle.withLock { $0.append(connection) }
      } else {
        connection.close()
      }
    }
    return try body(connection)
  }

  /// Closes every connection: the idle ones now, those lent out when they come back. The test
  /// server allows a few dozen connections for all the suites that run at once, so a stopped
  /// stand-in holds none.
  func close() {
    isOpen.store(false, ordering: .sequentiallyConsistent)
    let connections = idle.withLock { idle in
      defer { idle.removeAll() }
      return idle
    }
    for connection in connections { connection.close() }
  }

  /// Keeps connections again after ``close()`` (they are made when needed).
  func reopen() { isOpen.store(true, ordering: .sequentiallyConsistent) }
}
