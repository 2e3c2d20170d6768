import CCurl
import Foundation
import Synchronization

/// A small HTTP client over libcurl that never holds more of a body than it will accept.
///
/// `URLSession` on Linux (FoundationNetworking) hands body data to its delegate queue and keeps
/// reading after a cancel, so a refused body can still be drained into memory; libcurl's write
/// callback runs on the transfer's own thread and ends the transfer the moment it returns short.
///
/// Each exchange runs `curl_easy_perform` on a thread of its own (never on the cooperative pool)
/// and is bounded in every direction: only `http` and `https`, no redirect followed, a timeout on
/// the whole exchange, a body cap checked against `Content-Length` before reading and against every
/// byte while reading, no content decoding (so no decompression bomb), and cancellation through
/// the calling task.
public enum HTTPClient {
  /// Sends a `GET` and returns the answer, whatever its status.
  /// - Parameter request: the URL, headers and bounds.
  /// - Throws: ``HTTPError``: `bodyTooLarge`, `timedOut`, `cancelled` (the task was cancelled),
  ///   `invalidRequest` or `transport`.
  /// - Returns: the status, the whole body and, for a redirect, the URL it names (not followed).
  /// - Complexity: O(n) in the body's length; memory at most the cap plus one network read.
  public static func get(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
    try validate(request)
    let cancellation = CancellationFlag()
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>) in
        let thread = Thread {
          continuation.resume(returning: Transfer(request: request, cancellation: cancellation).perform())
        }
        thread.name = "HTTPClient"
        thread.start()
      }
    } onCancel: {
      cancellation.cancel()
    }
    return try result.get()
  }

  /// Refuses what libcurl must never be asked: another scheme, a header that would split lines.
  static func validate(_ request: HTTPRequest) throws(HTTPError) {
    let scheme = request.url.scheme?.lowercased()
    guard scheme == "http" || scheme == "https" else {
      throw .invalidRequest("only http:// and https:// URLs are supported")
    }
    guard request.maximumBodyBytes >= 0 else { throw .invalidRequest("maximumBodyBytes is negative") }
    guard request.timeout > .zero else { throw .invalidRequest("the timeout is not positive") }
    for header in request.headers {
      let isToken =
        !header.name.isEmpty && header.name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
      guard isToken else {
        throw .invalidRequest("the header name \"\(header.name)\" is not a valid field name")
      }
      guard !header.value.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) else {
        throw .invalidRequest("the value of header \(header.name) contains a line break or NUL")
      }
    }
  }
}

/// Set by the calling task's cancellation handler, polled by the transfer's progress callback.
final class CancellationFlag: Sendable {
  private let flag = Atomic<Bool>(false)

  func cancel() { flag.store(true, ordering: .relaxed) }

  var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
