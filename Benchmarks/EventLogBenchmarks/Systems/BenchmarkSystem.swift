/// One measured run, set up and ready: only `body` is timed.
struct PreparedRun {
  /// How many operations `body` performs (events, restaurants, rows).
  var operations: Int
  /// The measured work.
  var body: () async throws -> Void
  /// After the clock stopped: checks the outcome (returns a summary that must be the same for
  /// every system of the workload) and releases the run's resources.
  var finish: () throws -> String
  /// The CPU seconds used so far by processes that work for the run outside this one (the
  /// PostgreSQL backends of the replicate workloads), read before and after `body`; `nil` when
  /// there are none.
  var externalCPUSeconds: (() -> Double)? = nil
}

/// What a system does for the workloads it runs.
protocol BenchmarkSystem {
  /// Builds, at `path`, what every run of `workload` at `size` starts from (not measured).
  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws

  /// Sets up one run in the empty directory `directory`, from `fixture` when the workload has one.
  /// `append.batched` commits `batchSize` events at a time.
  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun
}

/// A workload the system does not run (a programmer error: the plan never asks for one).
struct UnsupportedWorkload: Error, CustomStringConvertible {
  var workload: Workload
  var system: SystemID
  var description: String { "\(system.rawValue) does not run \(workload.rawValue)" }
}

enum Systems {
  static func make(_ id: SystemID) -> any BenchmarkSystem {
    switch id {
    case .eventlog: EventLogSystem()
    case .lmdbRaw: LMDBRawSystem()
    case .lmdbAppend: LMDBAppendSystem()
    case .sqlite: SQLiteSystem()
    case .seed: SeedSystem()
    case .libpqRaw: LibPQRawSystem()
    case .eventlogHTTPS: EventLogHTTPSSystem()
    }
  }
}

/// Splits `count` items into `parts` nearly equal consecutive ranges.
func partition(_ count: Int, into parts: Int) -> [Range<Int>] {
  precondition(parts > 0, "parts must be positive")
  return (0..<parts).map { part in (count * part / parts)..<(count * (part + 1) / parts) }
}

/// Splits `count` items into consecutive batches of about `size` items each (`size` or a little
/// more when it does not divide `count`; one batch when `count` is smaller than `size`).
func batches(_ count: Int, of size: Int) -> [Range<Int>] {
  partition(count, into: max(1, count / size))
}
