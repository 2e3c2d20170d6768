import EventLog
import Foundation
import HTTP
import Redaction

/// The restaurant catalog from Supabase's PostgREST API, over `HTTPClient` (libcurl).
///
/// Sends `GET {baseURL}/rest/v1/restaurants?select=id,name,cuisine&order=id.asc&limit=L&offset=O`
/// with `apikey`, `Authorization: Bearer` and `Accept: application/json`, page by page until a
/// page has fewer than `pageSize` rows, and returns the snapshot only when every page arrived and
/// every row is valid.
///
/// Safety:
/// - `http://` only for loopback hosts (127.0.0.0/8, `::1`, `localhost`); `https://` otherwise.
/// - Redirects are followed only to the same host and only when the target passes the same rule,
///   so the key never leaves the host it was meant for.
/// - The whole catalog must arrive within `deadline` (default 300 s), and each page within
///   `timeout` (default 30 s), so an endless or slow server cannot keep a sync going forever.
/// - Each page must be at most `maximumResponseBytes`: a larger
///   body is refused at its `Content-Length`, or at the first byte past the cap, so memory stays
///   bounded whatever the server sends.
/// - The key is sent in headers only, never in a URL, an error, a description or an event; no
///   cache and no cookies are kept.
/// - Loopback requests ignore the proxy environment variables.
public struct SupabaseRestaurantSource: PagedRestaurantSource, CustomStringConvertible, CustomReflectable {
  /// The project's base URL, for example `https://xyz.supabase.co`.
  public let baseURL: URL
  private let apiKey: String
  /// Rows per page (PostgREST's `limit`).
  public let pageSize: Int
  /// The longest a page may take.
  public let timeout: Duration
  /// The longest the whole fetch may take, all pages together.
  public let deadline: Duration
  /// The largest page body accepted, in bytes.
  public let maximumResponseBytes: Int
  /// The most rows a snapshot may have.
  public let maximumRows: Int

  /// Creates a client.
  /// - Parameters:
  ///   - baseURL: the project's URL; `http://` only for loopback hosts.
  ///   - apiKey: the anon key; sent in headers, never shown.
  ///   - pageSize: rows per request, at least 1.
  ///   - timeout: the longest a page may take.
  ///   - deadline: the longest the whole fetch may take.
  ///   - maximumResponseBytes: the largest page body accepted.
  ///   - maximumRows: the most rows a snapshot may have.
  public init(
    baseURL: URL, apiKey: String, pageSize: Int = 1000, timeout: Duration = .seconds(30),
    deadline: Duration = defaultDeadline, maximumResponseBytes: Int = 32 << 20, maximumRows: Int = 10_000_000
  ) {
    precondition(pageSize > 0, "pageSize must be positive")
    self.baseURL = baseURL
    self.apiKey = apiKey
    self.pageSize = pageSize
    self.timeout = timeout
    self.deadline = deadline
    self.maximumResponseBytes = maximumResponseBytes
    self.maximumRows = maximumRows
  }

  /// The base URL without user, password, query or fragment.
  public var sourceDescription: String { Self.redacted(baseURL) }

  /// `SupabaseRestaurantSource(<base URL>)`, without the key.
  public var description: String { "SupabaseRestaurantSource(\(sourceDescription))" }

  /// Shows no key to `dump` and debuggers.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: ["baseURL": sourceDescription, "pageSize": pageSize, "timeout": timeout] as KeyValuePairs,
      displayStyle: .struct)
  }

  /// The default overall deadline of a fetch.
  public static let defaultDeadline: Duration = .seconds(300)

  /// Fetches every page within ``deadline``, then returns the rows.
  /// - Throws: ``RestaurantSyncError`` naming the page or row; never containing the key.
  /// - Complexity: O(n) for n rows, in ⌈(n + 1) / pageSize⌉ requests.
  public func fetchAll() async throws -> [RemoteRestaurant] {
    try await fetchAll(deadline: deadline, progress: nil)
  }

  /// Fetches every page within `deadline` (each also within ``timeout``), calling `progress`
  /// after each, then returns the rows.
  /// - Throws: ``RestaurantSyncError`` naming the page or row;
  ///   ``RestaurantSyncError/deadlineExceeded(seconds:pages:rows:)`` when time is up.
  /// - Complexity: O(n) for n rows, in ⌈(n + 1) / pageSize⌉ requests.
  public func fetchAll(
    deadline: Duration, progress: (@Sendable (FetchProgress) -> Void)?
  ) async throws -> [RemoteRestaurant] {
    try Self.checkAllowed(baseURL)
    var rows: [RemoteRestaurant] = []
    var seen: [UUID: Int] = [:]
    var offset = 0
    var pages = 0
    let end = ContinuousClock.now + deadline
    let expired = {
      RestaurantSyncError.deadlineExceeded(seconds: Self.seconds(deadline), pages: pages, rows: rows.count)
    }
    while true {
      let data: Data
      do {
        data = try await fetchPage(offset: offset, until: end)
      } catch PageDeadline.passed {
        throw expired()
      }
      let page = try PostgRESTRestaurantBody.decode(data, offset: offset, seen: &seen)
      rows.append(contentsOf: page)
      pages += 1
      progress?(FetchProgress(pages: pages, rows: rows.count))
      guard rows.count <= maximumRows else { throw RestaurantSyncError.tooManyRows(limit: maximumRows) }
      if page.count < pageSize { return rows }
      offset += page.count
    }
  }

  /// The overall deadline passed before or while a page was fetched.
  private enum PageDeadline: Error {
    case passed
  }

  private static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  /// The URL of the page at `offset`.
  func pageURL(offset: Int) -> URL {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) ?? URLComponents()
    var path = components.percentEncodedPath
    while path.hasSuffix("/") { path.removeLast() }
    components.percentEncodedPath = path + "/rest/v1/restaurants"
    components.percentEncodedQuery = "select=id,name,cuisine&order=id.asc&limit=\(pageSize)&offset=\(offset)"
    components.fragment = nil
    return components.url ?? baseURL
  }

  private var timeoutSeconds: Double { Self.seconds(timeout) }

  /// The most redirects followed for one page.
  static let maximumRedirects = 10

  /// Fetches the body of the page at `offset` before `end`, following same-host redirects that
  /// pass ``checkAllowed(_:)``.
  /// - Throws: `PageDeadline.passed` when `end` came first.
  private func fetchPage(offset: Int, until end: ContinuousClock.Instant) async throws -> Data {
    var url = pageURL(offset: offset)
    let host = baseURL.host?.lowercased()
    var redirects = 0
    while true {
      let remaining = end - ContinuousClock.now
      guard remaining > .zero else { throw PageDeadline.passed }
      let timeout = min(self.timeout, remaining)
      let request = HTTPRequest(
        url: url,
        headers: [
          HTTPHeader("apikey", apiKey), HTTPHeader("Authorization", "Bearer \(apiKey)"),
          HTTPHeader("Accept", "application/json"),
        ],
        timeout: timeout, maximumBodyBytes: maximumResponseBytes,
        usesEnvironmentProxy: !HTTPURLRules.isLoopback(host: url.host ?? ""))
      let response: HTTPResponse
      do {
        response = try await HTTPClient.get(request)
      } catch HTTPError.timedOut where timeout < self.timeout {
        throw PageDeadline.passed
      } catch {
        throw try map(error, offset: offset)
      }
      if (300..<400).contains(response.status), let target = response.redirectURL {
        // Followed only to the same host and only when the target passes the same rule, so the
        // key never leaves the host it was meant for.
        guard target.host?.lowercased() == host, (try? Self.checkAllowed(target)) != nil else {
          throw RestaurantSyncError.redirectRefused(to: Self.redacted(target))
        }
        redirects += 1
        guard redirects <= Self.maximumRedirects else {
          throw RestaurantSyncError.transport(
            reason: "more than \(Self.maximumRedirects) redirects", offset: offset)
        }
        url = target
        continue
      }
      guard (200..<300).contains(response.status) else {
        throw RestaurantSyncError.httpStatus(
          response.status, message: errorMessage(in: response.body), offset: offset)
      }
      return response.body
    }
  }

  /// PostgREST's `message` of an error body, without the key; the start of any other body.
  private func errorMessage(in body: Data) -> String? {
    // Redact before truncating, so that no part of the key survives a cut.
    var text: String
    if let message = (try? JSONNode.parse(body))?["message"]?.string {
      text = redactKey(message)
    } else {
      text = redactKey(String(decoding: body.prefix(64 << 10), as: UTF8.self))
    }
    text = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return nil }
    return text.count > 500 ? String(text.prefix(500)) + "…" : text
  }

  /// `text` without the API key: whole, each segment of a JWT-shaped key, and every run of 8 or
  /// more of its characters (``SecretRedaction``).
  private func redactKey(_ text: String) -> String {
    SecretRedaction.redacting(text, secrets: [apiKey], marker: "[redacted]")
  }

  /// The sync error for a failed exchange; a cancelled one throws `CancellationError`.
  private func map(_ error: HTTPError, offset: Int) throws -> RestaurantSyncError {
    switch error {
    case .bodyTooLarge: return .responseTooLarge(limit: maximumResponseBytes, offset: offset)
    case .timedOut: return .timeout(seconds: timeoutSeconds, offset: offset)
    case .cancelled: throw CancellationError()
    case .invalidRequest, .transport: return .transport(reason: redactKey(error.description), offset: offset)
    }
  }

  /// Throws unless `url` is `https`, or `http` on a loopback host.
  static func checkAllowed(_ url: URL) throws(RestaurantSyncError) {
    let scheme = url.scheme?.lowercased()
    guard let host = url.host, !host.isEmpty else {
      throw .insecureURL(redacted(url), reason: "the URL has no host")
    }
    switch scheme {
    case "https":
      return
    case "http":
      guard HTTPURLRules.isLoopback(host: host) else {
        throw .insecureURL(
          redacted(url), reason: "plain http:// is allowed only for loopback hosts; use https://")
      }
    default:
      throw .insecureURL(redacted(url), reason: "only https:// (or http:// on loopback) is supported")
    }
  }

  /// Whether `text` is a URL (`scheme://…`, the scheme in any case: `HTTP://` too) rather than a
  /// file name. A URL of a scheme other than http and https is refused when fetched.
  public static func isURL(_ text: String) -> Bool {
    guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return false }
    let scheme = text[..<colon]
    guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
    return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
  }

  /// Whether `text` is one this source takes (an `http://` or `https://` URL, in any case)
  /// rather than a file, as `SupabaseTransport.handles(_:)` says of a server URL.
  public static func handles(_ text: String) -> Bool { HTTPURLRules.isHTTP(text) }

  /// `url` without user, password, query or fragment.
  static func redacted(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(URL)" }
    components.user = nil
    components.password = nil
    components.query = nil
    components.fragment = nil
    return components.string ?? "(URL)"
  }
}
