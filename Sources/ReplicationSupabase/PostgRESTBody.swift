import EventLog
import Foundation

/// The bodies PostgREST answers `eventlog_api`'s functions with, read as rows of text columns:
/// a set-returning function's JSON array of objects (keys the result columns' names), a scalar
/// function's JSON value, and an error's `{"code", "message", "details", "hint"}`.
///
/// Every body is read by the package's one JSON reader (`JSONNode.parse`, which validates it as
/// RFC 8259 first with `StrictJSON`) and keeps a number's digits as written (a `recorded_at_us` of
/// the year 9999 is past what a `Double` holds exactly). Its DTOs stay in this file.
enum PostgRESTBody {
  /// One column's JSON value as text: a string as it is, a number or a boolean as written, `nil`
  /// for `null`, and ``other`` for an array or an object (which no column of the functions holds).
  enum Column: Sendable, Equatable {
    case null
    case text(String)
    case other

    init(_ node: JSONNode) {
      switch node.value {
      case .null: self = .null
      case .string(let text), .literal(let text): self = .text(text)
      case .array, .object: self = .other
      }
    }

    /// The text, or `nil` for `null` or a container.
    var text: String? {
      if case .text(let text) = self { return text }
      return nil
    }
  }

  /// A row: its columns by name.
  typealias Row = [String: Column]

  /// Why a body is not what the function answers.
  struct Malformed: Error {
    var reason: String
  }

  /// The rows of a set-returning function's answer.
  /// - Throws: ``Malformed`` when the body is not valid JSON or not an array of objects.
  static func rows(_ body: Data) throws(Malformed) -> [Row] {
    let node = try parse(body)
    guard let items = node.items else {
      throw Malformed(reason: "the answer is not a JSON array of objects (it is \(node.summary))")
    }
    var rows: [Row] = []
    rows.reserveCapacity(items.count)
    for (index, item) in items.enumerated() {
      guard let members = item.members else {
        throw Malformed(
          reason: "the answer is not a JSON array of objects (its element \(index) is \(item.summary))")
      }
      rows.append(members.mapValues(Column.init))
    }
    return rows
  }

  /// The one row of a function that answers a single row (`RETURNS TABLE` of one row).
  /// - Throws: ``Malformed`` unless the body is an array of exactly one object.
  static func onlyRow(_ body: Data) throws(Malformed) -> Row {
    let rows = try rows(body)
    guard rows.count == 1, let row = rows.first else {
      throw Malformed(reason: "the answer has \(rows.count) rows where one was expected")
    }
    return row
  }

  /// A scalar function's answer as text (a number's digits).
  /// - Throws: ``Malformed`` unless the body is a JSON string, number or boolean.
  static func scalar(_ body: Data) throws(Malformed) -> String {
    guard let text = Column(try parse(body)).text else {
      throw Malformed(reason: "the answer is not a single value")
    }
    return text
  }

  private static func parse(_ body: Data) throws(Malformed) -> JSONNode {
    do {
      return try JSONNode.parse(body)
    } catch {
      throw Malformed(reason: "the answer is not valid JSON (\(error))")
    }
  }

  /// An error body's fields: PostgREST's `{"code", "message", "details", "hint"}`, or a gateway's
  /// `{"message", "hint"}` (or `{"msg"}`, or `{"error", "error_description"}`) without a code.
  struct ErrorBody: Sendable, Equatable {
    /// PostgREST's `code`: a SQLSTATE or `PGRST…`.
    var code: String?
    /// The message, with the details and the hint after it.
    var text: String?
  }

  /// The error fields of `body`, or empty ones when it is not a JSON object (an HTML page).
  static func error(_ body: Data) -> ErrorBody {
    guard let row = (try? JSONNode.parse(body))?.members?.mapValues(Column.init) else { return ErrorBody() }
    let parts = [
      row["message"]?.text ?? row["msg"]?.text ?? row["error_description"]?.text ?? row["error"]?.text,
      row["details"]?.text, row["hint"]?.text,
    ]
    let text = parts.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "; ")
    return ErrorBody(code: row["code"]?.text, text: text.isEmpty ? nil : text)
  }
}
