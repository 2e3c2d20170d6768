import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Peak memory of a child process: `getrusage(RUSAGE_SELF).ru_maxrss`, after the set-up's peak has
/// been forgotten, and a sampled peak of anonymous (heap) memory.
///
/// `ru_maxrss` counts file pages mapped and touched, so every LMDB system's replay shows the
/// log's size in it; the anonymous peak (resident minus file-backed, sampled every millisecond)
/// shows what the process itself allocates.
enum MemoryProbe {
  /// glibc's `malloc_trim`, looked up at run time (Swift's Glibc module does not export it).
  private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
  }()

  /// Returns freed heap to the system and resets the kernel's high-water mark of resident memory
  /// to the current resident size (`/proc/self/clear_refs`, value 5), so that the peak measured
  /// next excludes the set-up.
  static func resetPeak() {
    _ = mallocTrim?(0)
    if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
      handle.write(Data("5".utf8))
      try? handle.close()
    }
  }

  /// The peak resident set size in bytes since the last ``resetPeak()``.
  static func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss * 1024
  }

  /// Current anonymous resident bytes: resident minus file-backed and shared pages (`/proc/self/statm`).
  static func anonymousBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: " ")
    guard fields.count >= 3, let resident = Int(fields[1]), let shared = Int(fields[2]) else { return 0 }
    return (resident - shared) * Int(sysconf(Int32(_SC_PAGESIZE)))
  }
}

/// Samples ``MemoryProbe/anonymousBytes()`` on its own thread while a measurement runs, and
/// keeps the CPU time that thread used, so that the measurement's CPU time can leave it out.
final class AnonymousMemorySampler: Sendable {
  private let peak = Atomic<Int>(0)
  private let running = Atomic<Bool>(true)
  /// The sampling thread's own CPU time, in nanoseconds, once it stopped.
  private let ownCPUNanoseconds = Atomic<Int>(0)
  private let stopped = DispatchSemaphore(value: 0)

  init() {
    peak.store(MemoryProbe.anonymousBytes(), ordering: .relaxed)
    let thread = Thread { [self] in
      let start = CPUTime.threadSeconds()
      while running.load(ordering: .relaxed) {
        let now = MemoryProbe.anonymousBytes()
        if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
        usleep(1_000)
      }
      ownCPUNanoseconds.store(Int((CPUTime.threadSeconds() - start) * 1e9), ordering: .relaxed)
      stopped.signal()
    }
    thread.start()
  }

  /// Stops sampling.
  /// - Returns: the peak seen, and the CPU seconds the sampling thread used.
  func stop() -> (peakBytes: Int, cpuSeconds: Double) {
    running.store(false, ordering: .relaxed)
    stopped.wait()
    return (
      max(peak.load(ordering: .relaxed), MemoryProbe.anonymousBytes()),
      Double(ownCPUNanoseconds.load(ordering: .relaxed)) / 1e9
    )
  }
}
