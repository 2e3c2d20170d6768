import Foundation

/// The request methods ``HTTPClient`` sends.
public enum HTTPMethod: String, Sendable, Equatable {
  /// `GET`: no request body.
  case get = "GET"
  /// `POST`: the request's ``HTTPRequest/body`` is sent with a `Content-Length`.
  case post = "POST"
}

/// One request for ``HTTPClient``: the method, where, with which headers and body, and within which
/// bounds.
///
/// Its `description`, `debugDescription` and mirror (what `print`, `dump` and string interpolation
/// show) name the headers but never show their values, so an API key or a bearer token in a header
/// does not reach a log through the request.
public struct HTTPRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable
{
  /// The absolute `http://` or `https://` URL; no other scheme is ever contacted.
  public var url: URL
  /// The method: `GET` (the default) or `POST`.
  public var method: HTTPMethod
  /// Request headers, sent in this order. libcurl adds `Host`, and for a `POST` `Content-Length`;
  /// give a `POST`'s `Content-Type` here (libcurl's default is `application/x-www-form-urlencoded`).
  public var headers: [HTTPHeader]
  /// The request body of a `POST`, sent as it is (empty by default); a `GET` must have none.
  public var body: Data
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
  ///   - method: `GET` or `POST`.
  ///   - headers: request headers, sent in this order.
  ///   - body: the body of a `POST`.
  ///   - timeout: the longest the exchange may take.
  ///   - maximumBodyBytes: the largest response body accepted.
  ///   - usesEnvironmentProxy: whether the proxy environment variables apply.
  public init(
    url: URL, method: HTTPMethod = .get, headers: [HTTPHeader] = [], body: Data = Data(),
    timeout: Duration = .seconds(30), maximumBodyBytes: Int = 32 << 20, usesEnvironmentProxy: Bool = true
  ) {
    self.url = url
    self.method = method
    self.headers = headers
    self.body = body
    self.timeout = timeout
    self.maximumBodyBytes = maximumBodyBytes
    self.usesEnvironmentProxy = usesEnvironmentProxy
  }

  /// `POST http://host:port/path (headers: apikey, Authorization; body: 12 bytes)`: the URL without
  /// its query, user or password, the header names without their values, the body's length.
  public var description: String {
    var shown = URLComponents(url: url, resolvingAgainstBaseURL: false)
    shown?.query = nil
    shown?.fragment = nil
    shown?.user = nil
    shown?.password = nil
    let target = shown?.string ?? "(a URL)"
    let names = headers.map(\.name).joined(separator: ", ")
    return
      "\(method.rawValue) \(target) (headers: \(names.isEmpty ? "none" : names); body: \(body.count) bytes)"
  }

  /// The same as ``description``: no header value, no query.
  public var debugDescription: String { description }

  /// A mirror of ``description`` alone, so `dump` shows no header value either.
  public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// A request header: a name and a value.
///
/// Its `description`, `debugDescription` and mirror show the name only: a header may carry a
/// credential.
public struct HTTPHeader: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The field name, for example `Accept`.
  public var name: String
  /// The field value.
  public var value: String

  /// Creates a header.
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }

  /// `apikey: (redacted)`: the name, never the value.
  public var description: String { "\(name): (redacted)" }

  /// The same as ``description``.
  public var debugDescription: String { description }

  /// A mirror of the name alone.
  public var customMirror: Mirror { Mirror(self, children: ["name": name]) }
}
