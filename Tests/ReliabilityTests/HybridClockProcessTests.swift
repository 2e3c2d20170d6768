import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// The writer's hybrid logical clock across processes: each write transaction reads the
  /// largest recorded-at the log has seen inside LMDB's writer lock, so the rule holds whichever
  /// process appends.
  @Suite struct HybridClockAcrossProcesses {
    @Test(
      "three processes, their clocks 20 s apart and stepping back, append at once: recorded-at rises strictly with the sequence"
    )
    func clocksApartStillStampInLogOrder() async throws {
      let directory = TemporaryDirectory()
      let path = directory.environment()
      let count = Mode.pick(quick: 400, full: 4_000)
      // Created first, so that the three children open an existing environment.
      var store: EventStore? = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: .noSync)
      await close(&store)
      let children = try [-20_000, 0, 20_000].enumerated().map { index, offset in
        try Child(
          Binaries.stress,
          [
            "append", "--db", path, "--count", "\(count)", "--concurrency", "2", "--batch-max", "8",
            "--seed", "\(Mode.seed &+ UInt64(index))", "--durability", "nosync",
            "--clock-offset-ms", "\(offset)", "--clock-jitter-ms", "5000",
          ], in: directory.url)
      }
      var acknowledged: [UInt64: Int] = [:]
      for (index, child) in children.enumerated() {
        let end = await child.wait(timeout: .seconds(Mode.pick(quick: 120, full: 600)))
        try #require(end == .exited(0), "\(String(describing: end)) \(child.stderr)")
        for event in Acknowledged.parse(child.lines) { acknowledged[event.sequence] = index }
      }
      store = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: .readOnlyAccess)
      let events = try #require(store).events()
      await close(&store)
      #expect(events.count == acknowledged.count)
      var previous: (sequence: UInt64, micros: Int64)?
      var handOvers = 0
      for event in events {
        let micros = event.recordedAt.microsecondsSince1970
        if let previous {
          #expect(
            micros > previous.micros,
            "event \(event.sequence) is recorded at \(micros) µs, not after event \(previous.sequence) (\(previous.micros) µs)"
          )
          if acknowledged[event.sequence] != acknowledged[previous.sequence] { handOvers += 1 }
        }
        previous = (event.sequence, micros)
      }
      // The processes did take turns: the rule was tested across them, not within one.
      #expect(handOvers > 0)
      report("hybrid clock", "\(events.count) events from 3 processes, \(handOvers) hand-overs between them")
    }
  }
}
