import CLibPQ
import Foundation
import Redaction

/// Where and how to connect: a libpq connection URI and the client's own timeouts.
///
/// The password comes from the URI, `PGPASSWORD` or `~/.pgpass`, by libpq's own rules; this type
/// never prints it: ``server`` names the server without it, ``redact(_:)`` removes it from any
/// text, and an error about the URI itself repeats none of it.
///
/// **Encryption.** A server on another host is reached over TLS: without an `sslmode` in the URI
/// (or `PGSSLMODE`), this type asks for `require`, or `verify-full` when a root certificate is
/// given (`sslrootcert`, `PGSSLROOTCERT`), so a server that refuses TLS never receives the
/// password. `sslmode=disable`, `allow` or `prefer` for such a host is refused unless the caller
/// allows unencrypted connections. Local servers (a Unix socket, `localhost`, `127.0.0.0/8`,
/// `::1`) take libpq's defaults.
public struct PostgresConfiguration: Sendable {
  /// The libpq connection URI (`postgres://` or `postgresql://`).
  public let url: String
  /// How long a connection attempt may take, in seconds (libpq's `connect_timeout`), unless the
  /// URI sets its own.
  public var connectTimeoutSeconds = 10
  /// How long one statement may take before it is cancelled and fails with
  /// ``PostgresError/Kind/timeout``.
  public var statementTimeout: Duration = .seconds(60)
  /// The `application_name` the server shows, unless the URI sets its own.
  public var applicationName = "eventlog"
  /// The server as messages name it: `user@host:port/database`, never with the password.
  public let server: String
  /// The `sslmode` this configuration adds to the URI's settings, when the URI and the
  /// environment set none and the host is not local; `nil` otherwise.
  public let addedSSLMode: String?
  /// Whether the URI names a password (`user:password@…` or `password=…`).
  public var hasPassword: Bool { !passwords.isEmpty }
  private let passwords: [String]

  /// Parses `url`.
  /// - Parameters:
  ///   - url: a `postgres://` or `postgresql://` URI.
  ///   - allowUnencrypted: whether `sslmode=disable`, `allow` or `prefer` may be used for a server
  ///     on another host.
  ///   - environment: the environment libpq reads its defaults from (`PGSSLMODE`, `PGHOST`, …).
  /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/invalidInput`` when it is not a URI
  ///   libpq accepts, names an invalid port, or asks for an unencrypted connection to another
  ///   host (the URI's password is not repeated, even in libpq's words).
  public init(
    url: String, allowUnencrypted: Bool = false,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(PostgresError) {
    func invalid(_ message: String) -> PostgresError {
      PostgresError(
        kind: .invalidInput, purpose: "read the server URL", message: message, server: "(no server)")
    }
    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
      throw invalid("expected a postgres:// or postgresql:// URL")
    }
    let candidates = Self.passwordCandidates(in: url)
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let options = PQconninfoParse(url, &errorMessage) else {
      let message = errorMessage.map { String(cString: $0) } ?? "not a valid connection URI"
      if let errorMessage { PQfreemem(errorMessage) }
      throw invalid(Self.redacting(message.trimmingCharacters(in: .whitespacesAndNewlines), candidates))
    }
    defer { PQconninfoFree(options) }
    var values: [String: String] = [:]
    var option = options
    while let keyword = option.pointee.keyword {
      if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
      option += 1
    }
    var passwords = candidates
    if let password = values["password"], !password.isEmpty, !passwords.contains(password) {
      passwords.append(password)
    }
    self.url = url
    self.passwords = passwords.sorted { $0.count > $1.count }
    let user = values["user"] ?? environment["PGUSER"] ?? ""
    let hosts = values["host"] ?? values["hostaddr"] ?? environment["PGHOST"] ?? ""
    let port = values["port"] ?? environment["PGPORT"] ?? "5432"
    for part in port.split(separator: ",", omittingEmptySubsequences: false) {
      guard let number = Int(part), (1...65_535).contains(number) else {
        throw invalid(
          "the port '\(Self.redacting(String(part), self.passwords))' is not a number from 1 to 65535")
      }
    }
    let database = values["dbname"] ?? user
    let remote = hosts.split(separator: ",").map(String.init).filter { !Self.isLocal(host: $0) }
    let sslMode = values["sslmode"] ?? environment["PGSSLMODE"]
    if !remote.isEmpty, let sslMode, ["disable", "allow", "prefer"].contains(sslMode), !allowUnencrypted {
      throw invalid(
        "sslmode=\(sslMode) would send the password and the events unencrypted to \(remote[0]), which is not a "
          + "local host: use sslmode=require or verify-full, or allow unencrypted connections explicitly")
    }
    if !remote.isEmpty && sslMode == nil {
      let rootCertificate = values["sslrootcert"] ?? environment["PGSSLROOTCERT"]
      addedSSLMode = rootCertificate == nil ? "require" : "verify-full"
    } else {
      addedSSLMode = nil
    }
    self.server = Self.redacting(
      "\(user.isEmpty ? "" : user + "@")\(hosts.isEmpty ? "localhost" : hosts):\(port)/\(database)",
      self.passwords)
  }

  /// `text` with the URI's password, if any, replaced by `***`: whole, and any part of it long
  /// enough to help (``SecretRedaction``'s rule: a run of 8 of its characters, or half of a
  /// password shorter than 16).
  public func redact(_ text: String) -> String { Self.redacting(text, passwords) }

  private static func redacting(_ text: String, _ passwords: [String]) -> String {
    SecretRedaction.redacting(text, secrets: passwords, marker: "***")
  }

  /// Whether `host` is this machine: a Unix socket directory, `localhost`, `127.0.0.0/8` or `::1`.
  public static func isLocal(host: String) -> Bool {
    if host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") { return true }
    let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    if bare == "localhost" || bare == "::1" { return true }
    let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }

  /// Every text of `url` that may be a password, found without libpq (whose parse may fail):
  /// the user information's part after its first `:`, raw and percent-decoded, and each
  /// `password=` query value.
  static func passwordCandidates(in url: String) -> [String] {
    var found: [String] = []
    guard let schemeEnd = url.range(of: "://") else { return [] }
    let rest = url[schemeEnd.upperBound...]
    // The user information ends at the last '@' before the path or query: a raw '@' or '/' in a
    // password is not valid URI syntax, but people write it, and it must not leak either way.
    if let at = rest.lastIndex(of: "@") {
      let userInfo = rest[..<at]
      if let colon = userInfo.firstIndex(of: ":") {
        let password = String(userInfo[userInfo.index(after: colon)...])
        if !password.isEmpty {
          found.append(password)
          if let decoded = password.removingPercentEncoding, decoded != password { found.append(decoded) }
        }
      }
    }
    if let query = url.firstIndex(of: "?") {
      for item in url[url.index(after: query)...].split(separator: "&") {
        let pair = item.split(separator: "=", maxSplits: 1)
        if pair.count == 2, pair[0] == "password", !pair[1].isEmpty {
          found.append(String(pair[1]))
          if let decoded = String(pair[1]).removingPercentEncoding, decoded != String(pair[1]) {
            found.append(decoded)
          }
        }
      }
    }
    return found.sorted { $0.count > $1.count }
  }
}
