import Postgres
import Synchronization

/// A connection made on first use, and again after ``close()``.
final class LazyConnection: Sendable {
  private let configuration: PostgresConfiguration
  private let state = Mutex<(connection: PostgresConnection?, listening: Bool)>((nil, false))

  init(_ configuration: PostgresConfiguration) { self.configuration = configuration }

  func connection(within limit: Duration? = nil) throws -> PostgresConnection {
    try state.withLock { state in
      if let connection = state.connection { return connection }
      var configuration = self.configuration
      if let limit {
        let seconds = Int(limit.components.seconds) + (limit.components.attoseconds > 0 ? 1 : 0)
        configuration.connectTimeoutSeconds = max(2, min(configuration.connectTimeoutSeconds, seconds))
      }
      let connection = try PostgresConnection(configuration)
      state = (connection, false)
      return connection
    }
  }

  /// Whether the listener has issued its `LISTEN` (the connection repeats it after reconnecting).
  var isListening: Bool {
    get { state.withLock { $0.listening } }
    set { state.withLock { $0.listening = newValue } }
  }

  func close() {
    state.withLock { state in
      state.connection?.close()
      state = (nil, false)
    }
  }
}
