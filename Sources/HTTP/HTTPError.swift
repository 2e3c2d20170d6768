import Foundation

/// Why an ``HTTPClient`` exchange produced no response. Never contains a request header's value
/// (a header is named by its position, or by its name when that is a valid field name).
public enum HTTPError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The body was larger than the request's `maximumBodyBytes` (declared or as it arrived).
  case bodyTooLarge(limit: Int)
  /// The exchange took longer than the request's `timeout`.
  case timedOut
  /// The calling task was cancelled.
  case cancelled
  /// The request cannot be sent as given: the reason names the part at fault.
  case invalidRequest(String)
  /// The connection or the protocol failed: libcurl's code and message (for example a refused
  /// connection, a TLS failure, or a body cut short).
  case transport(code: Int, message: String)

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// What failed, in one sentence: `the request timed out`.
  public var description: String {
    switch self {
    case .bodyTooLarge(let limit): "the response body is larger than \(limit) bytes"
    case .timedOut: "the request timed out"
    case .cancelled: "the request was cancelled"
    case .invalidRequest(let reason): "invalid request: \(reason)"
    case .transport(let code, let message): "\(message) (curl \(code))"
    }
  }
}
