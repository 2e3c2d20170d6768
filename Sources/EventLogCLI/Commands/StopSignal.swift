import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT and SIGTERM as a flag that live work asks between batches, instead of the default
/// (ending the process at once).
// @unchecked Sendable: `sources` is set once in `init` and only read afterwards (to cancel them);
// dispatch sources are thread-safe, and the flag is atomic.
final class StopSignal: @unchecked Sendable {
  private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
  }

  private let flag = Flag()
  private let sources: [any DispatchSourceSignal]

  /// Catches SIGINT and SIGTERM from now on, until ``restore()``.
  init() {
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { [flag] in flag.value.store(true, ordering: .relaxed) }
      source.resume()
      sources.append(source)
    }
    self.sources = sources
  }

  /// Whether a signal came.
  var isStopped: Bool { flag.value.load(ordering: .relaxed) }

  /// Gives the signals back their default action.
  func restore() {
    for source in sources { source.cancel() }
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
  }
}
