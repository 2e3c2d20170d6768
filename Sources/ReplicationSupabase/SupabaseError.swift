import Foundation
import Replication

/// Why a call of ``SupabaseTransport`` failed, classified by PostgREST's `code` (the HTTP status
/// only where PostgREST gave none), and what that says about trying again
/// (``failureKind``).
///
/// No case holds the API key or an access token: the server's words are kept only after both are
/// cut out of them, and the server is named by its URL without user, password or query.
public enum SupabaseError: ReplicationTransportError, Sendable, Equatable, LocalizedError {
  /// The project URL cannot be used: not `https://` (or `http://` on a loopback host), no host,
  /// or a user or password in it.
  case invalidURL(reason: String)
  /// No user is signed in: the token provider gave no access token (or the API key instead of
  /// one), so nothing was sent.
  case notSignedIn(server: String)
  /// The server refused the user's session, also after a refresh: an expired, forged or revoked
  /// access token, or a request the `anon` role made.
  case signInAgain(server: String, reason: String)
  /// The token provider failed.
  case tokenUnavailable(reason: String, kind: TransportFailureKind)
  /// The request could not be sent as it was (an access token or key with a line break in it):
  /// nothing was sent.
  case invalidRequest(reason: String)
  /// The project's API has no `eventlog_api` functions: `eventlog remote init` was not run on its
  /// database, or the schema `eventlog_api` is not among the API's exposed schemas.
  case apiMissing(server: String, reason: String)
  /// The server could not be reached, or went away before it answered (the request may or may
  /// not have been acted on).
  case unreachable(server: String, reason: String)
  /// The server answered with an error: its HTTP status, PostgREST's `code` (a SQLSTATE or
  /// `PGRST…`, `nil` when the body had none), its message, and what the code says about trying
  /// again.
  case server(
    server: String, function: String, status: Int, code: String?, message: String, kind: TransportFailureKind)

  /// What the error says about trying again.
  public var failureKind: TransportFailureKind {
    switch self {
    case .invalidURL, .notSignedIn, .signInAgain, .apiMissing, .invalidRequest: .fatal
    case .tokenUnavailable(_, let kind): kind
    case .unreachable: .transient
    case .server(_, _, _, _, _, let kind): kind
    }
  }

  /// Whether the server refused the user's session, or no user is signed in: a renewed
  /// session (a new access token) may succeed.
  public var needsNewSession: Bool {
    switch self {
    case .signInAgain, .notSignedIn: true
    default: false
    }
  }

  /// Whether the server gave up on the request for taking too long: PostgreSQL's statement
  /// timeout (`57014`, Supabase's `authenticated` role allows 8 s), or a gateway's 504 without a
  /// PostgREST code (an exhausted pool, `PGRST003`, is not: the request never ran).
  public var isTimeout: Bool {
    guard case .server(_, _, let status, let code, _, _) = self else { return false }
    return code == "57014" || (code == nil && status == 504)
  }

  /// What failed and, where there is one, what to do about it.
  public var description: String {
    switch self {
    case .invalidURL(let reason):
      return "the Supabase project URL cannot be used: \(reason)"
    case .notSignedIn(let server):
      return
        "no user is signed in to \(server), so the request was not sent. Sign in and give the session's access token "
        + "(the command line reads it from EVENTLOG_ACCESS_TOKEN or --access-token-file FILE)"
    case .signInAgain(let server, let reason):
      return "\(server) refused the user's session (\(reason)): sign in again "
        + "(a new access token in EVENTLOG_ACCESS_TOKEN or --access-token-file)"
    case .tokenUnavailable(let reason, _):
      return "the access token could not be had: \(reason)"
    case .invalidRequest(let reason):
      return "the request could not be sent: \(reason)"
    case .apiMissing(let server, let reason):
      return
        "\(server) has no eventlog API (\(reason)): run 'eventlog remote init' on the project's database "
        + "(its postgres role's connection string) and add the schema 'eventlog_api' to the API's exposed schemas"
    case .unreachable(let server, let reason):
      return "\(server) could not be reached: \(reason)"
    case .server(let server, let function, let status, let code, let message, _):
      return
        "\(server) refused eventlog_api.\(function) (HTTP \(status)\(code.map { ", \($0)" } ?? "")): \(message)"
    }
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}
