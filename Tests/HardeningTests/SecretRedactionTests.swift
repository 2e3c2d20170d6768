import Foundation
import Redaction
import TestKit
import Testing

/// Issue 28: an error was cleaned of a whole secret only, so a server that quoted a token in
/// halves, or only its payload or signature, put those in the error. The rule
/// (``SecretRedaction``): the secret whole, each JWT segment on its own, and every run of 8 of its
/// characters (half a secret shorter than 16, at least 4).
@Suite("Secrets are cut out of errors whole and in parts")
struct SecretRedactionTests {
  /// A JWT-shaped token: header, payload, signature.
  static let header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
  static let payload =
    "eyJzdWIiOiI3ZDFmOGMxMi0zYjQ1LTRjNmQtOGU5Zi0wYTFiMmMzZDRlNWYiLCJyb2xlIjoiYXV0aGVudGljYXRlZCJ9"
  static let signature = "Qm9iIHNob3VsZCBuZXZlciBzZWUgdGhpcyBzaWduYXR1cmUh"
  static let token = "\(header).\(payload).\(signature)"

  @Test(
    "a token quoted whole, in halves, by segment or in pieces leaves no run of 8 of its characters",
    arguments: [
      "invalid token \(token)",
      "token starts \(token.prefix(token.count / 2)) and ends \(token.dropFirst(token.count / 2))",
      "claims \(payload) were refused",
      "bad signature \(signature)",
      "header \(header), then \(signature.prefix(20))…",
      "pieces: \(String(token.dropFirst(40).prefix(9))) / \(String(token.dropFirst(120).prefix(12)))",
      "reversed halves \(token.dropFirst(token.count / 2))\(token.prefix(token.count / 2))",
    ])
  func jwtParts(message: String) {
    let cut = SecretRedaction.redacting(message, secrets: [Self.token], marker: "[redacted]")
    #expect(cut.contains("[redacted]"), "\(cut)")
    #expect(SecretCheck.longestSharedRun(cut, Self.token) < 8, "\(cut)")
    for segment in [Self.header, Self.payload, Self.signature] { #expect(!cut.contains(segment)) }
  }

  @Test("what is no part of a secret stays as it was, and a marker replaces a run once")
  func restOfTheText() {
    let message = "naïve café ✓: the token \(Self.token) was refused; sign in again"
    let cut = SecretRedaction.redacting(message, secrets: [Self.token, "unused-secret-value"], marker: "***")
    #expect(cut == "naïve café ✓: the token *** was refused; sign in again")
    #expect(SecretRedaction.redacting("nothing here", secrets: [Self.token], marker: "***") == "nothing here")
    #expect(SecretRedaction.redacting("", secrets: [Self.token], marker: "***") == "")
    #expect(SecretRedaction.redacting("keep", secrets: [""], marker: "***") == "keep")
  }

  @Test("short secrets: half of one shorter than 16, at least 4 characters, and the whole of any")
  func shortSecrets() {
    #expect(SecretRedaction.fragmentLength(of: Self.token) == 8)
    #expect(SecretRedaction.fragmentLength(of: "s3cr3t-pw-12") == 6)
    #expect(SecretRedaction.fragmentLength(of: "hunter2pw") == 4)
    #expect(SecretRedaction.fragmentLength(of: "abc") == 3)
    let password = "s3cr3t-pw-12"
    let cut = SecretRedaction.redacting(
      "password authentication failed (tried s3cr3t and -pw-12; whole: s3cr3t-pw-12)", secrets: [password],
      marker: "***")
    #expect(cut == "password authentication failed (tried *** and ***; whole: ***)", "\(cut)")
    // Five characters of a 12-character password are less than half: they stay.
    #expect(SecretRedaction.redacting("s3cr3", secrets: [password], marker: "***") == "s3cr3")
    #expect(SecretRedaction.redacting("xyz and xyz", secrets: ["xyz"], marker: "***") == "*** and ***")
  }

  @Test("an API key and a token at once: each is cut, whichever order they come in")
  func twoSecrets() {
    let key = "sb_publishable_" + String(repeating: "k3y", count: 10)
    let message = "\(key.suffix(20)) then \(Self.signature.prefix(12)) then \(key.prefix(18))"
    let cut = SecretRedaction.redacting(message, secrets: [key, Self.token], marker: "[redacted]")
    #expect(cut == "[redacted] then [redacted] then [redacted]", "\(cut)")
  }
}
