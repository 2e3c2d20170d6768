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
/// and is bounded in every direction: only `http` and `https`, no redirect followed (whatever the
/// method: a `POST` is never sent again anywhere), a timeout on the whole exchange, a body cap
/// checked against `Content-Length` before reading and against every byte while reading, response
/// headers kept up to 64 KiB, no content decoding (so no decompression bomb), and cancellation
/// through the calling task.
///
/// No error and no description repeats a request header's value (an API key, a bearer token):
/// ``HTTPError`` names a header by its position or its name, and ``HTTPRequest`` and
/// ``HTTPHeader`` print names only.
public enum HTTPClient {
  /// Sends `request` (a `GET` or a `POST` with its body) and returns the answer, whatever its
  /// status.
  /// - Parameter request: the method, URL, headers, body and bounds.
  /// - Throws: ``HTTPError``: `bodyTooLarge`, `timedOut`, `cancelled` (the task was cancelled),
  ///   `invalidRequest` (nothing was sent) or `transport` (the connection failed, or the server
  ///   closed it without a complete answer: a `POST` may then have been acted on or not).
  /// - Returns: the status, the headers, the whole body and, for a redirect, the URL it names (not
  ///   followed).
  /// - Complexity: O(n) in the bodies' lengths; memory at most the request body, the cap plus one
  ///   network read, and 64 KiB of headers.
  public static func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
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

  /// Sends a `GET` and returns the answer, whatever its status: ``send(_:)`` for a request whose
  /// method is `GET`.
  /// - Parameter request: the URL, headers and bounds; its method must be `GET` and its body empty.
  /// - Throws: ``HTTPError``: `bodyTooLarge`, `timedOut`, `cancelled` (the task was cancelled),
  ///   `invalidRequest` (also for another method) or `transport`.
  /// - Returns: the status, the headers, the whole body and, for a redirect, the URL it names (not
  ///   followed).
  /// - Complexity: O(n) in the body's length; memory at most the cap plus one network read.
  public static func get(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
    guard request.method == .get else {
      throw .invalidRequest("get(_:) sends GET requests only; send(_:) sends a \(request.method.rawValue)")
    }
    return try await send(request)
  }

  /// Refuses what libcurl must never be asked: another scheme, a header that would split lines, a
  /// body on a `GET`. The reasons name a header by its position (a name that is not a valid field
  /// name) or its valid name, never by its value.
  static func validate(_ request: HTTPRequest) throws(HTTPError) {
    let scheme = request.url.scheme?.lowercased()
    guard scheme == "http" || scheme == "https" else {
      throw .invalidRequest("only http:// and https:// URLs are supported")
    }
    guard request.maximumBodyBytes >= 0 else { throw .invalidRequest("maximumBodyBytes is negative") }
    guard request.timeout > .zero else { throw .invalidRequest("the timeout is not positive") }
    guard request.method == .post || request.body.isEmpty else {
      throw .invalidRequest("a \(request.method.rawValue) request has no body")
    }
    for (index, header) in request.headers.enumerated() {
      let isToken =
        !header.name.isEmpty && header.name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
      guard isToken else {
        // Not repeated: a misplaced "Authorization: Bearer …" line would carry its token here.
        throw .invalidRequest(
          "the name of header \(index + 1) of \(request.headers.count) is not a valid field name")
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
