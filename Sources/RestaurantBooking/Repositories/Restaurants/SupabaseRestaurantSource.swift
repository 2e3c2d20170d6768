import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The restaurant catalog from Supabase's PostgREST API, over `URLSession`.
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
/// - Each page must arrive within `timeout`, and be at most `maximumResponseBytes`.
/// - The key is sent in headers only, never in a URL, an error, a description or an event; the
///   session is ephemeral (no cache, no cookies).
public struct SupabaseRestaurantSource: RestaurantSource, CustomStringConvertible, CustomReflectable {
  /// The project's base URL, for example `https://xyz.supabase.co`.
  public let baseURL: URL
  private let apiKey: String
  /// Rows per page (PostgREST's `limit`).
  public let pageSize: Int
  /// The longest a page may take.
  public let timeout: Duration
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
  ///   - maximumResponseBytes: the largest page body accepted.
  ///   - maximumRows: the most rows a snapshot may have.
  public init(
    baseURL: URL, apiKey: String, pageSize: Int = 1000, timeout: Duration = .seconds(30),
    maximumResponseBytes: Int = 32 << 20, maximumRows: Int = 10_000_000
  ) {
    precondition(pageSize > 0, "pageSize must be positive")
    self.baseURL = baseURL
    self.apiKey = apiKey
    self.pageSize = pageSize
    self.timeout = timeout
    self.maximumResponseBytes = maximumResponseBytes
    self.maximumRows = maximumRows
  }

  public var sourceDescription: String { Self.redacted(baseURL) }

  public var description: String { "SupabaseRestaurantSource(\(sourceDescription))" }

  /// Shows no key to `dump` and debuggers.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: ["baseURL": sourceDescription, "pageSize": pageSize, "timeout": timeout] as KeyValuePairs,
      displayStyle: .struct)
  }

  /// Fetches every page, then returns the rows.
  /// - Throws: ``RestaurantSyncError`` naming the page or row; never containing the key.
  /// - Complexity: O(n) for n rows, in ⌈(n + 1) / pageSize⌉ requests.
  public func fetchAll() async throws -> [RemoteRestaurant] {
    try Self.checkAllowed(baseURL)
    var rows: [RemoteRestaurant] = []
    var seen: [UUID: Int] = [:]
    var offset = 0
    while true {
      let data = try await fetchPage(offset: offset)
      let page = try PostgRESTRestaurantBody.decode(data, offset: offset, seen: &seen)
      rows.append(contentsOf: page)
      guard rows.count <= maximumRows else { throw RestaurantSyncError.tooManyRows(limit: maximumRows) }
      if page.count < pageSize { return rows }
      offset += page.count
    }
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

  private var timeoutSeconds: Double {
    Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
  }

  private func fetchPage(offset: Int) async throws -> Data {
    var request = URLRequest(url: pageURL(offset: offset))
    request.httpMethod = "GET"
    // FoundationNetworking rounds its timeouts down to whole seconds (0.5 s would fail at once),
    // so they are only a backstop; a watchdog enforces `timeout` itself.
    let backstop = (timeoutSeconds.rounded(.up)) + 1
    request.timeoutInterval = backstop
    request.cachePolicy = .reloadIgnoringLocalCacheData
    request.setValue(apiKey, forHTTPHeaderField: "apikey")
    request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
    request.setValue("application/json", forHTTPHeaderField: "Accept")

    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = backstop
    configuration.timeoutIntervalForResource = backstop
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let loader = PageLoader(limit: maximumResponseBytes, host: baseURL.host?.lowercased(), offset: offset)
    let session = URLSession(configuration: configuration, delegate: loader, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    let task = session.dataTask(with: request)
    let watchdog = Task { [timeout, timeoutSeconds] in
      try await Task.sleep(for: timeout)
      loader.refuse(.timeout(seconds: timeoutSeconds, offset: offset), task)
    }
    defer { watchdog.cancel() }
    let outcome = await withTaskCancellationHandler {
      await loader.run(task)
    } onCancel: {
      task.cancel()
    }
    switch outcome {
    case .success(let status, let body):
      guard (200..<300).contains(status) else {
        throw RestaurantSyncError.httpStatus(status, message: errorMessage(in: body), offset: offset)
      }
      return body
    case .refused(let error):
      throw error
    case .failed(let error):
      try Task.checkCancellation()
      throw map(error, offset: offset)
    }
  }

  /// PostgREST's `message` of an error body, without the key; the start of any other body.
  private func errorMessage(in body: Data) -> String? {
    struct ErrorBody: Decodable {
      var message: String?
    }
    // Redact before truncating, so that no part of the key survives a cut.
    var text: String
    if let decoded = try? JSONDecoder().decode(ErrorBody.self, from: body), let message = decoded.message {
      text = redactKey(message)
    } else {
      text = redactKey(String(decoding: body.prefix(64 << 10), as: UTF8.self))
    }
    text = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return nil }
    return text.count > 500 ? String(text.prefix(500)) + "…" : text
  }

  private func redactKey(_ text: String) -> String {
    guard !apiKey.isEmpty else { return text }
    return text.replacingOccurrences(of: apiKey, with: "[redacted]")
  }

  private func map(_ error: any Error, offset: Int) -> RestaurantSyncError {
    if let error = error as? URLError {
      switch error.code {
      case .timedOut: return .timeout(seconds: timeoutSeconds, offset: offset)
      default:
        return .transport(
          reason: redactKey("\(error.code.rawValue) \(error.localizedDescription)"), offset: offset)
      }
    }
    let reason = redactKey((error as NSError).localizedDescription)
    return .transport(reason: reason, offset: offset)
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
      guard isLoopback(host) else {
        throw .insecureURL(
          redacted(url), reason: "plain http:// is allowed only for loopback hosts; use https://")
      }
    default:
      throw .insecureURL(redacted(url), reason: "only https:// (or http:// on loopback) is supported")
    }
  }

  /// Whether `host` is `localhost`, in 127.0.0.0/8 or `::1`.
  static func isLoopback(_ host: String) -> Bool {
    var host = host.lowercased()
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return false }
    let octets = parts.compactMap { part -> Int? in
      guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = Int(part), value <= 255
      else { return nil }
      return value
    }
    return octets.count == 4 && octets[0] == 127
  }

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

/// Loads one page: collects the body up to a limit, vets redirects, and reports the outcome once.
private final class PageLoader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // @unchecked Sendable: every mutable field is inside `state`, a Mutex; URLSession calls the
  // delegate methods on its own queue and `run` on the caller's.
  enum Outcome: Sendable {
    case success(status: Int, body: Data)
    case refused(RestaurantSyncError)
    case failed(any Error)
  }

  private struct State {
    var body = Data()
    var status = 0
    var refusal: RestaurantSyncError?
    var continuation: CheckedContinuation<Outcome, Never>?
  }

  private let limit: Int
  private let host: String?
  private let offset: Int
  private let state = Mutex(State())

  init(limit: Int, host: String?, offset: Int) {
    self.limit = limit
    self.host = host
    self.offset = offset
  }

  func run(_ task: URLSessionDataTask) async -> Outcome {
    await withCheckedContinuation { continuation in
      state.withLock { $0.continuation = continuation }
      task.resume()
    }
  }

  /// Records why the page is refused; the task then completes with it.
  private func record(_ error: RestaurantSyncError) {
    state.withLock { if $0.refusal == nil { $0.refusal = error } }
  }

  /// Records why the page is refused and cancels its task.
  func refuse(_ error: RestaurantSyncError, _ task: URLSessionTask) {
    record(error)
    task.cancel()
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    if response.expectedContentLength > Int64(limit) {
      refuse(.responseTooLarge(limit: limit, offset: offset), dataTask)
      completionHandler(.cancel)
      return
    }
    state.withLock { $0.status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let tooLarge = state.withLock { state -> Bool in
      guard state.refusal == nil else { return false }
      state.body.append(data)
      return state.body.count > limit
    }
    if tooLarge { refuse(.responseTooLarge(limit: limit, offset: offset), dataTask) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    guard let url = request.url else {
      completionHandler(nil)
      return
    }
    let sameHost = url.host?.lowercased() == host
    if sameHost, (try? SupabaseRestaurantSource.checkAllowed(url)) != nil {
      completionHandler(request)
    } else {
      // Not followed: the redirect response completes the task (cancelling here would upset
      // FoundationNetworking's redirect state machine).
      record(.redirectRefused(to: SupabaseRestaurantSource.redacted(url)))
      completionHandler(nil)
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let (continuation, outcome) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Outcome) in
      let outcome: Outcome
      if let refusal = state.refusal {
        outcome = .refused(refusal)
      } else if let error {
        outcome = .failed(error)
      } else {
        outcome = .success(status: state.status, body: state.body)
      }
      defer { state.continuation = nil }
      return (state.continuation, outcome)
    }
    continuation?.resume(returning: outcome)
  }
}
