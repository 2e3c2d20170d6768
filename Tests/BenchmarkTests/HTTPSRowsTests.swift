import Foundation
import Testing

@testable import EventLogBenchmarks

/// `eventlog-https` is planned, reported and compared as a system of `replicate.push` and
/// `replicate.pull` (issue 23), in quick mode as in the default run; its ratios are shown, not
/// targets.
@Suite("Benchmark eventlog-https rows")
struct HTTPSRowsTests {
  @Test("quick mode plans eventlog-https beside eventlog and libpq-raw for both replicate workloads")
  func quickPlan() throws {
    let options = try Options.parse(["--quick", "replicate"])
    let plan = ParentRunner(options: options, scale: options.scale, workDirectory: "/nonexistent").plan
    let rows = plan.map { "\($0.0.rawValue) \($0.1) \($0.2.rawValue)" }
    #expect(
      rows == [
        "replicate.push 20000 eventlog", "replicate.push 20000 libpq-raw",
        "replicate.push 20000 eventlog-https",
        "replicate.pull 20000 eventlog", "replicate.pull 20000 libpq-raw",
        "replicate.pull 20000 eventlog-https",
      ])
    #expect(
      Workload.allCases.filter { $0.systems.contains(.eventlogHTTPS) } == [.replicatePush, .replicatePull])
    #expect(Workload.replicatePull.sharesFixture && Workload.replicatePush.sharesFixture)
  }

  @Test("--system eventlog-https selects it alone")
  func systemFlag() throws {
    let options = try Options.parse(["--quick", "--system", "eventlog-https", "replicate.pull"])
    let plan = ParentRunner(options: options, scale: options.scale, workDirectory: "/nonexistent").plan
    #expect(plan.map(\.2) == [.eventlogHTTPS])
    #expect(Options.usage.contains("eventlog-https"))
  }

  @Test("its rows get ratios to eventlog, its ratios to libpq-raw and eventlog are shown without a target")
  func reported() throws {
    var results: [EventLogBenchmarks.Measurement] = []
    for workload in [Workload.replicatePush, .replicatePull] {
      // eventlog 2 s, libpq-raw 1 s, eventlog-https 4 s; CPU 1, 0.5 and 3 s.
      for (system, seconds, cpu) in [
        (SystemID.eventlog, 2.0, 1.0), (.libpqRaw, 1.0, 0.5), (.eventlogHTTPS, 4.0, 3.0),
      ] {
        results.append(measurement(workload, system, seconds: seconds, cpu: cpu))
      }
    }
    results.computeRatios()
    let https = try #require(results.result(.replicatePush, .eventlogHTTPS))
    #expect(https.ratioToEventlog == 0.5)
    #expect(abs((https.cpuRatioToEventlog ?? 0) - 1.0 / 3.0) < 1e-9)

    let checks = Targets.evaluate(results).filter { $0.target.hasPrefix("eventlog-https") }
    #expect(
      checks.map { "\($0.workload) \($0.target)" } == [
        "replicate.push eventlog-https ÷ libpq-raw", "replicate.push eventlog-https ÷ libpq-raw on CPU time",
        "replicate.push eventlog-https ÷ eventlog", "replicate.push eventlog-https ÷ eventlog on CPU time",
        "replicate.pull eventlog-https ÷ libpq-raw", "replicate.pull eventlog-https ÷ libpq-raw on CPU time",
        "replicate.pull eventlog-https ÷ eventlog", "replicate.pull eventlog-https ÷ eventlog on CPU time",
      ])
    let expected = [0.25, 0.5 / 3, 0.5, 1.0 / 3, 0.25, 0.5 / 3, 0.5, 1.0 / 3]
    #expect(checks.count == expected.count)
    for (check, value) in zip(checks, expected) {
      #expect(abs(check.value - value) < 1e-9, "\(check.target)")
    }
    #expect(checks.allSatisfy { $0.threshold == nil && $0.met == nil && $0.note == Targets.httpsNote })
    #expect(checks.allSatisfy { $0.line.hasPrefix("shown ") })
    // The targets of eventlog against libpq-raw are unchanged.
    #expect(
      Targets.evaluate(results).contains {
        $0.workload == "replicate.push" && $0.target == "eventlog ≥ 0.50× libpq-raw" && $0.met == true
      })
  }

  private func measurement(
    _ workload: Workload, _ system: SystemID, seconds: Double, cpu: Double
  ) -> EventLogBenchmarks.Measurement {
    Measurement(
      workload: workload, system: system, size: 20_000, warmups: 1,
      report: ChildReport(
        operations: 20_000, seconds: [seconds], peakRSSBytes: 1, cpuSeconds: [cpu], peakAnonBytes: 1,
        check: "pulled=20000 fingerprint=x", storeBytes: 1))
  }
}
