import Replication
import ReplicationPostgres

/// How the command line reaches a replication server: a transport for a URL (`push`, `pull`,
/// `replicate`) and the set-up of the server's schema (`remote init`).
///
/// The transport is the composition root's choice: the shipped `eventlog` passes ``postgres``.
public struct ReplicationRemote: Sendable {
  /// A transport to the server at a URL; nothing need connect until its first call.
  public var connect: @Sendable (_ url: String) throws -> any ReplicationTransport
  /// Creates or upgrades the server schema at a URL: the server's name (never with a password),
  /// the schema version before and after.
  public var initialize: @Sendable (_ url: String) async throws -> (server: String, from: Int, to: Int)

  /// A remote of the given transport.
  /// - Parameters:
  ///   - connect: a transport to the server at a URL.
  ///   - initialize: creates or upgrades the server schema at a URL.
  public init(
    connect: @escaping @Sendable (_ url: String) throws -> any ReplicationTransport,
    initialize: @escaping @Sendable (_ url: String) async throws -> (server: String, from: Int, to: Int)
  ) {
    self.connect = connect
    self.initialize = initialize
  }

  /// PostgreSQL through libpq (`ReplicationPostgres`): `postgres://` and `postgresql://` URLs.
  public static let postgres = ReplicationRemote(
    connect: { try PostgresTransport(url: $0) },
    initialize: { url in
      let transport = try PostgresTransport(url: url)
      defer { transport.close() }
      let (from, to) = try await transport.initializeSchema()
      return (transport.server, from, to)
    })
}
