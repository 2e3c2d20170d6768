import Foundation
import Synchronization
import Testing

@testable import EventLogCLI

/// Progress lines on standard error, through a console that records what it writes.
@Suite("Progress on a terminal")
struct ProgressTests {
  /// A console that records standard error, as a terminal or not.
  struct Recorder {
    /// What was written, shared with the console's sink.
    final class Written: Sendable {
      let bytes = Mutex<[UInt8]>([])
    }

    let written = Written()
    let console: Console

    init(terminal: Bool) {
      let written = self.written
      console = Console(errorIsTerminal: terminal) { bytes in written.bytes.withLock { $0 += bytes } }
    }

    var text: String { written.bytes.withLock { String(decoding: $0, as: UTF8.self) } }
  }

  @Test("on a terminal: one overwritable line with count, percent, rate and time left; a newline at the end")
  func terminal() {
    let recorder = Recorder(terminal: true)
    let progress = ProgressReporter(
      "verify", console: recorder.console, delay: .zero, interval: .seconds(3600))
    progress.update(completed: 250, total: 1000)
    progress.update(completed: 500, total: 1000)  // within the interval: not shown
    progress.finish()
    let text = recorder.text
    #expect(text.hasPrefix("\rverify: 250/1000 (25%), "), "\(text.debugDescription)")
    #expect(text.contains("/s, about "), "\(text.debugDescription)")
    #expect(text.hasSuffix(" left\u{1B}[K\n"), "\(text.debugDescription)")
    #expect(!text.contains("500/1000"))
    #expect(text.filter { $0 == "\r" }.count == 1)
  }

  @Test("paging with no known total: the count, the rate and a detail on one overwritable line")
  func unknownTotal() {
    let recorder = Recorder(terminal: true)
    let progress = ProgressReporter("sync", console: recorder.console, delay: .zero, interval: .seconds(3600))
    progress.update(completed: 3_000, unit: "rows", detail: "3 pages")
    progress.update(completed: 4_000, unit: "rows", detail: "4 pages")  // within the interval: not shown
    progress.finish()
    let text = recorder.text
    #expect(text.hasPrefix("\rsync: 3000 rows, "), "\(text.debugDescription)")
    #expect(text.hasSuffix(" rows/s (3 pages)\u{1B}[K\n"), "\(text.debugDescription)")
    #expect(!text.contains("4000"))
  }

  @Test("lines are spaced by the interval")
  func interval() async throws {
    let recorder = Recorder(terminal: true)
    let progress = ProgressReporter(
      "import", console: recorder.console, delay: .zero, interval: .milliseconds(20))
    progress.update(completed: 1, total: 3)
    try await Task.sleep(for: .milliseconds(40))
    progress.update(completed: 2, total: 3)
    progress.finish()
    #expect(recorder.text.contains("import: 1/3 (33%)"))
    #expect(recorder.text.contains("import: 2/3 (66%)"))
  }

  @Test("nothing when standard error is not a terminal, or before the delay")
  func silent() {
    let piped = Recorder(terminal: false)
    let progress = ProgressReporter("replay", console: piped.console, delay: .zero)
    progress.update(completed: 1, total: 2)
    progress.finish()
    #expect(piped.text.isEmpty)

    let early = Recorder(terminal: true)
    let short = ProgressReporter("replay", console: early.console, delay: .seconds(3600))
    short.update(completed: 1, total: 2)
    short.finish()
    #expect(early.text.isEmpty, "a line before the delay, or a newline without a line")
  }
}
