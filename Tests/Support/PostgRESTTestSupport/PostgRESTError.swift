import Foundation
import Postgres

/// An error answer as PostgREST gives one: an HTTP status, the body
/// `{"code","details","hint","message"}` and, for a 401, a `WWW-Authenticate` header.
///
/// Database errors keep PostgreSQL's SQLSTATE as `code` and its message, detail and hint; errors of
/// PostgREST's own have a `PGRST…` code. The status of a database error follows PostgREST's
/// `mapSQLtoHTTP` (`src/PostgREST/Error.hs`) and the table of its "Errors" page
/// (docs.postgrest.org/en/latest/references/errors.html, "HTTP Status Codes").
public struct PostgRESTError: Error, Sendable, Equatable {
  /// The HTTP status.
  public var status: Int
  /// The SQLSTATE, or PostgREST's own `PGRST…` code.
  public var code: String
  /// The message.
  public var message: String
  /// The details, or `nil` (JSON `null`).
  public var details: String?
  /// The hint, or `nil` (JSON `null`).
  public var hint: String?
  /// The `WWW-Authenticate` header's value, for a 401.
  public var wwwAuthenticate: String?

  /// Creates an error answer.
  public init(
    status: Int, code: String, message: String, details: String? = nil, hint: String? = nil,
    wwwAuthenticate: String? = nil
  ) {
    self.status = status
    self.code = code
    self.message = message
    self.details = details
    self.hint = hint
    self.wwwAuthenticate = wwwAuthenticate ?? (status == 401 ? "Bearer" : nil)
  }

  /// The body: a JSON object with the keys `code`, `details`, `hint`, `message` (sorted), `null`
  /// for a missing detail or hint.
  public var body: String {
    let object: [String: Any] = [
      "code": code, "message": message, "details": details ?? NSNull(), "hint": hint ?? NSNull(),
    ]
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return #"{"code":"PGRSTX00","details":null,"hint":null,"message":"unencodable error"}"#
    }
    return String(decoding: data, as: UTF8.self)
  }

  /// The HTTP status PostgREST answers a database error with: its `mapSQLtoHTTP` (PostgREST 14).
  ///
  /// | SQLSTATE | status |
  /// |---|---|
  /// | `08…` | 503 |
  /// | `09…` | 500 |
  /// | `0L…`, `0P…` | 403 |
  /// | `23503`, `23505` | 409 |
  /// | `25006` | 405 |
  /// | `21000` | 400 if the message ends "requires a WHERE clause" (pg-safeupdate), else 500 |
  /// | `22023` | 401 if the message is "role … does not exist" (the JWT's role), else 400 |
  /// | `25…`, `2D…`, `38…`, `39…`, `3B…`, `40…` | 500 |
  /// | `28…` | 403 |
  /// | `53400` | 500; other `53…` 503 |
  /// | `54…` | 500 (413 before PostgREST 12.2, PostgREST#3255) |
  /// | `55…` | 500 |
  /// | `57P01` | 503; other `57…` 500 |
  /// | `58…`, `F0…`, `HV…`, `XX…` | 500 |
  /// | `P0001` | 400; other `P0…` 500 |
  /// | `42883` | 404 (406 for `function xmlagg(`…) |
  /// | `42P01` | 404 |
  /// | `42P17` | 500 |
  /// | `42501` | 403 when the request's role is not the anonymous one, else 401 |
  /// | `PTnnn` | nnn (`RAISE SQLSTATE 'PT402'`), 500 when not a status |
  /// | any other | 400 |
  ///
  /// - Parameters:
  ///   - sqlState: the five-character SQLSTATE.
  ///   - message: the error's message (two rows of the table look at it).
  ///   - authenticated: whether the request ran as a role other than the anonymous one.
  /// - Returns: the HTTP status.
  public static func httpStatus(sqlState: String, message: String, authenticated: Bool) -> Int {
    let state = Array(sqlState)
    let prefix = String(state.prefix(2))
    switch sqlState {
    case "23503", "23505": return 409
    case "25006": return 405
    case "21000": return message.hasSuffix("requires a WHERE clause") ? 400 : 500
    case "22023": return message.hasPrefix("role") && message.hasSuffix("does not exist") ? 401 : 400
    case "53400": return 500
    case "57P01": return 503
    case "P0001": return 400
    case "42883": return message.hasPrefix("function xmlagg(") ? 406 : 404
    case "42P01": return 404
    case "42P17": return 500
    case "42501": return authenticated ? 403 : 401
    default: break
    }
    switch prefix {
    case "08": return 503
    case "09": return 500
    case "0L", "0P": return 403
    case "25", "2D", "38", "39", "3B", "40": return 500
    case "28": return 403
    case "53": return 503
    case "54", "55", "57", "58", "F0", "HV", "P0", "XX": return 500
    case "PT":
      let digits = String(state.dropFirst(2))
      guard let status = Int(digits), (100...599).contains(status) else { return 500 }
      return status
    default: return 400
    }
  }

  /// The answer PostgREST gives for `error`, a failure of a statement of the request.
  ///
  /// A server error keeps its SQLSTATE, message, detail and hint, with the status of
  /// ``httpStatus(sqlState:message:authenticated:)``; `RAISE SQLSTATE 'PGRST'` with a JSON message
  /// (`code`, `message`, `details`, `hint`) and a JSON detail (`status`, `headers`) gives that
  /// status and body (docs: "Errors", "Raise errors with HTTP Status Codes"; an unparsable one is
  /// `PGRST121`, 500). A lost connection is `PGRST001` (503, "Database client error. Retrying the
  /// connection."), one that cannot be made `PGRST000` (503, "Database connection error.").
  static func from(_ error: PostgresError, authenticated: Bool) -> PostgRESTError {
    switch error.kind {
    case .connect:
      return PostgRESTError(
        status: 503, code: "PGRST000", message: "Database connection error.", details: error.message)
    case .connectionLost, .timeout:
      return PostgRESTError(
        status: 503, code: "PGRST001", message: "Database client error. Retrying the connection.",
        details: error.message)
    case .invalidInput, .unexpectedResult:
      return PostgRESTError(status: 500, code: "PGRSTX00", message: error.message)
    case .server:
      break
    }
    guard let sqlState = error.sqlState else {
      return PostgRESTError(status: 500, code: "PGRSTX00", message: error.message)
    }
    if sqlState == "PGRST" { return raised(message: error.message, detail: error.detail) }
    return PostgRESTError(
      status: httpStatus(sqlState: sqlState, message: error.message, authenticated: authenticated),
      code: sqlState,
      message: error.message, details: error.detail, hint: error.hint)
  }

  /// `RAISE SQLSTATE 'PGRST' USING message = '{"code":…}', detail = '{"status":…,"headers":{}}'`.
  private static func raised(message: String, detail: String?) -> PostgRESTError {
    func object(_ text: String?) -> [String: Any]? {
      guard let text else { return nil }
      return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
    guard let body = object(message), let code = body["code"] as? String,
      let text = body["message"] as? String
    else {
      return PostgRESTError(
        status: 500, code: "PGRST121",
        message: "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
        details: "Invalid JSON value for MESSAGE: '\(message)'",
        hint:
          "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'."
      )
    }
    guard let status = object(detail)?["status"] as? Int else {
      return PostgRESTError(
        status: 500, code: "PGRST121",
        message: "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
        details: detail.map { "Invalid JSON value for DETAIL: '\($0)'" }
          ?? "DETAIL is missing in the RAISE statement",
        hint:
          "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'."
      )
    }
    return PostgRESTError(
      status: status, code: code, message: text, details: body["details"] as? String,
      hint: body["hint"] as? String)
  }
}
