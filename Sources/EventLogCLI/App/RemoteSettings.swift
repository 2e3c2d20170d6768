import Foundation

/// Where a replication command reaches its server, and how: the URL and what the command line
/// and the environment add to it.
public struct RemoteSettings: Sendable {
  /// The server URL: a `postgres://` URI, or a Supabase project's `https://` URL (`http://` on a
  /// loopback host).
  public var url: String
  /// Whether a server on another host may be reached without TLS (`--allow-unencrypted`).
  public var allowUnencrypted: Bool
  /// The process environment.
  public var environment: [String: String]
  /// For a project URL: the project's API key (`--api-key`, else `SUPABASE_ANON_KEY`); never
  /// printed, logged or stored.
  public var apiKey: String?
  /// For a project URL: the signed-in user's access token, asked before every request
  /// (`--access-token-file`'s first line, else `EVENTLOG_ACCESS_TOKEN`); `nil` when there is
  /// none. `refresh` is `true` after the server refused the last one. Never printed, logged or
  /// stored.
  public var accessToken: @Sendable (_ refresh: Bool) async throws -> String?

  /// Creates settings.
  public init(
    url: String, allowUnencrypted: Bool = false, environment: [String: String] = [:], apiKey: String? = nil,
    accessToken: @escaping @Sendable (_ refresh: Bool) async throws -> String? = { _ in nil }
  ) {
    self.url = url
    self.allowUnencrypted = allowUnencrypted
    self.environment = environment
    self.apiKey = apiKey
    self.accessToken = accessToken
  }
}
