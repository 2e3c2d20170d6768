import EventLog
import Foundation
import HTTP
import Redaction

/// A user's session with a Supabase project's Auth server: an access token (a JWT the API
/// checks) and the refresh token that renews it. The response's DTO stays in this file.
///
/// ``refresh(projectURL:apiKey:refreshToken:timeout:)`` is Supabase Auth's refresh grant:
/// `POST {project}/auth/v1/token?grant_type=refresh_token` with the `apikey` header and
/// `{"refresh_token": "…"}`, answered with `{"access_token", "token_type", "expires_in",
/// "refresh_token", "user"}` (GoTrue's OpenAPI description, `AccessTokenResponseSchema`). A
/// refresh token can be used once: each refresh answers with the next one, which must be kept.
public struct SupabaseSession: Sendable, Equatable {
  /// The access token: a JWT the API checks, valid for ``expiresIn`` from the refresh.
  public var accessToken: String
  /// The refresh token that renews this session, once.
  public var refreshToken: String
  /// How long the access token is valid, as the server said.
  public var expiresIn: Duration

  /// A session.
  public init(accessToken: String, refreshToken: String, expiresIn: Duration) {
    self.accessToken = accessToken
    self.refreshToken = refreshToken
    self.expiresIn = expiresIn
  }

  /// Renews a session with its refresh token.
  /// - Parameters:
  ///   - projectURL: the project's base URL (`https://<ref>.supabase.co`; `http://` on a
  ///     loopback host).
  ///   - apiKey: the project's API key, sent as `apikey`.
  ///   - refreshToken: the session's refresh token.
  ///   - timeout: the longest the request may take.
  /// - Returns: the renewed session, with the next refresh token.
  /// - Throws: ``SupabaseError/signInAgain(server:reason:)`` when the server refuses the refresh
  ///   token (used already, revoked, or the user signed out: only a new sign-in helps),
  ///   ``SupabaseError/unreachable(server:reason:)`` when it cannot be asked, or
  ///   ``SupabaseError/server(server:function:status:code:message:kind:)`` for another answer;
  ///   no error holds either token or the key.
  public static func refresh(
    projectURL: URL, apiKey: String, refreshToken: String, timeout: Duration = .seconds(30)
  ) async throws -> SupabaseSession {
    let project = try ProjectURL(projectURL)
    let server = project.shown
    func redacted(_ text: String) -> String {
      SecretRedaction.redacting(
        text, secrets: [apiKey, refreshToken].filter { $0.count >= 4 }, marker: "[redacted]")
    }
    var body: [UInt8] = Array("{\"refresh_token\":".utf8)
    JSONWriter.appendQuoted(refreshToken, to: &body)
    body.append(UInt8(ascii: "}"))
    let request = HTTPRequest(
      url: project.refreshGrant, method: .post,
      headers: [
        HTTPHeader("apikey", apiKey), HTTPHeader("Content-Type", "application/json"),
        HTTPHeader("Accept", "application/json"),
      ],
      body: Data(body), timeout: timeout, maximumBodyBytes: 1 << 20, usesEnvironmentProxy: !project.isLoopback
    )
    let response: HTTPResponse
    do {
      response = try await HTTPClient.send(request)
    } catch {
      switch error {
      case .cancelled: throw CancellationError()
      default:
        throw SupabaseError.unreachable(
          server: server, reason: "renewing the session: \(redacted(error.description))")
      }
    }
    guard (200..<300).contains(response.status) else {
      let message = redacted(
        PostgRESTBody.error(response.body).text ?? SupabaseTransport.summary(of: response))
      switch response.status {
      case 400, 401, 403:
        throw SupabaseError.signInAgain(server: server, reason: "the refresh token was refused: \(message)")
      case 408, 429, 500...599:
        throw SupabaseError.server(
          server: server, function: "auth/v1/token", status: response.status, code: nil, message: message,
          kind: .transient)
      default:
        throw SupabaseError.server(
          server: server, function: "auth/v1/token", status: response.status, code: nil, message: message,
          kind: .fatal)
      }
    }
    guard let answer = try? JSONNode.parse(response.body), let access = answer["access_token"]?.string,
      !access.isEmpty, let next = answer["refresh_token"]?.string, !next.isEmpty
    else {
      throw SupabaseError.server(
        server: server, function: "auth/v1/token", status: response.status, code: nil,
        message: "the answer is not a session (no access_token and refresh_token)", kind: .fatal)
    }
    let seconds = answer["expires_in"]?.integerText.flatMap { Int64($0) } ?? 3600
    return SupabaseSession(accessToken: access, refreshToken: next, expiresIn: .seconds(seconds))
  }
}

extension ProjectURL {
  /// `{base}/auth/v1/token?grant_type=refresh_token`.
  var refreshGrant: URL {
    var components = URLComponents(
      url: base.appendingPathComponent("auth/v1/token", isDirectory: false), resolvingAgainstBaseURL: false)
    components?.queryItems = [URLQueryItem(name: "grant_type", value: "refresh_token")]
    return components?.url ?? base
  }
}
