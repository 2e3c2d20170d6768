import Foundation

/// The parent: for each workload, size and system, builds the fixture in one child, measures in
/// another, and collects the reports. Durable writes are measured in rounds instead: one child per
/// run, each (workload, size, system) in turn, so that the disk's drift falls on every system
/// alike.
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
    let start = ContinuousClock.now
    // Durable writes run in rounds, one measured run per child, every (workload, system) in turn:
    // the disk's speed drifts over minutes, and a ratio of two rates measured minutes apart
    // carries that drift. The other workloads are CPU-bound and make all their runs in one child.
    let interleaved = plan.filter { $0.0.isDurableWrite }
    let others = plan.filter { !$0.0.isDurableWrite }
    var progress = Progress(total: interleaved.count * scale.runs + others.count, start: start)
    if !interleaved.isEmpty {
      measureInRounds(interleaved, into: &outcome, progress: &progress)
    }
    for (workload, size, system) in others {
      measure(workload, size, system, into: &outcome, progress: &progress)
    }
    outcome.measurements.computeRatios()
    // Every system of a workload must have done the same work: equal counts and fingerprints.
    outcome.failures += OutcomeCheck.disagreements(outcome.measurements)
    return outcome
  }

  /// Counts and prints progress lines.
  struct Progress {
    var total: Int
    var start: ContinuousClock.Instant
    var done = 0

    mutating func label(_ workload: Workload, _ system: SystemID, _ size: Int, round: String = "") -> String {
      done += 1
      return "[\(done)/\(total)] \(workload.rawValue) \(system.rawValue) \(Format.count(size))\(round)"
    }

    var elapsed: String { Format.seconds((ContinuousClock.now - start).seconds) }
  }

  /// One child: the fixture (when the workload has one), then warm-ups and all the runs.
  private func measure(
    _ workload: Workload, _ size: Int, _ system: SystemID, into outcome: inout Outcome,
    progress: inout Progress
  ) {
    let label = progress.label(workload, system, size)
    let measured = attempt(label, workload, size, system, into: &outcome) { directory -> Measurement in
      var fixture: String?
      if workload.needsFixture(system) {
        let path = directory + "/fixture"
        let prepared = try ChildProcess.run(
          request(.prepare, workload, system, size, fixture: path, directory: directory, warmups: 0, runs: 0),
          allowDebug: options.allowDebug)
        Console.progress("\(label): fixture built in \(Format.seconds(prepared.seconds.first ?? 0))")
        fixture = path
      }
      let (warmups, runs) = scale.repetitions(workload, system, size: size)
      let report = try ChildProcess.run(
        request(
          .measure, workload, system, size, fixture: fixture, directory: directory, warmups: warmups,
          runs: runs),
        allowDebug: options.allowDebug)
      let measurement = Measurement(
        workload: workload, system: system, size: size, warmups: warmups, report: report)
      Console.progress(
        "\(label): \(Format.rate(measurement.opsPerSecond)) \(workload.unit)/s, median \(Format.seconds(measurement.seconds)) "
          + "[\(report.check)] (elapsed \(progress.elapsed))")
      return measurement
    }
    if let measured { outcome.measurements.append(measured) }
  }

  /// Rounds of one measured run per child (after the child's own warm-ups), every triple in turn;
  /// the runs of a triple are then summarised as if one child had made them. A triple that fails
  /// is reported once and left out of the later rounds.
  private func measureInRounds(
    _ triples: [(Workload, Int, SystemID)], into outcome: inout Outcome, progress: inout Progress
  ) {
    precondition(
      triples.allSatisfy { !$0.0.needsFixture($0.2) }, "rounds are for workloads without a fixture")
    var reports: [ChildReport?] = Array(repeating: nil, count: triples.count)
    var failed = Set<Int>()
    for round in 0..<scale.runs {
      for (index, (workload, size, system)) in triples.enumerated() where !failed.contains(index) {
        let label = progress.label(workload, system, size, round: " (run \(round + 1)/\(scale.runs))")
        let report = attempt(label, workload, size, system, into: &outcome) { directory -> ChildReport in
          let (warmups, _) = scale.repetitions(workload, system, size: size)
          let report = try ChildProcess.run(
            request(
              .measure, workload, system, size, fixture: nil, directory: directory, warmups: warmups, runs: 1),
            allowDebug: options.allowDebug)
          let rate = Double(report.operations) / (report.seconds.first ?? .infinity)
          Console.progress(
            "\(label): \(Format.rate(rate)) \(workload.unit)/s [\(report.check)] (elapsed \(progress.elapsed))"
          )
          return report
        }
        guard let report else {
          failed.insert(index)
          continue
        }
        reports[index] = reports[index].map { $0.merging(report) } ?? report
      }
    }
    for (index, (workload, size, system)) in triples.enumerated() where !failed.contains(index) {
      guard let report = reports[index] else { continue }
      outcome.measurements.append(
        Measurement(
          workload: workload, system: system, size: size,
          warmups: scale.repetitions(workload, system, size: size).warmups, report: report))
    }
  }

  /// Runs `body` in a fresh scratch directory for (workload, size, system), removed afterwards.
  /// - Returns: what `body` returned, or `nil` when it threw: the error is then printed under
  ///   `label` and recorded as the triple's failure.
  private func attempt<Result>(
    _ label: String, _ workload: Workload, _ size: Int, _ system: SystemID, into outcome: inout Outcome,
    _ body: (_ directory: String) throws -> Result
  ) -> Result? {
    let directory = workDirectory + "/\(workload.rawValue)-\(system.rawValue)-\(size)"
    FileSystem.remove(directory)
    defer { FileSystem.remove(directory) }
    do {
      try FileSystem.createDirectory(directory)
      return try body(directory)
    } catch {
      Console.progress("\(label): FAILED: \(error)")
      outcome.failures.append(
        FailedMeasurement(workload: workload.rawValue, system: system.rawValue, size: size, error: "\(error)")
      )
      return nil
    }
  }

  private func request(
    _ mode: ChildRequest.Mode, _ workload: Workload, _ system: SystemID, _ size: Int, fixture: String?,
    directory: String, warmups: Int, runs: Int
  ) -> ChildRequest {
    ChildRequest(
      mode: mode, workload: workload, system: system, size: size, batchSize: scale.batchSize,
      ids: scale.ids, fixture: fixture,
      directory: directory, warmups: warmups, runs: runs)
  }
}
