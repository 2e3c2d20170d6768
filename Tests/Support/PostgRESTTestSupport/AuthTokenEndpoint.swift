import Foundation
import Synchronization

/// The refresh grant of Supabase Auth (GoTrue) as the stand-in serves it, beside the API:
/// `POST /auth/v1/token?grant_type=refresh_token` with the project's `apikey` and
/// `{"refresh_token": "…"}`. As GoTrue's OpenAPI description (`supabase/auth`, `openapi.yaml`:
/// `/token`, `AccessTokenResponseSchema`) says, it answers 200 with `{"access_token",
/// "token_type": "bearer", "expires_in", "expires_at", "refresh_token", "user"}`, and a refresh
/// token can be used once: the answer carries the next one. A refresh token it never issued, or
/// one used already, is answered 400 with `{"error": "invalid_grant", "error_description":
/// "Invalid Refresh Token: …"}` (GoTrue's words); another grant type 400 with
/// `{"error": "unsupported_grant_type", …}`.
final class AuthTokenEndpoint: Sendable {
  private let secret: String
  /// Each refresh token not used yet, and whose session it renews: the user and how long its
  /// access tokens last.
  private let sessions = Mutex<[String: (user: UUID, lifetime: Duration)]>([:])
  /// How many refreshes were answered.
  let refreshes = Atomic<Int>(0)

  init(secret: String) { self.secret = secret }

  /// Signs `user` in: an access token valid for `lifetime`, and a refresh token that renews it.
  func signIn(_ user: UUID, lifetime: Duration) -> (accessToken: String, refreshToken: String) {
    let refreshToken = Self.opaqueToken()
    sessions.withLock { $0[refreshToken] = (user, lifetime) }
    return (accessToken(for: user, lifetime: lifetime), refreshToken)
  }

  private func accessToken(for user: UUID, lifetime: Duration) -> String {
    TestJWT.accessToken(
      subject: user, expiresAt: Date().addingTimeInterval(Double(lifetime.components.seconds)), secret: secret
    )
  }

  /// The answer to `POST /auth/v1/token` with `query` and `body`: its status and JSON body.
  func answer(query: [String: String], body: [UInt8]) -> (status: Int, body: String) {
    guard query["grant_type"] == "refresh_token" else {
      return (
        400,
        TestJWT.json([
          "error": "unsupported_grant_type",
          "error_description": "the stand-in serves grant_type=refresh_token only",
        ])
      )
    }
    let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    guard let given = object?["refresh_token"] as? String, !given.isEmpty else {
      return (
        400, TestJWT.json(["error": "invalid_request", "error_description": "refresh_token is required"])
      )
    }
    // Used once: the entry goes as it is answered, and the next refresh token takes its place.
    guard let session = sessions.withLock({ $0.removeValue(forKey: given) }) else {
      return (
        400,
        TestJWT.json([
          "error": "invalid_grant", "error_description": "Invalid Refresh Token: Refresh Token Not Found",
        ])
      )
    }
    let next = Self.opaqueToken()
    sessions.withLock { $0[next] = session }
    refreshes.add(1, ordering: .relaxed)
    let seconds = session.lifetime.components.seconds
    let answer: [String: Any] = [
      "access_token": accessToken(for: session.user, lifetime: session.lifetime),
      "token_type": "bearer",
      "expires_in": seconds,
      "expires_at": Int64(Date().timeIntervalSince1970) + seconds,
      "refresh_token": next,
      "user": ["id": session.user.uuidString.lowercased(), "aud": "authenticated", "role": "authenticated"],
    ]
    return (200, TestJWT.json(answer))
  }

  /// An opaque token as GoTrue's refresh tokens are: 12 random bytes in base64url.
  private static func opaqueToken() -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return Base64URL.encode(bytes)
  }
}
