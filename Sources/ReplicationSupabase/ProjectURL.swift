import Foundation
import HTTP

/// A Supabase project's base URL, checked: `https://`, or `http://` only on a loopback host (a
/// local stack, a test), never with a user or password in it; and the function URLs under it.
struct ProjectURL: Sendable, Hashable {
  /// The URL as given, without a trailing slash.
  let base: URL
  /// Whether the host is loopback (no proxy applies to it).
  let isLoopback: Bool
  /// The URL as messages show it: scheme, host, port and path, nothing else.
  let shown: String

  /// Checks `url`.
  /// - Throws: ``SupabaseError/invalidURL(reason:)`` naming what is wrong (never repeating a
  ///   password the URL holds).
  init(_ url: URL) throws(SupabaseError) {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      throw .invalidURL(reason: "it is not a URL")
    }
    guard let host = components.host, !host.isEmpty else { throw .invalidURL(reason: "the URL has no host") }
    guard components.user == nil && components.password == nil else {
      throw .invalidURL(
        reason: "the URL holds a user or password; give the API key with --api-key or SUPABASE_ANON_KEY")
    }
    let loopback = HTTPURLRules.isLoopback(host: host)
    switch components.scheme?.lowercased() {
    case "https": break
    case "http" where loopback: break
    case "http": throw .invalidURL(reason: "plain http:// is allowed only for a loopback host; use https://")
    default: throw .invalidURL(reason: "only https:// (or http:// on a loopback host) is supported")
    }
    components.query = nil
    components.fragment = nil
    var path = components.percentEncodedPath
    while path.hasSuffix("/") { path.removeLast() }
    components.percentEncodedPath = path
    guard let base = components.url else { throw .invalidURL(reason: "it is not a URL") }
    self.base = base
    isLoopback = loopback
    shown = components.string ?? "(the project URL)"
  }

  /// `{base}/rest/v1/rpc/<function>`.
  func function(_ name: String) -> URL {
    base.appendingPathComponent("rest/v1/rpc/\(name)", isDirectory: false)
  }
}
