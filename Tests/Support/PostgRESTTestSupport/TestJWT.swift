import Foundation

/// HS256 JSON Web Tokens (RFC 7519, signed as RFC 7515 with HMAC-SHA-256) for tests: the access
/// tokens Supabase Auth hands a signed-in user, the anon key, and crafted ones (forged, expired,
/// `alg: none`) that the PostgREST stand-in must refuse.
public enum TestJWT {
  /// A token of `payload` (a JSON object's text, used as it is) under the header `header`, signed
  /// with HMAC-SHA-256 under `secret` whatever the header says (so a test can make a token whose
  /// header lies).
  public static func sign(
    payload: String, secret: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#
  ) -> String {
    let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
    return signingInput + "."
      + Base64URL.encode(SHA256.hmac(key: Array(secret.utf8), message: Array(signingInput.utf8)))
  }

  /// An unsecured token (`{"alg":"none"}`, RFC 7519 §6) of `payload`, with an empty signature.
  public static func unsigned(payload: String) -> String {
    Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
      + "."
  }

  /// An access token as Supabase Auth issues one to a signed-in user: `sub`, `role`
  /// (`authenticated`), `aud` (`authenticated`), `exp`, `iat`, `iss`, `aal`, `session_id`,
  /// `is_anonymous`, signed with the project's JWT secret.
  /// - Parameters:
  ///   - subject: the user's ID, `auth.uid()` in the database.
  ///   - role: the database role PostgREST switches to.
  ///   - expiresAt: `exp`, in whole seconds since 1970.
  ///   - issuedAt: `iat`, in whole seconds since 1970 (now by default).
  ///   - secret: the project's JWT secret.
  ///   - extraClaims: more claims (strings), for example `email`.
  /// - Returns: the token, `header.payload.signature` in base64url.
  public static func accessToken(
    subject: UUID, role: String = "authenticated", expiresAt: Date, issuedAt: Date = Date(), secret: String,
    extraClaims: [String: String] = [:]
  ) -> String {
    var claims: [String: Any] = [
      "sub": subject.uuidString.lowercased(), "role": role, "aud": "authenticated",
      "exp": Int64(expiresAt.timeIntervalSince1970.rounded(.down)),
      "iat": Int64(issuedAt.timeIntervalSince1970.rounded(.down)),
      "iss": "http://127.0.0.1/auth/v1", "aal": "aal1", "session_id": UUID().uuidString.lowercased(),
      "is_anonymous": false,
    ]
    for (name, value) in extraClaims { claims[name] = value }
    return sign(payload: json(claims), secret: secret)
  }

  /// An anon key as Supabase's legacy API keys are: a token of `{"iss":"supabase","role":"anon",…}`
  /// signed with the project's JWT secret, valid for ten years from `issuedAt`.
  public static func anonKey(secret: String, issuedAt: Date = Date()) -> String {
    let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
    return sign(
      payload: json([
        "iss": "supabase", "ref": "standin", "role": "anon", "iat": iat, "exp": iat + 315_360_000,
      ]),
      secret: secret)
  }

  /// The JSON text of `object`, keys sorted; `{}` if it cannot be encoded (never for the values
  /// built here).
  static func json(_ object: [String: Any]) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return "{}"
    }
    return String(decoding: data, as: UTF8.self)
  }
}
