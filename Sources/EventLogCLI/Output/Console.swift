import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc  // isatty
#elseif canImport(Darwin)
  import Darwin
#endif

/// Standard output (buffered), standard error and standard input of a command.
public final class Console: Sendable {
  private let buffer = Mutex<[UInt8]>([])
  /// Whether standard error is a terminal (progress is shown only then).
  public let errorIsTerminal: Bool
  /// Where standard error goes instead of file descriptor 2 (tests).
  private let errorSink: (@Sendable ([UInt8]) -> Void)?

  /// The process's own streams.
  public init() {
    errorIsTerminal = isatty(2) != 0
    errorSink = nil
  }

  /// A console whose standard error goes to `errorSink`, as if it were a terminal or not (for
  /// tests of progress output).
  init(errorIsTerminal: Bool, errorSink: @escaping @Sendable ([UInt8]) -> Void) {
    self.errorIsTerminal = errorIsTerminal
    self.errorSink = errorSink
  }

  /// Writes `text` to standard output (buffered; see ``flush()``).
  public func print(_ text: String, terminator: String = "\n") {
    let full = buffer.withLock { bytes -> [UInt8]? in
      bytes.append(contentsOf: text.utf8)
      bytes.append(contentsOf: terminator.utf8)
      guard bytes.count >= 1 << 16 else { return nil }
      defer { bytes.removeAll(keepingCapacity: true) }
      return bytes
    }
    if let full { Self.writeAll(full, to: 1) }
  }

  /// Writes what is buffered to standard output.
  public func flush() {
    let bytes = buffer.withLock { bytes -> [UInt8] in
      defer { bytes.removeAll(keepingCapacity: true) }
      return bytes
    }
    if !bytes.isEmpty { Self.writeAll(bytes, to: 1) }
  }

  /// Writes a line to standard error at once.
  public func error(_ text: String, terminator: String = "\n") {
    let bytes = Array((text + terminator).utf8)
    if let errorSink { errorSink(bytes) } else { Self.writeAll(bytes, to: 2) }
  }

  /// Reads all of standard input.
  /// - Throws: ``InputError`` naming standard input and the cause.
  public func readInput() throws -> Data {
    try InputReader.read("-")
  }

  private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    let handle = descriptor == 2 ? FileHandle.standardError : FileHandle.standardOutput
    // A closed pipe (`eventlog log | head`) ends the output; there is nothing more to do.
    try? handle.write(contentsOf: Data(bytes))
  }
}

/// Shows progress of long work on standard error: rate and estimated time left, only when
/// standard error is a terminal and the work has run for more than a second (by default), at most
/// five lines a second, each overwriting the last (`\r` … erase to end of line).
public final class ProgressReporter: Sendable {
  private let console: Console
  private let label: String
  private let clock = ContinuousClock()
  private let start: ContinuousClock.Instant
  private let delay: Duration
  private let interval: Duration
  private let state = Mutex<(lastShown: ContinuousClock.Instant?, shown: Bool)>((nil, false))

  /// Starts reporting `label`.
  /// - Parameters:
  ///   - delay: how long the work must have run before the first line (short work shows none).
  ///   - interval: the shortest time between two lines.
  public init(
    _ label: String, console: Console, delay: Duration = .seconds(1), interval: Duration = .milliseconds(200)
  ) {
    self.console = console
    self.label = label
    self.delay = delay
    self.interval = interval
    self.start = ContinuousClock().now
  }

  /// Reports that `completed` of `total` items are done.
  public func update(completed: UInt64, total: UInt64) {
    guard console.errorIsTerminal else { return }
    let now = clock.now
    let elapsed = now - start
    guard elapsed >= delay else { return }
    let show = state.withLock { state -> Bool in
      if let last = state.lastShown, now - last < interval { return false }
      state.lastShown = now
      state.shown = true
      return true
    }
    guard show else { return }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let rate = seconds > 0 ? Double(completed) / seconds : 0
    let left = rate > 0 && total > completed ? Double(total - completed) / rate : 0
    let percent = total > 0 ? Double(completed) * 100 / Double(total) : 100
    console.error(
      "\r\(label): \(completed)/\(total) (\(Int(percent))%), \(Formatting.rate(rate))/s, about \(Formatting.duration(left)) left\u{1B}[K",
      terminator: "")
  }

  /// Ends the progress line.
  public func finish() {
    if state.withLock({ $0.shown }) { console.error("") }
  }
}

/// Number formatting for human output.
public enum Formatting {
  /// `1.23 M`, `456.7 k`, `89`.
  public static func rate(_ value: Double) -> String {
    if value >= 1e6 { return String(format: "%.2f M", value / 1e6) }
    if value >= 1e3 { return String(format: "%.1f k", value / 1e3) }
    return String(format: "%.0f", value)
  }

  /// `3 s`, `2 min 5 s`.
  public static func duration(_ seconds: Double) -> String {
    if seconds < 60 { return "\(Int(seconds.rounded(.up))) s" }
    return "\(Int(seconds) / 60) min \(Int(seconds) % 60) s"
  }

  /// `12.3 MiB`.
  public static func bytes(_ count: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    return unit == 0 ? "\(count) B" : String(format: "%.1f", value) + " " + units[unit]
  }
}
