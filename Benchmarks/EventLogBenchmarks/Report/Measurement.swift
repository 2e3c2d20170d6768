/// One (workload, system, size) result, as the JSON report and the table show it.
struct Measurement: Codable, Sendable {
  struct Spread: Codable, Sendable {
    /// The slowest run's rate.
    var minOpsPerSecond: Double
    /// The fastest run's rate.
    var maxOpsPerSecond: Double
  }

  struct CPUSpread: Codable, Sendable {
    /// The thriftiest run's CPU seconds per operation.
    var minSecondsPerOperation: Double
    /// The costliest run's.
    var maxSecondsPerOperation: Double
  }

  var workload: String
  var system: String
  var size: Int
  /// Operations per run (events, restaurants or rows: ``Workload/unit``).
  var operations: Int
  /// The median run's duration.
  var seconds: Double
  /// `operations / seconds`.
  var opsPerSecond: Double
  /// Peak resident memory of the measured runs (`ru_maxrss`, includes mapped file pages).
  var peakRSSBytes: Int
  /// Peak anonymous (heap) memory of the measured runs, sampled every millisecond.
  var peakAnonBytes: Int
  var runs: Int
  var warmups: Int
  var spread: Spread
  var secondsPerRun: [Double]
  /// CPU time (user + system, every thread of the child but the memory sampler) per operation,
  /// median over the runs: what the work costs, whatever else the machine ran meanwhile.
  var cpuSecondsPerOperation: Double
  var cpuSpread: CPUSpread
  /// Each measured run's CPU seconds.
  var cpuSecondsPerRun: [Double]
  /// Of ``cpuSecondsPerOperation``, the server's part: the CPU time of the PostgreSQL backends
  /// serving the run (replicate workloads only), median over the runs, per operation.
  var serverCPUSecondsPerOperation: Double?
  /// This system's rate divided by eventlog's (same workload and size).
  var ratioToEventlog: Double?
  /// Eventlog's CPU time per operation divided by this system's: like ``ratioToEventlog``, above 1
  /// when this system spends less CPU than eventlog.
  var cpuRatioToEventlog: Double?
  /// This system's rate divided by lmdb-append's.
  var ratioToLMDBAppend: Double?
  /// Bytes on disk of the store the runs read or wrote.
  var storeBytes: Int
  /// The outcome (row or event counts), equal across the systems of a workload.
  var check: String
  var unit: String

  init(workload: Workload, system: SystemID, size: Int, warmups: Int, report: ChildReport) {
    self.workload = workload.rawValue
    self.system = system.rawValue
    self.size = size
    operations = report.operations
    let summary = Summary(report.seconds)
    seconds = summary.median
    opsPerSecond = Double(report.operations) / summary.median
    spread = Spread(
      minOpsPerSecond: Double(report.operations) / summary.maximum,
      maxOpsPerSecond: Double(report.operations) / summary.minimum)
    peakRSSBytes = report.peakRSSBytes
    peakAnonBytes = report.peakAnonBytes
    runs = report.seconds.count
    let cpu = Summary(report.cpuSeconds.isEmpty ? [0] : report.cpuSeconds)
    let perOperation = 1 / Double(max(1, report.operations))
    cpuSecondsPerOperation = cpu.median * perOperation
    cpuSpread = CPUSpread(
      minSecondsPerOperation: cpu.minimum * perOperation, maxSecondsPerOperation: cpu.maximum * perOperation)
    cpuSecondsPerRun = report.cpuSeconds
    serverCPUSecondsPerOperation = report.externalCPUSeconds.map { Summary($0).median * perOperation }
    self.warmups = warmups
    secondsPerRun = report.seconds
    storeBytes = report.storeBytes
    check = report.check
    unit = workload.unit
  }
}

/// A measurement that could not be made.
struct FailedMeasurement: Codable, Sendable {
  var workload: String
  var system: String
  var size: Int
  var error: String
}

extension [Measurement] {
  /// Fills in the ratios to eventlog and to lmdb-append, per workload and size.
  mutating func computeRatios() {
    for index in indices {
      let peers = filter { $0.workload == self[index].workload && $0.size == self[index].size }
      if let base = peers.first(where: { $0.system == SystemID.eventlog.rawValue }) {
        self[index].ratioToEventlog = self[index].opsPerSecond / base.opsPerSecond
        if self[index].cpuSecondsPerOperation > 0 {
          self[index].cpuRatioToEventlog = base.cpuSecondsPerOperation / self[index].cpuSecondsPerOperation
        }
      }
      if let append = peers.first(where: { $0.system == SystemID.lmdbAppend.rawValue }) {
        self[index].ratioToLMDBAppend = self[index].opsPerSecond / append.opsPerSecond
      }
    }
  }

  func result(_ workload: Workload, _ system: SystemID, size: Int? = nil) -> Measurement? {
    last {
      $0.workload == workload.rawValue && $0.system == system.rawValue && (size == nil || $0.size == size)
    }
  }

  func sizes(of workload: Workload) -> [Int] {
    Set(filter { $0.workload == workload.rawValue }.map(\.size)).sorted()
  }
}
