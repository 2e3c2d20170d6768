import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// The checks the other tests rely on, shown to fail when they should.
  @Suite struct Harness {
    @Test("the audit reports a changed, a missing and a lost acknowledged event")
    func auditCatchesWhatItShould() async throws {
      let directory = TemporaryDirectory()
      let path = directory.environment()
      var store: EventStore? = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: .noSync)
      try await DomainEvents.populate(try #require(store), count: 50, batch: 10, seed: 1)
      let events = try #require(store).events()
      await close(&store)
      var acknowledged = Dictionary(uniqueKeysWithValues: events.map { ($0.sequence, Acknowledged($0)) })
      let clean = try await audit(
        path: path, projections: RestaurantBookingSchema.projections, acknowledged: acknowledged,
        appendProbe: false)
      #expect(clean.problems.isEmpty, "\(clean.problems)")
      #expect(clean.head == 50 && clean.checkpoints.values.allSatisfy { $0 == 50 })

      acknowledged[7]?.hash ^= 1
      acknowledged[9]?.id = UUID()
      acknowledged[51] = Acknowledged(
        sequence: 51, id: UUID(), stream: "booking-x", type: BookingCreated.eventType, length: 1, hash: 0)
      let damaged = try await audit(
        path: path, projections: RestaurantBookingSchema.projections, acknowledged: acknowledged)
      #expect(damaged.problems.contains { $0.contains("event 7 is") })
      #expect(damaged.problems.contains { $0.contains("event 9 is") })
      #expect(damaged.problems.contains { $0.contains("event 51 was acknowledged but the head is 50") })
      #expect(damaged.probe?.sequence == 51)
    }

    @Test("eventlog-stress: usage errors exit 64, --help exits 0")
    func stressToolUsage() async throws {
      let directory = TemporaryDirectory()
      for (arguments, status) in [
        ([String](), Int32(64)), (["bogus"], 64), (["append"], 64), (["append", "--db"], 64),
        (["append", "--db", "x", "--count", "-1"], 64),
        (["append", "--db", "x", "--durability", "fast"], 64),
        (["read-loop", "--db", "x"], 64), (["hold-reader", "--db", "x", "extra"], 64), (["--help"], 0),
        (["append", "--help"], 0), (["read-loop", "--help"], 0), (["hold-reader", "--help"], 0),
        (["hold-open", "--help"], 0),
      ] {
        let child = try Child(Binaries.stress, arguments, in: directory.url)
        let end = await child.wait(timeout: .seconds(30))
        #expect(end == .exited(status), "eventlog-stress \(arguments): \(child.stderr)")
        if status == 0 { #expect(child.lines.contains { $0.contains("Usage: eventlog-stress") }) }
        if status == 64 { #expect(child.stderr.hasPrefix("error: ")) }
      }
    }
  }
}
