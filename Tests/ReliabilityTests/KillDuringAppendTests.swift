import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// Item 1: a writer process killed with SIGKILL at random moments while it appends.
  @Suite struct KillDuringAppends {
    @Test("kill -9 during appends leaves a verified gap-free prefix holding every acknowledged event")
    func killDuringAppends() async throws {
      let kills = Mode.pick(quick: 20, full: 200)
      let maximumDelay = Mode.pick(quick: 250, full: 400)
      // A fresh environment every 20 kills keeps the log (and each audit) small.
      let killsPerEnvironment = 20
      let directory = TemporaryDirectory()
      var path = directory.environment()
      var random = SplitMix64(seed: Mode.seed ^ 0xA99E_4D)
      var acknowledged: [UInt64: Acknowledged] = [:]
      var beforeReady = 0
      var beforeFirstCommit = 0
      let clock = ContinuousClock()
      let start = clock.now
      var total = 0
      for kill in 1...kills {
        if kill % killsPerEnvironment == 1 && kill > 1 {
          total += acknowledged.count
          acknowledged.removeAll()
          try? FileManager.default.removeItem(atPath: path)
          path = directory.environment("store-\(kill)")
        }
        let child = try Child(
          Binaries.stress,
          [
            "append", "--db", path, "--seed", "\(random.next())", "--concurrency", "3", "--batch-max", "16",
          ], in: directory.url)
        // Half of the kills are timed from the start (some land in the open), half from the
        // first acknowledged append.
        if Bool.random(using: &random) {
          _ = await child.waitForLine(prefix: "seq ", timeout: .seconds(20))
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...maximumDelay, using: &random)))
        child.kill()
        let termination = await child.wait(timeout: .seconds(20))
        #expect(
          termination == .signaled(SIGKILL),
          "kill \(kill): \(String(describing: termination)); \(child.stderr)")
        let lines = child.lines
        if !lines.contains(where: { $0.hasPrefix("ready") }) { beforeReady += 1 }
        let printed = Acknowledged.parse(lines)
        if printed.isEmpty { beforeFirstCommit += 1 }
        for event in printed {
          if let earlier = acknowledged[event.sequence], earlier != event {
            Issue.record(
              "kill \(kill): event \(event.sequence) was acknowledged twice: \(earlier), then \(event)")
          }
          acknowledged[event.sequence] = event
        }
        let audit = try await audit(
          path: path, projections: RestaurantBookingSchema.projections, acknowledged: acknowledged)
        #expect(audit.problems.isEmpty, "kill \(kill) of \(kills), seed \(Mode.seed): \(audit.problems)")
        if let probe = audit.probe { acknowledged[probe.sequence] = probe }
        guard audit.problems.isEmpty, termination == .signaled(SIGKILL) else { break }
      }
      report(
        "kill -9 during appends",
        "\(kills) kills in \(clock.now - start); \(total + acknowledged.count) acknowledged events all present; "
          + "\(beforeReady) kills before the store was open, \(beforeFirstCommit) before the first acknowledged append"
      )
    }
  }
}
