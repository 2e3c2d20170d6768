import Foundation

/// The parent: for each workload, size and system, builds the fixture in one child, measures in
/// another, and collects the reports.
struct ParentRunner {
  let options: Options
  let scale: Scale
  let workDirectory: String

  struct Outcome {
    var measurements: [Measurement] = []
    var failures: [FailedMeasurement] = []
  }

  /// The (workload, size, system) triples to measure, in order.
  var plan: [(Workload, Int, SystemID)] {
    options.workloads.flatMap { workload in
      scale.sizes(for: workload).flatMap { size in
        workload.systems.filter(options.systems.contains).map { (workload, size, $0) }
      }
    }
  }

  func run() -> Outcome {
    var outcome = Outcome()
    let plan = self.plan
    let clock = ContinuousClock()
    let start = clock.now
    for (number, (workload, size, system)) in plan.enumerated() {
      let directory = workDirectory + "/\(workload.rawValue)-\(system.rawValue)-\(size)"
      let label =
        "[\(number + 1)/\(plan.count)] \(workload.rawValue) \(system.rawValue) \(Format.count(size))"
      FileSystem.remove(directory)
      defer { FileSystem.remove(directory) }
      do {
        try FileSystem.createDirectory(directory)
        var fixture: String?
        if workload.needsFixture(system) {
          let path = directory + "/fixture"
          let prepared = try ChildProcess.run(
            ChildRequest(
              mode: .prepare, workload: workload, system: system, size: size, batchSize: scale.batchSize,
              fixture: path,
              directory: directory,
              warmups: 0, runs: 0), allowDebug: options.allowDebug)
          Console.progress("\(label): fixture built in \(Format.seconds(prepared.seconds.first ?? 0))")
          fixture = path
        }
        let (warmups, runs) = scale.repetitions(workload, system, size: size)
        let report = try ChildProcess.run(
          ChildRequest(
            mode: .measure, workload: workload, system: system, size: size, batchSize: scale.batchSize,
            fixture: fixture,
            directory: directory,
            warmups: warmups, runs: runs), allowDebug: options.allowDebug)
        let measurement = Measurement(
          workload: workload, system: system, size: size, warmups: warmups, report: report)
        outcome.measurements.append(measurement)
        Console.progress(
          "\(label): \(Format.rate(measurement.opsPerSecond)) \(workload.unit)/s, median \(Format.seconds(measurement.seconds)) "
            + "[\(report.check)] (elapsed \(Format.seconds((clock.now - start).seconds)))")
      } catch {
        Console.progress("\(label): FAILED: \(error)")
        outcome.failures.append(
          FailedMeasurement(
            workload: workload.rawValue, system: system.rawValue, size: size, error: "\(error)"))
      }
    }
    outcome.measurements.computeRatios()
    return outcome
  }
}
