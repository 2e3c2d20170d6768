import EventLog
import Foundation

/// The `--json` file: `{"environment": {…}, "results": [{"workload", "system", "operations",
/// "seconds", "opsPerSecond", "peakRSSBytes", …}], "targets": […], "batchComparisons": […],
/// "failures": […]}` (`batchComparisons` is empty at GUIDE's batch size).
struct JSONReport: Codable, Sendable {
  var environment: BenchmarkEnvironment
  var results: [Measurement]
  var targets: [TargetCheck]
  var batchComparisons: [BatchComparison]
  var failures: [FailedMeasurement]

  func write(to path: String) throws {
    // The package's one JSON writer: keys sorted, no white space, slashes as they are.
    try PayloadJSONEncoder().encode(self).write(to: URL(fileURLWithPath: path))
  }
}
