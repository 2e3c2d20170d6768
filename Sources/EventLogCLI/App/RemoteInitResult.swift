/// What `remote init` did on a server.
public struct RemoteInitResult: Sendable {
  /// The server, as messages name it.
  public var server: String
  /// The schema version before.
  public var from: Int
  /// The schema version after.
  public var to: Int
  /// Whether the API side for Supabase was set up (owners are `auth.uid()`).
  public var api: Bool
  /// What the database's owner should know.
  public var warnings: [String]
  /// The stream-name prefixes the server accepts after this `remote init` (it adds the app's
  /// own to those already there), sorted; empty: every stream.
  public var replicatedStreams: [String]

  /// Creates a result.
  public init(
    server: String, from: Int, to: Int, api: Bool, warnings: [String], replicatedStreams: [String]
  ) {
    self.server = server
    self.from = from
    self.to = to
    self.api = api
    self.warnings = warnings
    self.replicatedStreams = replicatedStreams
  }
}
