import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
  private let systemWrite = Glibc.write
#elseif canImport(Darwin)
  import Darwin
  private let systemWrite = Darwin.write
#endif

/// Line output for a test harness reading through a pipe or a file: each line goes out in one
/// `write(2)` at once (no stdio buffer to lose on SIGKILL), under a lock so lines never interleave.
enum Output {
  private static let lock = Mutex(())

  /// Writes `text` and a newline to standard output, now.
  static func line(_ text: String) {
    write(text + "\n", to: STDOUT_FILENO)
  }

  /// Writes several lines to standard output in one write.
  static func lines(_ texts: [String]) {
    guard !texts.isEmpty else { return }
    write(texts.joined(separator: "\n") + "\n", to: STDOUT_FILENO)
  }

  /// Writes `error: text` to standard error.
  static func error(_ text: String) {
    write("error: \(text)\n", to: STDERR_FILENO)
  }

  private static func write(_ text: String, to descriptor: Int32) {
    lock.withLock { _ in
      var bytes = Array(text.utf8)[...]
      while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        bytes = bytes.dropFirst(written)
      }
    }
  }
}
