import EventLog
import Foundation

/// Why a refresh of the restaurant catalog failed. Nothing was appended.
///
/// Descriptions name the page (its offset), the row (its index in the snapshot and its ID) and
/// the field; they never contain the API key, and URLs in them carry no credentials or query.
public enum RestaurantSyncError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The URL is not allowed: `http://` for a host that is not loopback, or another scheme.
  case insecureURL(String, reason: String)
  /// The server redirected where the client will not follow (carrying the key off the host,
  /// or to plain `http://` off loopback).
  case redirectRefused(to: String)
  /// The server answered a page with a non-2xx status; `message` is PostgREST's `message`.
  case httpStatus(Int, message: String?, offset: Int)
  /// A page (or the file's body) is not a JSON array of objects.
  case malformedPage(offset: Int, reason: String)
  /// A row with a missing, mistyped or invalid field; `index` counts from 0 across pages.
  case invalidRow(index: Int, id: String?, field: String, reason: String)
  /// The same ID on two rows of the snapshot.
  case duplicateID(UUID, index: Int, firstIndex: Int)
  /// A page's body is larger than the client accepts.
  case responseTooLarge(limit: Int, offset: Int)
  /// The snapshot has more rows than the client accepts.
  case tooManyRows(limit: Int)
  /// The server did not answer a page in time.
  case timeout(seconds: Double, offset: Int)
  /// The whole catalog did not arrive within the overall deadline (`pages` and `rows` had).
  case deadlineExceeded(seconds: Double, pages: Int, rows: Int)
  /// The connection failed.
  case transport(reason: String, offset: Int)
  /// The file (or standard input) could not be read.
  case unreadableInput(path: String, reason: String)
  /// Other refreshes kept changing the catalog between the read and the append.
  case catalogChangedConcurrently(attempts: Int)

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// What failed, naming the page, row and field concerned, without credentials.
  public var description: String {
    switch self {
    case .insecureURL(let url, let reason):
      "refusing \(url): \(reason)"
    case .redirectRefused(let url):
      "refusing to follow a redirect to \(url)"
    case .httpStatus(let status, let message, let offset):
      "the server answered HTTP \(status) for the page at offset \(offset)"
        + (message.map { ": \($0)" } ?? "")
    case .malformedPage(let offset, let reason):
      "the page at offset \(offset) is not a JSON array of rows: \(reason)"
    case .invalidRow(let index, let id, let field, let reason):
      "row \(index)\(id.map { " (id \($0))" } ?? ""): field '\(field)' \(reason)"
    case .duplicateID(let id, let index, let firstIndex):
      "row \(index) (id \(id.lowercasedString)): duplicate id, first seen at row \(firstIndex)"
    case .responseTooLarge(let limit, let offset):
      "the page at offset \(offset) is larger than the limit of \(limit) bytes"
    case .tooManyRows(let limit):
      "the catalog has more than \(limit) rows"
    case .timeout(let seconds, let offset):
      "the server did not answer the page at offset \(offset) within \(seconds) s"
    case .deadlineExceeded(let seconds, let pages, let rows):
      "the catalog did not arrive within the deadline of \(seconds) s (\(pages) pages, \(rows) rows so far)"
    case .transport(let reason, let offset):
      "fetching the page at offset \(offset) failed: \(reason)"
    case .unreadableInput(let path, let reason):
      "cannot read \(path): \(reason)"
    case .catalogChangedConcurrently(let attempts):
      "the restaurant catalog kept changing during the refresh (\(attempts) attempts)"
    }
  }
}
