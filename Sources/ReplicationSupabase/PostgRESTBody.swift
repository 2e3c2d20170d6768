import EventLog
import Foundation

/// The bodies PostgREST answers `eventlog_api`'s functions with, read as rows of text columns:
/// a set-returning function's JSON array of objects (keys the result columns' names), a scalar
/// function's JSON value, and an error's `{"code", "message", "details", "hint"}`.
///
/// Every body is validated as RFC 8259 first (`StrictJSON`), then decoded with `JSONDecoder`,
/// which reads integers from their digits (a `recorded_at_us` of the year 9999 is past what a
/// `Double` holds exactly). Its DTOs stay in this file.
enum PostgRESTBody {
  /// One column's JSON value as text: a string as it is, a number or a boolean as written, `nil`
  /// for `null`, and ``other`` for an array or an object (which no column of the functions holds).
  enum Column: Decodable, Sendable, Equatable {
    case null
    case text(String)
    case other

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let text = try? container.decode(String.self) {
        self = .text(text)
      } else if let number = try? container.decode(Int64.self) {
        self = .text(String(number))
      } else if let number = try? container.decode(UInt64.self) {
        self = .text(String(number))
      } else if let number = try? container.decode(Double.self) {
        self = .text(String(number))
      } else if let flag = try? container.decode(Bool.self) {
        self = .text(flag ? "true" : "false")
      } else {
        self = .other
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
    do {
      try StrictJSON.validate(body)
    } catch {
      throw Malformed(reason: "the answer is not valid JSON (\(error))")
    }
    do {
      return try JSONDecoder().decode([Row].self, from: body)
    } catch {
      throw Malformed(reason: "the answer is not a JSON array of objects")
    }
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
    do {
      try StrictJSON.validate(body)
    } catch {
      throw Malformed(reason: "the answer is not valid JSON (\(error))")
    }
    guard let column = try? JSONDecoder().decode(Column.self, from: body), let text = column.text else {
      throw Malformed(reason: "the answer is not a single value")
    }
    return text
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
    guard (try? StrictJSON.validate(body)) != nil, let row = try? JSONDecoder().decode(Row.self, from: body)
    else {
      return ErrorBody()
    }
    let parts = [
      row["message"]?.text ?? row["msg"]?.text ?? row["error_description"]?.text ?? row["error"]?.text,
      row["details"]?.text, row["hint"]?.text,
    ]
    let text = parts.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "; ")
    return ErrorBody(code: row["code"]?.text, text: text.isEmpty ? nil : text)
  }
}
