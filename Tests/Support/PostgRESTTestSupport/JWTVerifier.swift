import Foundation

/// PostgREST's verification of a bearer token, for the stand-in: an HS256 signature under the JWT
/// secret, then the time claims with a clock skew, then the role.
///
/// Follows PostgREST's `src/PostgREST/Auth/Jwt.hs` (`parseToken`, `checkForErrors`, `parseClaims`)
/// and the JWT section of its docs (docs.postgrest.org, "Authentication": "We allow a 30-second
/// clock skew when validating the above claims"): three dot-separated parts or `PGRST301`
/// "Expected 3 parts in JWT; got n"; an algorithm other than the configured HS256 `PGRST301`
/// "Wrong or unsupported encoding algorithm" (an `alg: none` token included); a signature that does
/// not verify `PGRST301` "JWT cryptographic operation failed"; claims that are not a JSON object
/// `PGRST303` "Parsing claims failed"; `exp` not a number, or more than the skew in the past,
/// `PGRST303` ("The JWT 'exp' claim must be a number", "JWT expired"); `nbf` and `iat` more than the
/// skew in the future `PGRST303` ("JWT not yet valid", "JWT issued at future"). The audience is not
/// checked (PostgREST's `jwt-aud` unset, as on Supabase). A non-integral time claim counts as 0, as
/// PostgREST's `Sci.toBoundedInteger` reads it.
public struct JWTVerifier: Sendable {
  /// The HS256 secret.
  public let secret: String
  /// How far the time claims may be off, in seconds (PostgREST: 30).
  public var clockSkewSeconds: Int64

  /// A token's claims after it verified.
  public struct Verified: Sendable {
    /// The payload, a JSON object's text exactly as the token carried it.
    public var claimsJSON: String
    /// The `role` claim as PostgREST reads it (a string as it is, another JSON value as its JSON
    /// text), or `nil` without one.
    public var role: String?
    /// The `sub` claim, when it is a string.
    public var subject: String?
    /// The `exp` claim, when it is a number.
    public var expiresAt: Int64?
  }

  /// Why a token was refused: PostgREST's error code and message.
  public struct Refusal: Error, Sendable, Equatable {
    /// `PGRST301` (the token cannot be decoded or verified) or `PGRST303` (its claims are refused).
    public var code: String
    /// PostgREST's message, for example `JWT expired`.
    public var message: String
    /// PostgREST's details, when it gives any.
    public var details: String?

    /// Creates a refusal.
    public init(code: String, message: String, details: String? = nil) {
      self.code = code
      self.message = message
      self.details = details
    }
  }

  /// Creates a verifier for tokens signed with `secret`.
  public init(secret: String, clockSkewSeconds: Int64 = 30) {
    self.secret = secret
    self.clockSkewSeconds = clockSkewSeconds
  }

  /// Verifies `token` at `now`.
  /// - Throws: ``Refusal`` with PostgREST's code and message.
  public func verify(_ token: String, now: Date = Date()) throws(Refusal) -> Verified {
    guard !token.isEmpty else {
      throw Refusal(code: "PGRST301", message: "Empty JWT is sent in Authorization header")
    }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else {
      throw Refusal(code: "PGRST301", message: "Expected 3 parts in JWT; got \(parts.count)")
    }
    let cryptoFailed = Refusal(code: "PGRST301", message: "JWT cryptographic operation failed")
    guard let headerBytes = Base64URL.decode(parts[0]),
      let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any]
    else { throw cryptoFailed }
    let algorithm = header["alg"] as? String ?? "(none given)"
    guard algorithm == "HS256" else {
      throw Refusal(
        code: "PGRST301", message: "Wrong or unsupported encoding algorithm",
        details: "the stand-in verifies HS256 tokens only; this one says \(algorithm)")
    }
    let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
    guard let signature = Base64URL.decode(parts[2]),
      SHA256.constantTimeEqual(signature, SHA256.hmac(key: Array(secret.utf8), message: signingInput)),
      let payload = Base64URL.decode(parts[1])
    else { throw cryptoFailed }
    guard let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
      throw Refusal(code: "PGRST303", message: "Parsing claims failed")
    }
    let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
    // In PostgREST's order: exp, nbf, iat; the first failure is the one reported.
    let checks: [(String, String, (Int64) -> Bool)] = [
      ("exp", "JWT expired", { seconds - clockSkewSeconds > $0 }),
      ("nbf", "JWT not yet valid", { seconds + clockSkewSeconds < $0 }),
      ("iat", "JWT issued at future", { seconds + clockSkewSeconds < $0 }),
    ]
    for (name, failure, fails) in checks {
      guard let value = claims[name], !(value is NSNull) else { continue }
      guard let number = Self.number(value) else {
        throw Refusal(code: "PGRST303", message: "The JWT '\(name)' claim must be a number")
      }
      if fails(number) { throw Refusal(code: "PGRST303", message: failure) }
    }
    return Verified(
      claimsJSON: String(decoding: payload, as: UTF8.self), role: claims["role"].map(Self.roleText),
      subject: claims["sub"] as? String, expiresAt: claims["exp"].flatMap(Self.number))
  }

  /// A JSON number as PostgREST's `sciToInt` reads it (an integer in range, else 0); `nil` for
  /// anything that is not a number (a Bool is not one, though Foundation bridges it).
  private static func number(_ value: Any) -> Int64? {
    // JSONSerialization's booleans are NSNumbers of type "c" (char).
    guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
    let double = number.doubleValue
    guard double.rounded(.towardZero) == double, let integer = Int64(exactly: double) else { return 0 }
    return integer
  }

  /// The role claim's text: a string as it is, another value as its JSON text (PostgREST's
  /// `unquoted`).
  private static func roleText(_ value: Any) -> String {
    if let text = value as? String { return text }
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) else {
      return "\(value)"
    }
    return String(decoding: data, as: UTF8.self)
  }
}
