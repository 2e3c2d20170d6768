/// What the parent asks a child process to do (passed as one JSON argument).
struct ChildRequest: Codable, Sendable {
  enum Mode: String, Codable, Sendable {
    /// Build the fixture at `fixture`.
    case prepare
    /// Warm up, then measure `runs` runs.
    case measure
  }

  var mode: Mode
  var workload: Workload
  var system: SystemID
  var size: Int
  /// Events per durable commit of `append.batched`.
  var batchSize: Int
  /// The fixtures' kind of event and booking ID.
  var ids: FixtureIDs.Version
  var fixture: String?
  /// A scratch directory the child owns (runs use subdirectories of it).
  var directory: String
  var warmups: Int
  var runs: Int
  /// The PostgreSQL server the parent started, for the replicate workloads.
  var server: BenchmarkServer.Endpoint?
}

/// What a child reports on standard output (one JSON object).
struct ChildReport: Codable, Sendable {
  /// Operations per run.
  var operations: Int
  /// The measured duration of each run, in seconds (set-up excluded).
  var seconds: [Double]
  /// Peak resident memory of the measured runs (`ru_maxrss`).
  var peakRSSBytes: Int
  /// The CPU time (user + system, every thread of the child but the memory sampler) of each
  /// measured run, in seconds.
  var cpuSeconds: [Double]
  /// Peak anonymous (heap) memory of the measured runs, sampled.
  var peakAnonBytes: Int
  /// The outcome summary of the last run (the same for every system of a workload).
  var check: String
  /// Bytes of the fixture or of the last run's store on disk.
  var storeBytes: Int
  /// Of each measured run's ``cpuSeconds``, the part spent by other processes working for it
  /// (the PostgreSQL backends of the replicate workloads); `nil` when there were none.
  var externalCPUSeconds: [Double]? = nil
}

extension ChildReport {
  /// This report and a later one of the same (workload, system, size) as one: all their runs,
  /// the larger peaks, the later outcome and store size.
  func merging(_ later: ChildReport) -> ChildReport {
    ChildReport(
      operations: later.operations, seconds: seconds + later.seconds,
      peakRSSBytes: max(peakRSSBytes, later.peakRSSBytes), cpuSeconds: cpuSeconds + later.cpuSeconds,
      peakAnonBytes: max(peakAnonBytes, later.peakAnonBytes),
      check: later.check, storeBytes: later.storeBytes,
      externalCPUSeconds: externalCPUSeconds.map { $0 + (later.externalCPUSeconds ?? []) }
        ?? later.externalCPUSeconds)
  }
}

/// The hidden flag that makes the binary a child.
enum ChildFlag {
  static let name = "--internal-child"
}
