import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc  // isatty
#elseif canImport(Darwin)
  import Darwin
#endif

/// Standard output (buffered), standard error and standard input of a command.
///
/// Every write to standard output is checked: the first that fails (a full disk, a closed
/// descriptor) is remembered, later output is dropped, ``checkOutput()`` throws from then on so
/// that long work can stop, and ``finish(_:)`` reports it as
/// `Error: cannot write standard output: …` and turns the exit status into 1. A command cannot
/// forget to check: the program calls ``finish(_:)`` after every command.
public final class Console: Sendable {
  private struct Output {
    var bytes: [UInt8] = []
    /// Why a write to standard output failed, once one did.
    var failure: StandardOutputError?
    /// Whether ``finish(_:)`` has reported the failure.
    var reported = false
  }

  private let output = Mutex(Output())
  /// Whether standard error is a terminal (progress is shown only then).
  public let errorIsTerminal: Bool
  /// Whether standard output is a terminal (`log` then shows the newest page, not the whole log).
  public let outputIsTerminal: Bool
  /// Where standard error goes instead of file descriptor 2 (tests).
  private let errorSink: (@Sendable ([UInt8]) -> Void)?
  /// Where standard output goes instead of file descriptor 1 (tests); a throw is a failed write.
  private let outputSink: (@Sendable ([UInt8]) throws -> Void)?

  /// The process's own streams.
  public init() {
    errorIsTerminal = isatty(2) != 0
    outputIsTerminal = isatty(1) != 0
    errorSink = nil
    outputSink = nil
  }

  /// A console whose standard error goes to `errorSink`, as if it were a terminal or not, and
  /// whose standard output goes to `outputSink` when one is given (for tests).
  init(
    errorIsTerminal: Bool, errorSink: @escaping @Sendable ([UInt8]) -> Void,
    outputSink: (@Sendable ([UInt8]) throws -> Void)? = nil, outputIsTerminal: Bool = false
  ) {
    self.errorIsTerminal = errorIsTerminal
    self.outputIsTerminal = outputIsTerminal
    self.errorSink = errorSink
    self.outputSink = outputSink
  }

  /// Writes `text` to standard output (buffered; see ``flush()``). After a failed write, output
  /// is dropped.
  public func print(_ text: String, terminator: String = "\n") {
    output.withLock { output in
      guard output.failure == nil else { return }
      output.bytes.append(contentsOf: text.utf8)
      output.bytes.append(contentsOf: terminator.utf8)
      if output.bytes.count >= 1 << 16 { write(&output) }
    }
  }

  /// Writes what is buffered to standard output.
  public func flush() {
    output.withLock { write(&$0) }
  }

  /// Why standard output could not be written, once a write to it failed; `nil` until then.
  public var outputFailure: StandardOutputError? { output.withLock { $0.failure } }

  /// Throws once a write to standard output has failed: long work calls it to stop early.
  /// - Throws: ``StandardOutputError``, which ``finish(_:)`` reports.
  public func checkOutput() throws(StandardOutputError) {
    if let failure = outputFailure { throw failure }
  }

  /// Flushes standard output and, when a write to it failed, reports
  /// `Error: cannot write standard output: …` on standard error (once).
  /// - Returns: `status`, or 1 when a write to standard output failed and `status` was 0.
  public func finish(_ status: Int32) -> Int32 {
    flush()
    let unreported = output.withLock { output -> StandardOutputError? in
      guard let failure = output.failure, !output.reported else { return nil }
      output.reported = true
      return failure
    }
    if let unreported { error("Error: \(unreported)") }
    return outputFailure != nil && status == 0 ? 1 : status
  }

  /// Writes a line to standard error at once.
  public func error(_ text: String, terminator: String = "\n") {
    let bytes = Array((text + terminator).utf8)
    if let errorSink {
      errorSink(bytes)
    } else {
      // Nothing is left to tell the user if standard error itself cannot be written.
      try? FileHandle.standardError.write(contentsOf: Data(bytes))
    }
  }

  /// Reads all of standard input.
  /// - Throws: ``InputError`` naming standard input and the cause.
  public func readInput() throws -> Data {
    try InputReader.read("-")
  }

  /// Writes the buffered bytes, remembering the first failure; empties the buffer either way.
  private func write(_ output: inout Output) {
    defer { output.bytes.removeAll(keepingCapacity: true) }
    guard output.failure == nil, !output.bytes.isEmpty else { return }
    do {
      if let outputSink {
        try outputSink(output.bytes)
      } else if StandardStreams.wasClosed(1) {
        output.failure = StandardOutputError(reason: "it is closed")
      } else {
        // A closed pipe (`eventlog log | head`) raises SIGPIPE, which ends the process as it
        // ends any Unix filter; every other failure (a full disk, a closed descriptor) throws.
        try FileHandle.standardOutput.write(contentsOf: Data(output.bytes))
      }
    } catch {
      output.failure = StandardOutputError(reason: SystemErrorText.reason(of: error))
    }
  }
}

/// Standard output could not be written: exit status 1, whatever the command did.
public struct StandardOutputError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The system's reason, for example `No space left on device`.
  public var reason: String

  /// Creates the error.
  public init(reason: String) { self.reason = reason }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// `cannot write standard output: <reason>`.
  public var description: String { "cannot write standard output: \(reason)" }
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
  ///   - label: what the work is called, at the start of each line.
  ///   - console: the console whose standard error shows the lines.
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
    guard let seconds = shouldShow() else { return }
    let rate = seconds > 0 ? Double(completed) / seconds : 0
    let left = rate > 0 && total > completed ? Double(total - completed) / rate : 0
    let percent = total > 0 ? Double(completed) * 100 / Double(total) : 100
    console.error(
      "\r\(label): \(completed)/\(total) (\(Int(percent))%), \(Formatting.rate(rate))/s, about \(Formatting.duration(left)) left\u{1B}[K",
      terminator: "")
  }

  /// Reports that `completed` items are done, of a total not known yet (pages of a remote
  /// list): `label: 12000 rows, 3.4 k rows/s (12 pages)`.
  public func update(completed: UInt64, unit: String, detail: String = "") {
    guard let seconds = shouldShow() else { return }
    let rate = seconds > 0 ? Double(completed) / seconds : 0
    let suffix = detail.isEmpty ? "" : " (\(detail))"
    console.error(
      "\r\(label): \(completed) \(unit), \(Formatting.rate(rate)) \(unit)/s\(suffix)\u{1B}[K", terminator: "")
  }

  /// Whether a line is due now (a terminal, past the delay and the interval), and if so the
  /// seconds since the start.
  private func shouldShow() -> Double? {
    guard console.errorIsTerminal else { return nil }
    let now = clock.now
    let elapsed = now - start
    guard elapsed >= delay else { return nil }
    let show = state.withLock { state -> Bool in
      if let last = state.lastShown, now - last < interval { return false }
      state.lastShown = now
      state.shown = true
      return true
    }
    guard show else { return nil }
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
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
