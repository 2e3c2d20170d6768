import Foundation

/// A failure of a PostgreSQL connection or statement, with what was being done and where.
///
/// Every failure of the ``Postgres`` module is one of these: a connection that cannot be made or
/// was lost, a statement the server refused (with its SQLSTATE, constraint and message), a
/// timeout, or a result that does not have the expected shape. The server is named by
/// ``server`` (user, host, port, database), never by the URL, so a password in the URL never
/// reaches a message.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
  /// What kind of failure it is.
  public enum Kind: Sendable, Equatable {
    /// The connection could not be made (server down, wrong password, no such database).
    case connect
    /// The connection broke during a statement.
    case connectionLost
    /// The server answered with an error (``PostgresError/sqlState`` says which).
    case server
    /// The statement did not finish within its deadline; it was cancelled.
    case timeout
    /// The URL or a parameter is not valid; nothing was sent.
    case invalidInput
    /// The result does not have the shape the caller expected (a column or a value).
    case unexpectedResult
  }

  /// What kind of failure it is.
  public var kind: Kind
  /// The five-character SQLSTATE of a server error (`23505`, `40001`, `08006`…), if any.
  public var sqlState: String?
  /// The constraint a server error names, if any.
  public var constraint: String?
  /// What the caller was doing: `push a batch`, `read the schema version`.
  public var purpose: String
  /// The server's (or libpq's) message, without a trailing newline.
  public var message: String
  /// The server's detail line, if any.
  public var detail: String?
  /// The server's hint, if any.
  public var hint: String?
  /// The server: `user@host:port/database`, never with the password.
  public var server: String

  /// Creates an error.
  public init(
    kind: Kind, sqlState: String? = nil, constraint: String? = nil, purpose: String, message: String,
    detail: String? = nil, hint: String? = nil, server: String
  ) {
    self.kind = kind
    self.sqlState = sqlState
    self.constraint = constraint
    self.purpose = purpose
    self.message = message
    self.detail = detail
    self.hint = hint
    self.server = server
  }

  /// Whether trying again later may succeed: the connection could not be made or was lost, the
  /// statement timed out, or the server reported a serialization failure (`40001`), a deadlock
  /// (`40P01`), an administrator shutdown or crash (`57P01`–`57P03`), a connection exception
  /// (`08…`) or too many connections (`53300`).
  ///
  /// A wrong password or a missing database is a connection failure too, but not transient
  /// (`28…` and `3D000`): retrying cannot fix it; nor is a server that refuses the TLS the
  /// connection requires, a certificate that does not verify, or an invalid connection option.
  public var isTransient: Bool {
    if let sqlState {
      if sqlState.hasPrefix("28") || sqlState == "3D000" { return false }
      return sqlState.hasPrefix("08")
        || ["40001", "40P01", "57P01", "57P02", "57P03", "53300"].contains(sqlState)
    }
    switch kind {
    case .connectionLost, .timeout: return true
    // Without a SQLSTATE, libpq could not reach the server (refused, no socket, timeout); an
    // authentication failure reports the server's 28P01 only in its message.
    case .connect: return !Self.authenticationFailure(message)
    case .server, .invalidInput, .unexpectedResult: return false
    }
  }

  private static func authenticationFailure(_ message: String) -> Bool {
    let lower = message.lowercased()
    return lower.contains("password authentication failed") || lower.contains("no password supplied")
      || lower.contains("authentication failed") || lower.contains("does not exist")
      || lower.contains("no pg_hba.conf entry") || lower.contains("permission denied")
      // TLS that the server refuses or that does not verify will not start to work by itself.
      || lower.contains("does not support ssl") || lower.contains("certificate") || lower.contains("invalid")
  }

  /// What failed, with the server, the purpose and the server's message, then the SQLSTATE, the
  /// constraint, the detail and the hint when there are any.
  public var description: String {
    var text: String
    switch kind {
    case .connect: text = "cannot connect to PostgreSQL \(server) (\(purpose)): \(message)"
    case .connectionLost: text = "lost the connection to PostgreSQL \(server) (\(purpose)): \(message)"
    case .timeout: text = "PostgreSQL \(server) did not answer in time (\(purpose)): \(message)"
    case .server, .invalidInput, .unexpectedResult: text = "PostgreSQL \(server) (\(purpose)): \(message)"
    }
    if let sqlState { text += " [SQLSTATE \(sqlState)]" }
    if let constraint { text += " [constraint \(constraint)]" }
    if let detail, !detail.isEmpty { text += "; \(detail)" }
    if let hint, !hint.isEmpty { text += "; hint: \(hint)" }
    return text
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}
