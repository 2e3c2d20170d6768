#if canImport(Glibc)
  import Glibc
#endif

/// CPU time consumed (`getrusage`): user and system seconds.
struct CPUTime: Sendable {
  var user: Double
  var system: Double

  /// User plus system time.
  var total: Double { user + system }

  /// Every thread of this process so far (`RUSAGE_SELF`).
  static func process() -> CPUTime { usage(Int32(RUSAGE_SELF.rawValue)) }

  /// The calling thread's CPU seconds so far (`CLOCK_THREAD_CPUTIME_ID`).
  static func threadSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  private static func usage(_ who: Int32) -> CPUTime {
    var usage = rusage()
    getrusage(who, &usage)
    return CPUTime(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
  }

  private static func seconds(_ time: timeval) -> Double {
    Double(time.tv_sec) + Double(time.tv_usec) / 1e6
  }

  static func - (later: CPUTime, earlier: CPUTime) -> CPUTime {
    CPUTime(user: later.user - earlier.user, system: later.system - earlier.system)
  }
}
