import Foundation

/// What a server answered to an ``HTTPRequest``. Redirects are not followed: a `3xx` comes back
/// as it is, with the URL it points to, so the caller decides whether to follow it.
public struct HTTPResponse: Sendable {
  /// The status code, for example 200.
  public let status: Int
  /// The whole body, at most the request's `maximumBodyBytes`.
  public let body: Data
  /// For a redirect, the absolute URL its `Location` names (resolved against the request's URL).
  public let redirectURL: URL?
  /// The response's header fields in the order they came, names as the server spelled them
  /// (an interim `100 Continue`'s are not included).
  public let headers: [HTTPHeader]

  /// The value of the first header field named `name`, compared without regard to case.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
  }
}
