import Foundation
import Postgres
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 21's credential and transport findings: no message repeats a URL's password, a server on
/// another host is reached over TLS, and a server that refuses TLS never receives the password.
@Suite("Credentials and transport")
struct CredentialsTests {
  /// A password with an invalid percent escape: libpq's parse error quotes it.
  static let secret = "s3cr%ET-pw"
  /// A password libpq accepts.
  static let password = "s3cr3t-pw"

  /// libpq's own parse errors quoted the URL, password included.
  @Test(arguments: [
    "postgres://ada:\(secret)@db.example.com:99999/bookings",
    "postgres://ada:\(secret)@db.example.com/bookings?sslmode=sometimes",
    "postgres://ada:\(secret)@db.example.com/bookings?nonsense=1",
    "postgres://ada:\(secret)@[::1/bookings",
    "postgresql://ada@db.example.com/bookings?password=\(secret)&port=abc",
  ])
  func aURLThatDoesNotParseNeverRepeatsItsPassword(url: String) {
    let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: url) }
    #expect(error?.kind == .invalidInput)
    for text in [Self.secret, "s3cr%25ET", "s3cr"] {
      #expect(error?.description.contains(text) == false, "\(String(describing: error))")
    }
  }

  /// Issue 28: only the whole password was cut, so a server's message that quoted it in halves
  /// (or any long part of it) kept them.
  @Test func aPasswordQuotedInPartsIsCutFromAnyText() throws {
    let password = "correct-horse-battery-staple"
    let configuration = try PostgresConfiguration(
      url: "postgres://ada:\(password)@localhost/bookings", environment: [:])
    let message =
      "FATAL: password \"correct-horse-\" + \"battery-staple\" for ada; also horse-batt, and \(password)"
    let cut = configuration.redact(message)
    #expect(cut == "FATAL: password \"***\" + \"***\" for ada; also ***, and ***", "\(cut)")
    // What is shorter than 8 characters of it, and the rest of the text, stay.
    #expect(configuration.redact("horse for ada@localhost") == "horse for ada@localhost")
  }

  @Test(
    arguments: [
      ("postgres://ada@db.example.com/bookings", "require"),
      ("postgres://ada@db.example.com/bookings?sslrootcert=/etc/ssl/root.crt", "verify-full"),
      ("postgres://ada@10.0.0.5:6543/bookings", "require"),
      ("postgres://ada@localhost/bookings", nil),
      ("postgres://ada@127.0.0.1/bookings", nil),
      ("postgres://ada@[::1]/bookings", nil),
      ("postgres://ada@%2Fvar%2Frun%2Fpostgresql/bookings", nil),
      ("postgres://ada@db.example.com/bookings?sslmode=verify-ca", nil),
    ] as [(String, String?)])
  func aServerOnAnotherHostIsReachedOverTLS(url: String, added: String?) throws {
    let configuration = try PostgresConfiguration(url: url, environment: [:])
    #expect(configuration.addedSSLMode == added)
  }

  @Test(arguments: ["disable", "allow", "prefer"])
  func anUnencryptedConnectionToAnotherHostIsRefusedUnlessAllowed(mode: String) throws {
    let url = "postgres://ada:\(Self.password)@db.example.com/bookings?sslmode=\(mode)"
    let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: url, environment: [:]) }
    #expect(error?.description.contains("sslmode=\(mode)") == true)
    #expect(error?.description.contains(Self.password) == false)
    _ = try PostgresConfiguration(url: url, allowUnencrypted: true, environment: [:])
    // PGSSLMODE counts as the URL's own setting.
    #expect(throws: PostgresError.self) {
      try PostgresConfiguration(url: "postgres://ada@db.example.com/b", environment: ["PGSSLMODE": mode])
    }
    // Local servers take libpq's defaults.
    _ = try PostgresConfiguration(url: "postgres://ada@127.0.0.1/bookings?sslmode=\(mode)", environment: [:])
  }

  /// The probe's fake server answered "no TLS" and then asked for the password in clear, and
  /// received it. With a host that is not local, the connection requires TLS: it ends at the
  /// refusal, before any startup message, and the error is not retried as transient.
  @Test func aServerThatRefusesTLSNeverReceivesThePassword() throws {
    let fake = try RefusingServer()
    defer { fake.stop() }
    let url =
      "postgres://ada:\(Self.password)@db.example.test:\(fake.port)/bookings?hostaddr=127.0.0.1&connect_timeout=5"
    let error = #expect(throws: PostgresError.self) {
      try PostgresConnection(PostgresConfiguration(url: url))
    }
    #expect(error?.description.contains("SSL") == true, "\(String(describing: error))")
    #expect(error?.isTransient == false)
    #expect(!fake.receivedPassword)
    #expect(fake.sawSSLRequest)
    // Allowed explicitly, the same server gets the password in clear: what the refusal prevents.
    let insecure =
      "postgres://ada:\(Self.password)@db.example.test:\(fake.port)/bookings?hostaddr=127.0.0.1&sslmode=prefer&connect_timeout=5"
    _ = try? PostgresConnection(PostgresConfiguration(url: insecure, allowUnencrypted: true))
    #expect(fake.receivedPassword)
  }
}

/// A TCP server on 127.0.0.1 that speaks just enough of PostgreSQL's protocol to refuse TLS and
/// then ask for the password in clear, recording whether it got one.
private final class RefusingServer: Sendable {
  /// What the server saw.
  final class Seen: Sendable {
    let state = Mutex<(ssl: Bool, password: Bool)>((false, false))
  }

  let port: Int
  private let socket: Int32
  private let seen = Seen()

  var sawSSLRequest: Bool { seen.state.withLock { $0.ssl } }
  var receivedPassword: Bool { seen.state.withLock { $0.password } }

  init() throws {
    let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw POSIXError(.EIO) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
    }
    guard bound == 0, listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    socket = listener
    let seen = self.seen
    Thread.detachNewThread {
      while true {
        let client = accept(listener, nil, nil)
        if client < 0 { return }
        Self.serve(client, seen)
        close(client)
      }
    }
  }

  private static func serve(_ client: Int32, _ seen: Seen) {
    func read(_ count: Int) -> [UInt8]? {
      var bytes = [UInt8](repeating: 0, count: count)
      var done = 0
      while done < count {
        let got = bytes.withUnsafeMutableBytes { Glibc.read(client, $0.baseAddress! + done, count - done) }
        if got <= 0 { return nil }
        done += got
      }
      return bytes
    }
    func int32(_ bytes: [UInt8]) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
    // The first message: an SSLRequest (8 bytes, code 80877103) or a startup message.
    guard let head = read(8) else { return }
    if int32(Array(head[4..<8])) == 80_877_103 {
      seen.state.withLock { $0.ssl = true }
      _ = [UInt8(ascii: "N")].withUnsafeBytes { write(client, $0.baseAddress, 1) }
      guard let length = read(4).map(int32), length >= 8, length < 10_000, read(length - 4) != nil else {
        return
      }
    } else if read(int32(Array(head[0..<4])) - 8) == nil {
      return
    }
    // AuthenticationCleartextPassword: 'R', length 8, code 3.
    let request: [UInt8] = [UInt8(ascii: "R"), 0, 0, 0, 8, 0, 0, 0, 3]
    _ = request.withUnsafeBytes { write(client, $0.baseAddress, request.count) }
    if let type = read(1), type == [UInt8(ascii: "p")] { seen.state.withLock { $0.password = true } }
  }

  func stop() {
    shutdown(socket, Int32(SHUT_RDWR))
    close(socket)
  }
}
