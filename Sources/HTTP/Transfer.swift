import CCurl
import Foundation

/// One libcurl easy transfer: the handle's options, the body it collects, and the mapping of
/// libcurl's outcome to ``HTTPResponse`` or ``HTTPError``. Created and used on one thread.
final class Transfer {
  private let request: HTTPRequest
  private let cancellation: CancellationFlag
  /// The body received so far; never longer than `request.maximumBodyBytes`.
  private var body = Data()
  /// Set when the write callback refused bytes past the cap.
  private var overCap = false
  /// The header fields of the response so far (reset by each status line, so an interim
  /// `100 Continue`'s fields do not stay).
  private var responseHeaders: [HTTPHeader] = []
  /// The bytes of header lines received so far, bounded by ``maximumHeaderBytes``.
  private var headerBytes = 0
  /// Set when the header callback refused a line past ``maximumHeaderBytes``.
  private var headersOverCap = false

  /// The most bytes of response header lines kept for one exchange.
  static let maximumHeaderBytes = 64 << 10

  init(request: HTTPRequest, cancellation: CancellationFlag) {
    self.request = request
    self.cancellation = cancellation
  }

  /// libcurl's global state, set up once per process (`curl_global_init` is not thread-safe
  /// against other libcurl calls; a `static let` runs it exactly once, before any transfer).
  private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

  /// Runs the exchange to its end on the calling thread.
  func perform() -> Result<HTTPResponse, HTTPError> {
    guard Self.globalInit == CURLE_OK else {
      return .failure(
        .transport(code: Int(Self.globalInit.rawValue), message: "libcurl could not initialize"))
    }
    // The error buffer and the header list must outlive the handle (libcurl may use them until
    // `curl_easy_cleanup`): they are created first, so their deferred frees run after it.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    defer { errorBuffer.deallocate() }
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    var headers: UnsafeMutablePointer<curl_slist>?
    defer { curl_slist_free_all(headers) }
    var lines = request.headers.map { header in
      // An empty value needs libcurl's "Name;" form; "Name:" would remove the header.
      header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
    }
    // libcurl asks a server for `100 Continue` before a larger body and waits up to a second for
    // it; "Expect:" (no value) turns that off, unless the caller chose an Expect of its own.
    if request.method == .post && !request.headers.contains(where: { $0.name.lowercased() == "expect" }) {
      lines.append("Expect:")
    }
    for line in lines {
      guard let appended = curl_slist_append(headers, line) else {
        return .failure(.transport(code: -1, message: "libcurl could not allocate the headers"))
      }
      headers = appended
    }
    // The request body, which libcurl reads from this buffer during the transfer (so it outlives
    // the handle, like the header list); one byte more, so that an empty body has an address.
    let requestBody = UnsafeMutableRawBufferPointer.allocate(byteCount: request.body.count + 1, alignment: 1)
    defer { requestBody.deallocate() }
    requestBody.initializeMemory(as: UInt8.self, repeating: 0)
    _ = request.body.copyBytes(to: requestBody.bindMemory(to: UInt8.self))
    guard let handle = curl_easy_init() else {
      return .failure(.transport(code: -1, message: "libcurl could not create a transfer"))
    }
    defer { curl_easy_cleanup(handle) }

    let context = Unmanaged.passUnretained(self).toOpaque()
    // Clamped: a timeout of centuries must not trap in the conversion to a C long.
    let timeoutMilliseconds = Int(min(max(request.timeout / .milliseconds(1), 1), Double(Int32.max)))
    var options: [CURLcode] = [
      ccurl_setopt_string(handle, CURLOPT_URL, request.url.absoluteString),
      ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
      ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
      ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
      ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds),
      ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMilliseconds),
      ccurl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maximumBodyBytes)),
      ccurl_setopt_list(handle, CURLOPT_HTTPHEADER, headers),
      ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
      ccurl_setopt_write_callback(handle, Self.write),
      ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
      ccurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
      ccurl_setopt_progress_callback(handle, Self.progress),
      ccurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context),
      ccurl_setopt_header_callback(handle, Self.header),
      ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
    ]
    switch request.method {
    case .get:
      options.append(ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1))
    case .post:
      // With CURLOPT_POSTFIELDS set (never NULL, which would make libcurl read standard input) and
      // its size given, libcurl sends exactly these bytes with a Content-Length.
      options.append(ccurl_setopt_long(handle, CURLOPT_POST, 1))
      options.append(ccurl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
      options.append(ccurl_setopt_pointer(handle, CURLOPT_POSTFIELDS, requestBody.baseAddress))
    }
    if !request.usesEnvironmentProxy { options.append(ccurl_setopt_string(handle, CURLOPT_NOPROXY, "*")) }
    if let failed = options.first(where: { $0 != CURLE_OK }) {
      return .failure(.transport(code: Int(failed.rawValue), message: Self.message(failed, errorBuffer)))
    }

    let code = withExtendedLifetime(self) { curl_easy_perform(handle) }
    switch code {
    case CURLE_OK:
      var status = 0
      _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
      var redirect: UnsafeMutablePointer<CChar>?
      var redirectURL: URL?
      if (300..<400).contains(status),
        ccurl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK,
        let redirect
      {
        redirectURL = URL(string: String(cString: redirect))
      }
      return .success(
        HTTPResponse(status: status, body: body, redirectURL: redirectURL, headers: responseHeaders))
    case CURLE_WRITE_ERROR where headersOverCap:
      return .failure(
        .transport(
          code: Int(code.rawValue),
          message: "the response headers are larger than \(Self.maximumHeaderBytes) bytes"
        ))
    case CURLE_WRITE_ERROR where overCap, CURLE_FILESIZE_EXCEEDED:
      return .failure(.bodyTooLarge(limit: request.maximumBodyBytes))
    case CURLE_OPERATION_TIMEDOUT:
      return .failure(.timedOut)
    case CURLE_ABORTED_BY_CALLBACK where cancellation.isCancelled:
      return .failure(.cancelled)
    default:
      return .failure(.transport(code: Int(code.rawValue), message: Self.message(code, errorBuffer)))
    }
  }

  /// libcurl's detailed message for the last failure, or its generic one for `code`.
  private static func message(_ code: CURLcode, _ errorBuffer: UnsafeMutablePointer<CChar>) -> String {
    let detailed = String(cString: errorBuffer)
    return detailed.isEmpty ? String(cString: curl_easy_strerror(code)) : detailed
  }

  /// libcurl's write callback: appends to the body, or returns short (ending the transfer with
  /// `CURLE_WRITE_ERROR`) at the first byte past the cap.
  private static let write: ccurl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return 0 }
    guard transfer.body.count + length <= transfer.request.maximumBodyBytes else {
      transfer.overCap = true
      return 0
    }
    transfer.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
    return length
  }

  /// libcurl's header callback, once per header line of every response (interim ones included):
  /// keeps the fields of the last response, within ``maximumHeaderBytes``.
  private static let header: ccurl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    transfer.headerBytes += length
    guard transfer.headerBytes <= Transfer.maximumHeaderBytes else {
      transfer.headersOverCap = true
      return 0
    }
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    transfer.addHeaderLine(String(decoding: bytes, as: UTF8.self))
    return length
  }

  /// Adds one header line: a status line starts a new response, a line that starts with a space or
  /// a tab continues the previous field (obsolete line folding), any other is `name: value`.
  private func addHeaderLine(_ raw: String) {
    let line = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\r\n"))
    if line.hasPrefix("HTTP/") {
      responseHeaders.removeAll()
    } else if line.first == " " || line.first == "\t" {
      if var last = responseHeaders.popLast() {
        last.value += " " + line.trimmingCharacters(in: .whitespaces)
        responseHeaders.append(last)
      }
    } else if let colon = line.firstIndex(of: ":") {
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      responseHeaders.append(HTTPHeader(String(line[..<colon]), value))
    }
  }

  /// libcurl's progress callback, called often during a transfer and about once a second while it
  /// waits: a non-zero answer aborts the transfer once the calling task is cancelled.
  private static let progress: ccurl_progress_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().cancellation.isCancelled ? 1 : 0
  }
}
