import CLibPQ
import Foundation

/// Where and how to connect: a libpq connection URI and the client's own timeouts.
///
/// The password comes from the URI, `PGPASSWORD` or `~/.pgpass`, by libpq's own rules; this type
/// never prints it: ``server`` names the server without it, and ``redact(_:)`` removes it from
/// any text.
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
  private let password: String?

  /// Parses `url`.
  /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/invalidInput`` when it is not a
  ///   `postgres://` or `postgresql://` URI libpq accepts (the URI itself is not repeated).
  public init(url: String) throws(PostgresError) {
    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
      throw PostgresError(
        kind: .invalidInput, purpose: "read the server URL",
        message: "expected a postgres:// or postgresql:// URL", server: "(no server)")
    }
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let options = PQconninfoParse(url, &errorMessage) else {
      let message = errorMessage.map { String(cString: $0) } ?? "not a valid connection URI"
      if let errorMessage { PQfreemem(errorMessage) }
      throw PostgresError(
        kind: .invalidInput, purpose: "read the server URL",
        message: message.trimmingCharacters(in: .whitespacesAndNewlines), server: "(no server)")
    }
    defer { PQconninfoFree(options) }
    var values: [String: String] = [:]
    var option = options
    while let keyword = option.pointee.keyword {
      if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
      option += 1
    }
    self.url = url
    password = values["password"].flatMap { $0.isEmpty ? nil : $0 }
    let user = values["user"] ?? ProcessInfo.processInfo.environment["PGUSER"] ?? ""
    let host =
      values["host"] ?? values["hostaddr"] ?? ProcessInfo.processInfo.environment["PGHOST"] ?? "localhost"
    let port = values["port"] ?? ProcessInfo.processInfo.environment["PGPORT"] ?? "5432"
    let database = values["dbname"] ?? user
    var server = "\(user.isEmpty ? "" : user + "@")\(host):\(port)/\(database)"
    // The password never reaches a message, even through libpq's parse of the rest.
    if let password, server.contains(password) {
      server = server.replacingOccurrences(of: password, with: "***")
    }
    self.server = server
  }

  /// `text` with the URI's password, if any, replaced by `***`.
  public func redact(_ text: String) -> String {
    guard let password, !password.isEmpty else { return text }
    return text.replacingOccurrences(of: password, with: "***")
  }
}
