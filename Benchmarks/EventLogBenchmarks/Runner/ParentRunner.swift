import Foundation
import PostgresTestSupport

/// The parent: for each workload, size and system, builds the fixture in one child, measures in
/// another, and collects the reports. Durable writes are measured in rounds instead: one child per
/// run, each (workload, size, system) in turn, so that the disk's drift falls on every system
/// alike. The replicate workloads get one PostgreSQL server for the whole run (started here,
/// stopped at the end) and one fixture per size that every system starts from.
struct ParentRunner {
  let options: Options
  let scale: Scale
  let workDirectory: String
  /// The server the children use, while the run has one.
  private var server: BenchmarkServer.Endpoint?
  /// The fixtures every system of a workload shares, by ``sharedKey(_:_:)``.
  private var sharedFixtures: [String: String] = [:]

  init(options: Options, scale: Scale, workDirectory: String) {
    self.options = options
    self.scale = scale
    self.workDirectory = workDirectory
  }

  struct Outcome {
    var measurements: [Measurement] = []
    var failures: [FailedMeasurement] = []
    /// The benchmark's PostgreSQL server (`postgres --version`), when one ran.
    var serverVersion: String?
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
    var plan = self.plan
    let start = ContinuousClock.now
    var runner = self
    // The replicate workloads' server: one for the run, stopped (and its files removed) when the
    // run ends; its watchdog stops it should this process die first.
    let server = runner.startServer(for: &plan, into: &outcome)
    defer { server?.destroy() }
    let fixtures = workDirectory + "/shared-fixtures"
    defer { FileSystem.remove(fixtures) }
    runner.buildSharedFixtures(in: fixtures, for: &plan, into: &outcome)
    runner.measureAll(plan, start: start, into: &outcome)
    return outcome
  }

  /// Starts the server when `plan` has a workload that needs one; when it cannot be started,
  /// those triples fail with the reason (the replicate workloads are part of the contract: a
  /// machine without PostgreSQL fails them rather than skip them) and leave the plan.
  private mutating func startServer(
    for plan: inout [(Workload, Int, SystemID)], into outcome: inout Outcome
  ) -> PostgresTestServer? {
    guard plan.contains(where: { $0.0.needsServer }) else { return nil }
    do {
      let started = try BenchmarkServer.start()
      server = BenchmarkServer.Endpoint(directory: started.directory, port: started.port)
      outcome.serverVersion = started.serverVersion
      Console.progress(
        "PostgreSQL server for the replicate workloads: \(outcome.serverVersion ?? "unknown version") "
          + "at \(started.directory) (fsync off)")
      return started
    } catch {
      Console.progress("FAILED: \(error)")
      for (workload, size, system) in plan where workload.needsServer {
        outcome.failures.append(
          FailedMeasurement(
            workload: workload.rawValue, system: system.rawValue, size: size, error: "\(error)"))
      }
      plan.removeAll { $0.0.needsServer }
      return nil
    }
  }

  private static func sharedKey(_ workload: Workload, _ size: Int) -> String {
    "\(workload.rawValue)-\(size)"
  }

  /// Builds, in `directory`, the fixture of each (workload, size) of `plan` whose systems share
  /// one, in a child of the workload's first system (eventlog: the library builds it). A fixture
  /// that fails fails every triple that needed it, which leave the plan.
  private mutating func buildSharedFixtures(
    in directory: String, for plan: inout [(Workload, Int, SystemID)], into outcome: inout Outcome
  ) {
    var pairs: [(Workload, Int)] = []
    for (workload, size, _) in plan where workload.sharesFixture {
      if !pairs.contains(where: { $0 == (workload, size) }) { pairs.append((workload, size)) }
    }
    for (workload, size) in pairs {
      let path = directory + "/" + Self.sharedKey(workload, size)
      let label = "\(workload.rawValue) \(Format.count(size))"
      do {
        try FileSystem.createDirectory(directory)
        FileSystem.remove(path)
        let prepared = try ChildProcess.run(
          request(
            .prepare, workload, workload.systems[0], size, fixture: path, directory: directory, warmups: 0,
            runs: 0),
          allowDebug: options.allowDebug)
        Console.progress("\(label): shared fixture built in \(Format.seconds(prepared.seconds.first ?? 0))")
        sharedFixtures[Self.sharedKey(workload, size)] = path
      } catch {
        Console.progress("\(label): FAILED to build the shared fixture: \(error)")
        for (w, s, system) in plan where w == workload && s == size {
          outcome.failures.append(
            FailedMeasurement(
              workload: w.rawValue, system: system.rawValue, size: s, error: "the fixture: \(error)"))
        }
        plan.removeAll { $0.0 == workload && $0.1 == size }
      }
    }
  }

  private func measureAll(
    _ plan: [(Workload, Int, SystemID)], start: ContinuousClock.Instant, into outcome: inout Outcome
  ) {
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
      var fixture = sharedFixtures[Self.sharedKey(workload, size)]
      if workload.needsFixture(system) && !workload.sharesFixture {
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
      triples.allSatisfy { !$0.0.needsFixture($0.2) || $0.0.sharesFixture },
      "rounds are for workloads without a fixture of their own")
    var reports: [ChildReport?] = Array(repeating: nil, count: triples.count)
    var failed = Set<Int>()
    for round in 0..<scale.runs {
      for (index, (workload, size, system)) in triples.enumerated() where !failed.contains(index) {
        let label = progress.label(workload, system, size, round: " (run \(round + 1)/\(scale.runs))")
        let report = attempt(label, workload, size, system, into: &outcome) { directory -> ChildReport in
          let (warmups, _) = scale.repetitions(workload, system, size: size)
          let report = try ChildProcess.run(
            request(
              .measure, workload, system, size, fixture: sharedFixtures[Self.sharedKey(workload, size)],
              directory: directory, warmups: warmups, runs: 1),
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
      directory: directory, warmups: warmups, runs: runs, server: server)
  }
}
