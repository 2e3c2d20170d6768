import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A small HTTP/1.1 server for tests, on a loopback address (127.0.0.1 by default; any 127.x.y.z on
/// Linux) and an ephemeral port (or a given one), that answers what its handler says and can
/// misbehave: slow answers, endless bodies, bodies cut short, redirects, no answer at all.
///
/// Shared by the HTTP client's, the Supabase source's and the hardening tests, and by the PostgREST
/// stand-in. Bounded: at most `maximumConnections` connections, a `lifetime`, request heads of at
/// most 64 KiB, request bodies (by `Content-Length`; chunked request bodies are not read) of at
/// most 64 MiB, one request per connection. It never connects anywhere; it counts the connections
/// it accepted and the body bytes it sent.
public final class LoopbackHTTPServer: @unchecked Sendable {
  // @unchecked Sendable: the socket is closed once (guarded by `stopped`); the counters and
  // recorded requests are atomics and a Mutex.

  /// A request as the server parsed it: header names lower-cased.
  public struct Request: Sendable {
    /// The method, for example `GET`.
    public var method: String
    /// The target's path, without the query.
    public var path: String
    /// The query's items by name (an item without a value maps to the empty string).
    public var query: [String: String]
    /// The header fields by lower-cased name.
    public var headers: [String: String]
    /// The request body: the `Content-Length` bytes after the head (empty without one).
    public var body: [UInt8] = []
  }

  /// What to answer.
  public indirect enum Reply: Sendable {
    /// A complete response, with a `Content-Length` unless `sendsLength` is false (the end is then
    /// the connection's close).
    case respond(status: Int, headers: [(String, String)], body: [UInt8], sendsLength: Bool = true)
    /// `reply`, after waiting `delay` before sending anything.
    case delayed(Duration, Reply)
    /// A 200 whose body repeats `chunk` until `total` bytes were sent or the client goes away; no
    /// `Content-Length` (or a false one, `declaredLength`), the end is the connection's close.
    case endless(chunk: [UInt8], total: Int, declaredLength: Int?)
    /// A 200 declaring `declaredLength` bytes that sends only `prefix`, then closes the connection.
    case cutShort(prefix: [UInt8], declaredLength: Int)
    /// A 200 declaring 1,000 bytes that sends one and then holds the connection for `seconds`.
    case stall(seconds: Int)
    /// A 200 in chunked transfer encoding that sends `prefix` as one chunk and closes without the
    /// last chunk.
    case chunkedCutShort(prefix: [UInt8])
    /// No answer: the connection is closed as soon as the handler returns (a gateway or a server
    /// that died after reading the request).
    case closeWithoutAnswer

    /// A complete response of `text` as `application/json`, with `status`.
    public static func json(_ text: String, status: Int = 200) -> Reply {
      .respond(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    /// A redirect to `location` (its `Location` header), with `status` and an empty body.
    public static func redirect(to location: String, status: Int = 302) -> Reply {
      .respond(status: status, headers: [("Location", location)], body: [])
    }
  }

  /// What the server answers to each request, called on the connection's thread.
  public typealias Handler = @Sendable (Request) -> Reply

  /// The loopback address the server listens on.
  public let host: String
  /// The ephemeral port the system assigned.
  public let port: UInt16
  private let socket: Int32
  private let handler: Handler
  private let maximumConnections: Int
  private let deadline: ContinuousClock.Instant
  private let stopped = Atomic<Bool>(false)
  private let accepted = Atomic<Int>(0)
  private let sentBodyBytes = Atomic<Int>(0)
  private let recordsRequests: Bool
  private let recorded = Mutex<[Request]>([])
  private let recordedHangUps = Mutex<[HangUp]>([])

  /// A client that closed its connection while a `.delayed` reply was waiting: when its request
  /// had arrived and when the server saw the close. Timing a client's timeout or cancellation by
  /// these instants measures the client, not how long the awaiting test task waited for a thread.
  public struct HangUp: Sendable {
    /// When the client's request had arrived.
    public var requestArrived: ContinuousClock.Instant
    /// When the server saw the client close the connection.
    public var hungUp: ContinuousClock.Instant
  }

  /// `http://host:port`.
  public var baseURL: URL {
    guard let url = URL(string: "http://\(host):\(port)") else { preconditionFailure("bad host \(host)") }
    return url
  }
  /// The requests received so far, in order (none when created with `recordsRequests: false`).
  public var requests: [Request] { recorded.withLock { $0 } }
  /// The clients that hung up during a `.delayed` reply, in order.
  public var hangUps: [HangUp] { recordedHangUps.withLock { $0 } }

  /// The hang-ups, once there are `count` of them or `limit` has passed (the server looks every
  /// 10 ms, so a client's close shows a moment after the client returned).
  public func hangUps(count: Int, within limit: Duration = .seconds(30)) async -> [HangUp] {
    let end = ContinuousClock.now + limit
    while hangUps.count < count && ContinuousClock.now < end {
      try? await Task.sleep(for: .milliseconds(20))
    }
    return hangUps
  }
  /// Connections accepted so far.
  public var connections: Int { accepted.load(ordering: .sequentiallyConsistent) }
  /// Body bytes written to clients so far.
  public var bodyBytesSent: Int { sentBodyBytes.load(ordering: .sequentiallyConsistent) }

  /// Starts listening.
  /// - Parameters:
  ///   - host: the loopback address to listen on.
  ///   - port: the port, or 0 (the default) for one the system assigns. A given port that is still
  ///     held (by a server stopped a moment ago) fails with `EADDRINUSE`.
  ///   - maximumConnections: how many connections it serves in all before it stops listening.
  ///   - lifetime: how long it listens at most: a backstop for a server that a failed test leaves
  ///     listening (each test stops its own), long enough for a test slowed by a loaded run (its
  ///     awaits can wait over a minute for a thread: a server that stopped listening after 60 s
  ///     failed such a test between two of its requests).
  ///   - recordsRequests: whether ``requests`` keeps every request (with its header values and
  ///     body); a long-running user that keeps its own log passes `false`.
  ///   - handler: what to answer, called on the connection's thread.
  /// - Throws: `POSIXError` when the socket cannot be made, bound or listened on.
  public init(
    host: String = "127.0.0.1", port: UInt16 = 0, maximumConnections: Int = 64,
    lifetime: Duration = .seconds(600),
    recordsRequests: Bool = true, handler: @escaping Handler
  ) throws {
    self.host = host
    self.handler = handler
    self.recordsRequests = recordsRequests
    self.maximumConnections = maximumConnections
    self.deadline = ContinuousClock.now + lifetime
    #if canImport(Glibc)
      let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var reuse: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr = in_addr(s_addr: inet_addr(host))
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 16) == 0 else {
      close(fd)
      throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    self.socket = fd
    self.port = UInt16(bigEndian: address.sin_port)
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  /// Stops accepting; connections in progress end with their handler.
  ///
  /// The listening socket is shut down here but closed by the accept thread when it leaves its
  /// loop: closing it here would free its descriptor number while that thread may still poll it,
  /// and a server created meanwhile by a test running in parallel could get the same number and
  /// have its connections accepted (and answered) by this one.
  public func stop() {
    if stopped.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
      shutdown(socket, Int32(SHUT_RDWR))
    }
  }

  private var isDone: Bool {
    stopped.load(ordering: .sequentiallyConsistent) || ContinuousClock.now >= deadline
  }

  private func acceptLoop() {
    var served = 0
    while !isDone && served < maximumConnections {
      var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 50) > 0 else { continue }
      let connection = accept(socket, nil, nil)
      guard connection >= 0 else { continue }
      served += 1
      accepted.add(1, ordering: .sequentiallyConsistent)
      let thread = Thread { [self] in serve(connection) }
      thread.start()
    }
    stop()
    close(socket)  // only here: see stop()
  }

  private func serve(_ connection: Int32) {
    defer { close(connection) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var received = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    var headEnd: Int?
    while headEnd == nil {
      guard received.count < 65_536 else { return }
      let count = recv(connection, &buffer, buffer.count, 0)
      guard count > 0 else { return }
      received.append(contentsOf: buffer[0..<count])
      headEnd = Self.headEnd(received)
    }
    guard let headEnd, var request = Self.parse(String(decoding: received[..<headEnd], as: UTF8.self)) else {
      return
    }
    if let declared = request.headers["content-length"] {
      guard let length = Int(declared), length >= 0, length <= Self.maximumRequestBodyBytes else { return }
      if request.headers["expect"]?.lowercased() == "100-continue" && received.count == headEnd {
        guard send(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
      }
      var body = Array(received[headEnd...])
      while body.count < length {
        let count = recv(connection, &buffer, min(buffer.count, length - body.count), 0)
        guard count > 0 else { return }  // the client went away before sending its whole body
        body.append(contentsOf: buffer[0..<count])
      }
      request.body = Array(body.prefix(length))
    }
    if recordsRequests { recorded.withLock { $0.append(request) } }
    answer(handler(request), on: connection, requestArrived: ContinuousClock.now)
  }

  /// The largest request body read.
  static let maximumRequestBodyBytes = 64 << 20

  /// Whether the peer closed `connection` (an orderly close or a reset), without consuming data.
  private static func peerClosed(_ connection: Int32) -> Bool {
    var byte: UInt8 = 0
    let count = recv(connection, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
  }

  private func answer(_ reply: Reply, on connection: Int32, requestArrived: ContinuousClock.Instant) {
    switch reply {
    case .delayed(let delay, let reply):
      let end = ContinuousClock.now + delay
      while ContinuousClock.now < end && !stopped.load(ordering: .sequentiallyConsistent) {
        if Self.peerClosed(connection) {
          let hangUp = HangUp(requestArrived: requestArrived, hungUp: ContinuousClock.now)
          recordedHangUps.withLock { $0.append(hangUp) }
          return
        }
        usleep(10_000)
      }
      answer(reply, on: connection, requestArrived: requestArrived)
    case .closeWithoutAnswer:
      return
    case .respond(let status, let headers, let body, let sendsLength):
      var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
      for (name, value) in headers { text += "\(name): \(value)\r\n" }
      // A 204 or 304 has no body, so no Content-Length (RFC 9110 §8.6).
      if sendsLength && status != 204 && status != 304 { text += "Content-Length: \(body.count)\r\n" }
      text += "Connection: close\r\n\r\n"
      _ = send(connection, Array(text.utf8))
      _ = send(connection, body, counted: true)
    case .endless(let chunk, let total, let declaredLength):
      var text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      if let declaredLength { text += "Content-Length: \(declaredLength)\r\n" }
      text += "Connection: close\r\n\r\n"
      guard send(connection, Array(text.utf8)) else { return }
      var sent = 0
      while sent < total && !stopped.load(ordering: .sequentiallyConsistent) {
        guard send(connection, chunk, counted: true) else { return }  // the client went away
        sent += chunk.count
      }
    case .cutShort(let prefix, let declaredLength):
      let text =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(declaredLength)\r\nConnection: close\r\n\r\n"
      _ = send(connection, Array(text.utf8))
      _ = send(connection, prefix, counted: true)
      usleep(50_000)
    case .stall(let seconds):
      let text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
      _ = send(connection, Array(text.utf8))
      let end = ContinuousClock.now + .seconds(seconds)
      while ContinuousClock.now < end && !stopped.load(ordering: .sequentiallyConsistent) { usleep(10_000) }
    case .chunkedCutShort(let prefix):
      let text =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      _ = send(connection, Array(text.utf8))
      _ = send(
        connection, Array((String(prefix.count, radix: 16) + "\r\n").utf8) + prefix + [13, 10], counted: true)
      usleep(50_000)
    }
  }

  /// Sends all of `bytes`; `false` when the client went away.
  private func send(_ connection: Int32, _ bytes: [UInt8], counted: Bool = false) -> Bool {
    var sent = 0
    while sent < bytes.count {
      let count = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        #if canImport(Glibc)
          return Glibc.send(connection, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
        #else
          return Darwin.send(connection, base + sent, bytes.count - sent, 0)
        #endif
      }
      guard count > 0 else { return false }
      sent += count
      if counted { sentBodyBytes.add(count, ordering: .sequentiallyConsistent) }
    }
    return true
  }

  /// The index just past the head's blank line, or `nil` while it has not arrived.
  private static func headEnd(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
      return index + 4
    }
    return nil
  }

  private static func parse(_ text: String) -> Request? {
    let lines = text.components(separatedBy: "\r\n")
    let parts = lines.first?.split(separator: " ") ?? []
    guard parts.count == 3 else { return nil }
    let target = String(parts[1])
    let components = URLComponents(string: target)
    var query: [String: String] = [:]
    for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() where !line.isEmpty {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return Request(method: String(parts[0]), path: components?.path ?? target, query: query, headers: headers)
  }

  private static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 204: "No Content"
    case 300: "Multiple Choices"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 307: "Temporary Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 406: "Not Acceptable"
    case 409: "Conflict"
    case 413: "Content Too Large"
    case 500: "Internal Server Error"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status"
    }
  }
}
