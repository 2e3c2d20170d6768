import Foundation
import RestaurantBooking
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1, on an ephemeral port, for the client tests.
///
/// Bounded: it serves at most `maximumConnections` connections, stops after `lifetime`, reads
/// request heads of at most 64 KiB, and answers each request on a connection of its own
/// (`Connection: close`). It never connects anywhere.
final class TestHTTPServer: @unchecked Sendable {
  // @unchecked Sendable: the socket is only closed once (guarded by `stopped`), and the
  // recorded requests are in a Mutex.

  struct Request: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    var headers: [String: String]
  }

  struct Response: Sendable {
    var status: Int
    var headers: [(String, String)] = [("Content-Type", "application/json")]
    var body: [UInt8]
    /// How long to wait before answering.
    var delay: Duration = .zero
    /// Whether to send `Content-Length`; without it, the body ends when the connection closes.
    var sendsLength = true

    init(status: Int = 200, headers: [(String, String)]? = nil, body: [UInt8], delay: Duration = .zero) {
      self.status = status
      if let headers { self.headers = headers }
      self.body = body
      self.delay = delay
    }

    init(status: Int = 200, json: String, delay: Duration = .zero) {
      self.init(status: status, body: Array(json.utf8), delay: delay)
    }

    /// PostgREST's error body.
    static func postgrestError(_ status: Int, code: String, message: String) -> Response {
      Response(
        status: status, json: #"{"code":"\#(code)","details":null,"hint":null,"message":"\#(message)"}"#)
    }
  }

  typealias Handler = @Sendable (Request) -> Response

  let port: UInt16
  private let socket: Int32
  private let handler: Handler
  private let maximumConnections: Int
  private let deadline: ContinuousClock.Instant
  private let stopped = Atomic<Bool>(false)
  private let recorded = Mutex<[Request]>([])

  /// The base URL: `http://127.0.0.1:PORT`.
  var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// The requests served so far.
  var requests: [Request] { recorded.withLock { $0 } }

  init(maximumConnections: Int = 32, lifetime: Duration = .seconds(60), handler: @escaping Handler) throws {
    self.handler = handler
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
    address.sin_port = 0
    address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
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

  /// Stops accepting; connections in progress finish their delay early.
  func stop() {
    if stopped.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
      shutdown(socket, Int32(SHUT_RDWR))
      close(socket)
    }
  }

  deinit { stop() }

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
      let thread = Thread { [self] in serve(connection) }
      thread.start()
    }
    stop()
  }

  private func serve(_ connection: Int32) {
    defer { close(connection) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var head = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while head.count < 65_536 {
      let count = recv(connection, &buffer, buffer.count, 0)
      guard count > 0 else { return }
      head.append(contentsOf: buffer[0..<count])
      if Self.endsHead(head) { break }
    }
    guard let request = Self.parse(String(decoding: head, as: UTF8.self)) else { return }
    recorded.withLock { $0.append(request) }
    let response = handler(request)
    if response.delay > .zero {
      let end = ContinuousClock.now + response.delay
      while ContinuousClock.now < end && !stopped.load(ordering: .sequentiallyConsistent) {
        usleep(10_000)
      }
    }
    var text = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
    for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
    if response.sendsLength { text += "Content-Length: \(response.body.count)\r\n" }
    text += "Connection: close\r\n\r\n"
    send(connection, Array(text.utf8) + response.body)
  }

  private func send(_ connection: Int32, _ bytes: [UInt8]) {
    var sent = 0
    while sent < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        #if canImport(Glibc)
          Glibc.send(connection, buffer.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
        #else
          Darwin.send(connection, buffer.baseAddress! + sent, bytes.count - sent, 0)
        #endif
      }
      guard count > 0 else { return }  // the client went away
      sent += count
    }
  }

  private static func endsHead(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 4 else { return false }
    for index in 0...(bytes.count - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
      return true
    }
    return false
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
      let name = line[..<colon].lowercased()
      headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return Request(method: String(parts[0]), path: components?.path ?? target, query: query, headers: headers)
  }

  private static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 302: "Found"
    case 401: "Unauthorized"
    case 404: "Not Found"
    case 500: "Internal Server Error"
    default: "Status"
    }
  }
}

extension TestHTTPServer {
  /// A server answering `/rest/v1/restaurants` as PostgREST does, from `rows` (by `limit` and
  /// `offset`), or with `override`'s response when it returns one.
  static func postgrest(
    _ rows: [RemoteRestaurant], override: (@Sendable (Request) -> Response?)? = nil
  ) throws -> TestHTTPServer {
    let encoded = rows.map { row -> [UInt8] in
      let wire = WireRow(id: row.id.uuidString.lowercased(), name: row.name, cuisine: row.cuisine)
      return Array((try? JSONEncoder().encode(wire)) ?? Data())
    }
    return try TestHTTPServer { request in
      if let response = override?(request) { return response }
      guard request.path == "/rest/v1/restaurants" else {
        return .postgrestError(404, code: "PGRST125", message: "Invalid path specified in request URL")
      }
      let limit = Int(request.query["limit"] ?? "") ?? rows.count
      let offset = Int(request.query["offset"] ?? "") ?? 0
      let page = encoded.dropFirst(offset).prefix(limit)
      var body: [UInt8] = [UInt8(ascii: "[")]
      for (index, row) in page.enumerated() {
        if index > 0 { body.append(UInt8(ascii: ",")) }
        body += row
      }
      body.append(UInt8(ascii: "]"))
      return Response(body: body)
    }
  }
}
