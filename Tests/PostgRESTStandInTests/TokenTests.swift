import Foundation
import PostgRESTTestSupport
import TestKit
import Testing

@Suite("SHA-256, HMAC-SHA-256, base64url")
struct DigestTests {
  @Test(
    "FIPS 180-4's SHA-256 examples",
    arguments: [
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
      (
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
      ),
    ])
  func fips(message: String, digest: String) {
    #expect(hex(SHA256.hash(Array(message.utf8))) == digest)
  }

  @Test("a million 'a's (FIPS 180-4's long example)")
  func million() {
    let digest = SHA256.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000))
    #expect(hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test(
    "every padding boundary agrees with sha256sum",
    arguments: [1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1_000])
  func boundaries(length: Int) throws {
    let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 13) }
    let run = try runChild("/usr/bin/sha256sum", [], input: Data(message))
    try #require(run.status == 0, "\(run)")
    #expect(run.stdout.hasPrefix(hex(SHA256.hash(message)) + " "), "\(run.stdout)")
  }

  @Test(
    "RFC 4231's HMAC-SHA-256 test cases 1-4, 6 and 7",
    arguments: [
      (
        [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
      ),
      (
        Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      ),
      (
        [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
      ),
      (
        Array(1...25), [UInt8](repeating: 0xcd, count: 50),
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
      ),
      (
        [UInt8](repeating: 0xaa, count: 131),
        Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
      ),
      (
        [UInt8](repeating: 0xaa, count: 131),
        Array(
          "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
            .utf8),
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
      ),
    ])
  func rfc4231(key: [UInt8], message: [UInt8], mac: String) {
    #expect(hex(SHA256.hmac(key: key, message: message)) == mac)
  }

  @Test("base64url: no padding, the URL alphabet, and refusals")
  func base64url() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
      let text = Base64URL.encode(bytes)
      #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
      #expect(Base64URL.decode(text) == bytes)
    }
    #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
    for invalid in ["+/8", "-_8=", "a", "ab$d", "ab cd"] {
      #expect(Base64URL.decode(invalid) == nil, "\(invalid)")
    }
  }
}

@Suite("HS256 tokens: signing and PostgREST's verification")
struct JWTTests {
  static let secret = "a-secret-of-at-least-thirty-two-characters"

  @Test("jwt.io's HS256 example token is reproduced exactly")
  func knownToken() throws {
    let token = TestJWT.sign(
      payload: #"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#, secret: "your-256-bit-secret")
    #expect(
      token
        == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    let verified = try JWTVerifier(secret: "your-256-bit-secret").verify(token)
    #expect(verified.subject == "1234567890")
    #expect(verified.role == nil, "no role claim: the anonymous role applies")
  }

  @Test("an access token verifies, with its subject, role and expiry")
  func accepted() throws {
    let user = UUID()
    let expiry = Date().addingTimeInterval(3600)
    let token = TestJWT.accessToken(subject: user, expiresAt: expiry, secret: Self.secret)
    let verified = try JWTVerifier(secret: Self.secret).verify(token)
    #expect(verified.subject == user.uuidString.lowercased())
    #expect(verified.role == "authenticated")
    #expect(verified.expiresAt == Int64(expiry.timeIntervalSince1970.rounded(.down)))
    let claims = try #require(
      try JSONSerialization.jsonObject(with: Data(verified.claimsJSON.utf8)) as? [String: Any])
    #expect(claims["aud"] as? String == "authenticated")
  }

  @Test("expiry: refused past the 30 s skew, accepted within it")
  func expiry() throws {
    let now = Date()
    let verifier = JWTVerifier(secret: Self.secret)
    let late = TestJWT.accessToken(
      subject: UUID(), expiresAt: now.addingTimeInterval(-31), secret: Self.secret)
    #expect(throws: JWTVerifier.Refusal(code: "PGRST303", message: "JWT expired")) {
      try verifier.verify(late, now: now)
    }
    let justLate = TestJWT.accessToken(
      subject: UUID(), expiresAt: now.addingTimeInterval(-29), secret: Self.secret)
    #expect(try verifier.verify(justLate, now: now).role == "authenticated")
    let strict = JWTVerifier(secret: Self.secret, clockSkewSeconds: 0)
    #expect(throws: JWTVerifier.Refusal(code: "PGRST303", message: "JWT expired")) {
      try strict.verify(justLate, now: now)
    }
    let future = TestJWT.accessToken(
      subject: UUID(), expiresAt: now.addingTimeInterval(3600), issuedAt: now.addingTimeInterval(120),
      secret: Self.secret)
    #expect(throws: JWTVerifier.Refusal(code: "PGRST303", message: "JWT issued at future")) {
      try verifier.verify(future, now: now)
    }
    let notNumber = TestJWT.sign(payload: #"{"role":"authenticated","exp":"tomorrow"}"#, secret: Self.secret)
    #expect(throws: JWTVerifier.Refusal(code: "PGRST303", message: "The JWT 'exp' claim must be a number")) {
      try verifier.verify(notNumber, now: now)
    }
  }

  @Test("forged, tampered, unsigned and malformed tokens are refused")
  func refused() throws {
    let verifier = JWTVerifier(secret: Self.secret)
    let payload = #"{"sub":"u","role":"authenticated","exp":4102444800}"#
    let crypto = JWTVerifier.Refusal(code: "PGRST301", message: "JWT cryptographic operation failed")
    // Signed with another secret.
    #expect(throws: crypto) { try verifier.verify(TestJWT.sign(payload: payload, secret: Self.secret + "x")) }
    // A valid token whose payload was swapped for another role's.
    let parts = TestJWT.sign(payload: payload, secret: Self.secret).split(separator: ".")
    let swapped = Base64URL.encode(Array(#"{"sub":"u","role":"service_role","exp":4102444800}"#.utf8))
    #expect(throws: crypto) { try verifier.verify("\(parts[0]).\(swapped).\(parts[2])") }
    // alg none, with and without a signature part, and a header that names another algorithm.
    let none = #expect(throws: JWTVerifier.Refusal.self) {
      try verifier.verify(TestJWT.unsigned(payload: payload))
    }
    #expect(none?.code == "PGRST301")
    #expect(none?.message == "Wrong or unsupported encoding algorithm")
    let unsignedWithSignature = TestJWT.unsigned(payload: payload) + String(parts[2])
    #expect(throws: JWTVerifier.Refusal.self) { try verifier.verify(unsignedWithSignature) }
    let hs512 = TestJWT.sign(payload: payload, secret: Self.secret, header: #"{"alg":"HS512","typ":"JWT"}"#)
    #expect(
      (try? verifier.verify(hs512)) == nil,
      "a header naming another algorithm is refused even with an HS256 signature")
    #expect(throws: JWTVerifier.Refusal(code: "PGRST301", message: "Expected 3 parts in JWT; got 2")) {
      try verifier.verify("\(parts[0]).\(parts[1])")
    }
    #expect(
      throws: JWTVerifier.Refusal(code: "PGRST301", message: "Empty JWT is sent in Authorization header")
    ) {
      try verifier.verify("")
    }
    #expect(throws: crypto) { try verifier.verify("!!.\(parts[1]).\(parts[2])") }
    // Claims that are not an object, correctly signed.
    #expect(throws: JWTVerifier.Refusal(code: "PGRST303", message: "Parsing claims failed")) {
      try verifier.verify(TestJWT.sign(payload: "[1,2]", secret: Self.secret))
    }
  }
}

func hex(_ bytes: [UInt8]) -> String {
  bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
}
