import Foundation

/// One `GET` request for ``HTTPClient``: where, with which headers, and within which bounds.
public struct HTTPRequest: Sendable {
  /// The absolute `http://` or `https://` URL; no other scheme is ever contacted.
  public var url: URL
  /// Request headers, sent in this order.
  public var headers: [HTTPHeader]
  /// The longest the whole exchange (connect, send, receive) may take; at most 2³¹ − 1 ms (about
  /// 24.8 days), longer ones are clamped.
  public var timeout: Duration
  /// The largest response body accepted, in bytes. A `Content-Length` above it is refused before
  /// the body is read; an undeclared body is cut off at the first byte past it.
  public var maximumBodyBytes: Int
  /// Whether the `http_proxy`/`https_proxy`/`no_proxy` environment applies. Loopback requests
  /// should not go through a proxy.
  public var usesEnvironmentProxy: Bool

  /// Creates a request.
  /// - Parameters:
  ///   - url: the absolute `http://` or `https://` URL.
  ///   - headers: request headers, sent in this order.
  ///   - timeout: the longest the exchange may take.
  ///   - maximumBodyBytes: the largest response body accepted.
  ///   - usesEnvironmentProxy: whether the proxy environment variables apply.
  public init(
    url: URL, headers: [HTTPHeader] = [], timeout: Duration = .seconds(30), maximumBodyBytes: Int = 32 << 20,
    usesEnvironmentProxy: Bool = true
  ) {
    self.url = url
    self.headers = headers
    self.timeout = timeout
    self.maximumBodyBytes = maximumBodyBytes
    self.usesEnvironmentProxy = usesEnvironmentProxy
  }
}

/// A request header: a name and a value.
public struct HTTPHeader: Sendable, Equatable {
  /// The field name, for example `Accept`.
  public var name: String
  /// The field value.
  public var value: String

  /// Creates a header.
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
}
