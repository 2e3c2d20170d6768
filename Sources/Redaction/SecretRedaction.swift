/// Cuts secrets (a password, an API key, an access token) out of text that a server or a library
/// wrote, before an error keeps it: the one rule every module that holds a secret follows.
///
/// A server may quote a secret whole, but also in parts: the halves of a token, one segment of a
/// JWT (its payload names the user, its signature is what a forger lacks), or a fragment cut
/// where a message was truncated. So this removes, for each secret:
///
/// - the secret itself, whatever its length;
/// - each segment of a JWT-shaped secret (three or more `.`-separated parts) that has at least
///   ``minimumSegmentLength`` characters, on its own;
/// - every run of the text that is a substring of the secret and at least
///   ``fragmentLength(of:)`` characters long: 8, or half the secret for one shorter than 16
///   (at least 4). Each such run is replaced by the marker once, so a secret quoted in halves,
///   in pieces or with something between them leaves no part of that length.
///
/// Text is compared by Unicode scalars, so a replacement never splits a character's encoding.
/// The rule may also cut an innocent word that happens to be part of a secret; it never leaves
/// a part of the secret that it promised to cut.
package enum SecretRedaction {
  /// The shortest JWT segment cut on its own (a JWT's header is 36 characters, its signature
  /// 43 or more).
  package static let minimumSegmentLength = 4

  /// The length from which a substring of `secret` is cut: 8 characters, or half of a secret
  /// shorter than 16 (at least 4, at most the secret's length).
  package static func fragmentLength(of secret: String) -> Int {
    let count = secret.unicodeScalars.count
    return min(count, max(4, min(8, count / 2)))
  }

  /// `text` with every part of `secrets` that the rule above names replaced by `marker`.
  /// - Parameters:
  ///   - text: a server's or a library's words.
  ///   - secrets: the secrets to cut; empty ones are ignored.
  ///   - marker: what stands in for a cut run (`[redacted]`, `***`).
  /// - Returns: the text, each run the rule names replaced by one `marker`.
  /// - Complexity: O(n·k) for a text of n scalars and secrets of k scalars in all.
  package static func redacting(_ text: String, secrets: [String], marker: String) -> String {
    let scalars = Array(text.unicodeScalars)
    guard !scalars.isEmpty else { return text }
    var cut = [Bool](repeating: false, count: scalars.count)
    for secret in secrets where !secret.isEmpty {
      let secretScalars = Array(secret.unicodeScalars)
      mark(secretScalars, in: scalars, cut: &cut)
      let segments = secret.split(separator: ".", omittingEmptySubsequences: false)
      if segments.count >= 3 {
        for segment in segments where segment.unicodeScalars.count >= minimumSegmentLength {
          mark(Array(segment.unicodeScalars), in: scalars, cut: &cut)
        }
      }
      markFragments(of: secretScalars, length: fragmentLength(of: secret), in: scalars, cut: &cut)
    }
    guard cut.contains(true) else { return text }
    var result = String.UnicodeScalarView()
    var index = 0
    while index < scalars.count {
      if cut[index] {
        result.append(contentsOf: marker.unicodeScalars)
        while index < scalars.count && cut[index] { index += 1 }
      } else {
        result.append(scalars[index])
        index += 1
      }
    }
    return String(result)
  }

  /// Marks every occurrence of `needle` in `text`.
  private static func mark(_ needle: [Unicode.Scalar], in text: [Unicode.Scalar], cut: inout [Bool]) {
    guard !needle.isEmpty, needle.count <= text.count else { return }
    for start in 0...(text.count - needle.count)
    where text[start] == needle[0] && text[start..<(start + needle.count)].elementsEqual(needle) {
      for index in start..<(start + needle.count) { cut[index] = true }
    }
  }

  /// Marks every run of `text` of at least `length` scalars that is a substring of `secret`: each
  /// window of `length` scalars of the text that occurs in the secret (a run that long is the
  /// union of its windows).
  private static func markFragments(
    of secret: [Unicode.Scalar], length: Int, in text: [Unicode.Scalar], cut: inout [Bool]
  ) {
    guard length > 0, secret.count >= length, text.count >= length else { return }
    var windows = Set<[UInt32]>()
    for start in 0...(secret.count - length) {
      windows.insert(secret[start..<(start + length)].map(\.value))
    }
    for start in 0...(text.count - length) where windows.contains(text[start..<(start + length)].map(\.value))
    {
      for index in start..<(start + length) { cut[index] = true }
    }
  }
}
