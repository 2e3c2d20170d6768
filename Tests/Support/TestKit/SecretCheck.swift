/// What a test checks about a secret in a text, independently of the package's own rule.
public enum SecretCheck {
  /// The length of the longest run of Unicode scalars that `text` and `secret` share, found by
  /// brute force (dynamic programming): a text that keeps no telling part of a secret shares no
  /// long run with it.
  public static func longestSharedRun(_ text: String, _ secret: String) -> Int {
    let a = Array(text.unicodeScalars)
    let b = Array(secret.unicodeScalars)
    var best = 0
    var previous = [Int](repeating: 0, count: b.count + 1)
    for i in 0..<a.count {
      var current = [Int](repeating: 0, count: b.count + 1)
      for j in 0..<b.count where a[i] == b[j] {
        current[j + 1] = previous[j] + 1
        best = max(best, current[j + 1])
      }
      previous = current
    }
    return best
  }
}
