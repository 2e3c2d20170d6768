import EventLog
import Foundation
import RestaurantBooking
import Synchronization
import TestKit
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Quick mode (the default, for CI) or full mode (`EVENTLOG_FULL=1`).
enum HardeningMode {
  static let full = ProcessInfo.processInfo.environment["EVENTLOG_FULL"] == "1"

  /// `quick` normally, `full` with `EVENTLOG_FULL=1`.
  static func pick<T>(quick: T, full: T) -> T { Self.full ? full : quick }
}
extension EventStore.Options {
  /// No flush per commit: the hardening tests never test power loss.
  static var hardening: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 4 << 20
    return options
  }
}

/// Opens a store with the domain's projections.
func openDomainStore(_ path: String) throws -> EventStore {
  try EventStore(path: path, projections: RestaurantBookingSchema.projections, options: .hardening)
}

/// Closes a store (``EventStore/close()``) and drops it (LMDB must not have one environment open
/// twice in a process), so it can be reopened or its files changed.
func release(_ store: inout EventStore?) async {
  await store?.close()
  store = nil
}

// MARK: - The eventlog binary as a child process
/// Runs the built `eventlog` executable, as a user would, in a child process (a crash shows as a
/// signal, not as the end of the test run).
enum EventLogBinary {
  /// The executable next to the test bundle (`<scratch>/debug/eventlog`), or `$EVENTLOG_BINARY`.
  static let path = builtProduct("eventlog", override: "EVENTLOG_BINARY")

  /// Runs `eventlog arguments…`; with `umask`, through `/bin/sh -c 'umask U; exec eventlog …'`.
  static func run(
    _ arguments: [String], environment: [String: String] = [:], umask mask: String? = nil,
    in directory: String? = nil
  ) throws -> ChildRun {
    var executable = path
    var argv = arguments
    if let mask {
      executable = "/bin/sh"
      argv = ["-c", "umask \(mask); exec \"$0\" \"$@\"", path] + arguments
    }
    return try runChild(executable, argv, environment: environment, in: directory)
  }
}

// MARK: - Bytes

/// The offsets of every occurrence of `needle` in `haystack`.
func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
  guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
  var found: [Int] = []
  let first = needle[0]
  var index = 0
  let last = haystack.count - needle.count
  while index <= last {
    if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) {
      found.append(index)
    }
    index += 1
  }
  return found
}

/// Peak resident set size of this process, in bytes (`getrusage`, Linux reports KiB).
func peakRSSBytes() -> Int {
  var usage = rusage()
  #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
    getrusage(RUSAGE_SELF, &usage)
  #endif
  return Int(usage.ru_maxrss) * 1024
}
/// A restaurant source whose snapshot (or failure) the test sets.
final class InMemoryRestaurantSource: RestaurantSource {
  private let state = Mutex<Result<[RemoteRestaurant], RestaurantSyncError>>(.success([]))

  var sourceDescription: String { "memory" }

  func set(_ rows: [RemoteRestaurant]) { state.withLock { $0 = .success(rows) } }
  func fail(_ error: RestaurantSyncError) { state.withLock { $0 = .failure(error) } }

  func fetchAll() async throws -> [RemoteRestaurant] {
    try state.withLock { $0 }.get()
  }
}
