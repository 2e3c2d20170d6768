import Foundation
import Replication
import ReplicationPostgres
import ReplicationSupabase

/// How the command line reaches a replication server: a transport (`push`, `pull`, `replicate`,
/// `remote status URL`), the set-up of the server's schema (`remote init`) and its list of
/// replicated stream prefixes (`remote streams`).
///
/// The transport is the composition root's choice: the shipped `eventlog` passes
/// ``postgresAndSupabase``.
public struct ReplicationRemote: Sendable {
  /// A transport to the server of the settings; nothing need connect until its first call.
  public var connect: @Sendable (_ remote: RemoteSettings) throws -> any ReplicationTransport
  /// Creates or upgrades the server schema, adding the app's replicated stream-name prefixes to
  /// those the server accepts (it removes none; `nil`: add none).
  public var initialize:
    @Sendable (_ remote: RemoteSettings, _ replicatedStreamPrefixes: [String]?) async throws ->
      RemoteInitResult
  /// The stream-name prefixes the server accepts, sorted (empty: every stream); `nil` when this
  /// remote cannot tell (`remote streams` then fails saying so).
  public var replicatedStreams: (@Sendable (_ remote: RemoteSettings) async throws -> [String])?
  /// Removes a prefix from those the server accepts and returns the prefixes left, sorted; it
  /// fails, naming the prefix, when the server does not hold it or it is the last one. `nil` when
  /// this remote cannot.
  public var removeReplicatedStream:
    (@Sendable (_ remote: RemoteSettings, _ prefix: String) async throws -> [String])?
  /// The server schema version this transport's `remote init` writes (`remote status URL` says
  /// whether the server's is older).
  public var latestServerSchema: Int

  /// A remote of the given transport.
  /// - Parameters:
  ///   - connect: a transport to the server of the settings.
  ///   - initialize: creates or upgrades the server schema.
  ///   - latestServerSchema: the server schema version `initialize` writes.
  ///   - replicatedStreams: lists the prefixes the server accepts.
  ///   - removeReplicatedStream: removes one of them.
  public init(
    connect: @escaping @Sendable (_ remote: RemoteSettings) throws -> any ReplicationTransport,
    initialize:
      @escaping @Sendable (_ remote: RemoteSettings, _ replicatedStreamPrefixes: [String]?) async throws ->
      RemoteInitResult,
    latestServerSchema: Int,
    replicatedStreams: (@Sendable (_ remote: RemoteSettings) async throws -> [String])? = nil,
    removeReplicatedStream: (
      @Sendable (_ remote: RemoteSettings, _ prefix: String) async throws -> [String]
    )? =
      nil
  ) {
    self.connect = connect
    self.initialize = initialize
    self.latestServerSchema = latestServerSchema
    self.replicatedStreams = replicatedStreams
    self.removeReplicatedStream = removeReplicatedStream
  }

  /// PostgreSQL through libpq (`ReplicationPostgres`): `postgres://` and `postgresql://` URLs.
  public static let postgres = ReplicationRemote(
    connect: { remote in try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted) },
    initialize: { remote, prefixes in
      let transport = try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted)
      defer { transport.close() }
      let report = try await transport.initializeSchema(replicatedStreamPrefixes: prefixes)
      return RemoteInitResult(
        server: transport.server, from: report.from, to: report.to, api: report.api,
        warnings: report.warnings,
        replicatedStreams: report.replicatedStreams)
    },
    latestServerSchema: ServerSchema.latestVersion,
    replicatedStreams: { remote in
      let transport = try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted)
      defer { transport.close() }
      return try await transport.replicatedStreams()
    },
    removeReplicatedStream: { remote, prefix in
      let transport = try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted)
      defer { transport.close() }
      return try await transport.removeReplicatedStream(prefix)
    })

  /// ``postgres`` for `postgres://` and `postgresql://` URLs, and a Supabase project's API
  /// (`ReplicationSupabase`) for its `https://` URL (`http://` on a loopback host), as the
  /// signed-in user of ``RemoteSettings/accessToken`` with ``RemoteSettings/apiKey``. `remote
  /// init` and `remote streams` take a libpq URL only: the schema is created and its list kept
  /// over the database's connection.
  public static let postgresAndSupabase = ReplicationRemote(
    connect: { remote in
      guard SupabaseTransport.handles(remote.url) else { return try postgres.connect(remote) }
      guard let url = URL(string: remote.url) else {
        throw SupabaseError.invalidURL(reason: "it is not a valid URL")
      }
      return try SupabaseTransport(
        projectURL: url, apiKey: remote.apiKey ?? "", accessToken: remote.accessToken)
    },
    initialize: postgres.initialize, latestServerSchema: postgres.latestServerSchema,
    replicatedStreams: postgres.replicatedStreams, removeReplicatedStream: postgres.removeReplicatedStream)
}
