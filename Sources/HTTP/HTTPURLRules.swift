import Foundation

/// What the package's HTTP clients decide from a URL's text before they send anything: whether
/// it is an HTTP URL at all, and whether its host is this machine (where plain `http://` is
/// allowed and no proxy from the environment is used).
public enum HTTPURLRules {
  /// Whether `text` is an `http://` or `https://` URL, the scheme in any case.
  public static func isHTTP(_ text: String) -> Bool {
    let lowered = text.prefix(8).lowercased()
    return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
  }

  /// Whether `host` is `localhost`, in 127.0.0.0/8 or `::1` (bracketed or not, any case).
  public static func isLoopback(host: String) -> Bool {
    var host = host.lowercased()
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return false }
    let octets = parts.compactMap { part -> Int? in
      let digits = part.allSatisfy { $0.isASCII && $0.isNumber }
      guard !part.isEmpty, part.count <= 3, digits, let value = Int(part), value <= 255 else { return nil }
      return value
    }
    return octets.count == 4 && octets[0] == 127
  }
}
