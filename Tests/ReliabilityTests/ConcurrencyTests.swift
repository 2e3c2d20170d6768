import EventLog
import Foundation
import RestaurantBooking
import Synchronization
import TestKit
import Testing

extension Reliability {
  /// Item 5: 1,000 tasks in this process and a second process append at once.
  @Suite struct ConcurrentAppends {
    @Test(
      "1,000 tasks (10,000 in full mode) and another process append at once: gap-free, each acknowledged event once"
    )
    func thousandTasksAndAnotherProcess() async throws {
      let tasks = Mode.pick(quick: 1_000, full: 10_000)
      let childEvents = Mode.pick(quick: 5_000, full: 30_000)
      let directory = TemporaryDirectory()
      let path = directory.environment()
      let clock = ContinuousClock()
      let opened = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: EventStore.Options())
      let child = try Child(
        Binaries.stress,
        [
          "append", "--db", path, "--count", "\(childEvents)", "--concurrency", "4", "--batch-max", "8",
          "--seed", "\(Mode.seed)",
        ], in: directory.url)
      try #require(await child.waitForLine(prefix: "seq ", timeout: .seconds(120)) != nil, "\(child.stderr)")

      // The tasks run in an unstructured task, so that a deadlock fails the test at the
      // deadline instead of hanging it.
      let started = clock.now
      let childRunningAtStart = child.process.isRunning
      let results = Mutex<(acknowledged: [Acknowledged], errors: [String], reads: Int)?>(nil)
      Task {
        let outcome = await Self.appendFromTasks(opened, tasks: tasks)
        results.withLock { $0 = outcome }
      }
      let deadline = clock.now + .seconds(Mode.pick(quick: 60, full: 600))
      while results.withLock({ $0 == nil }) && clock.now < deadline {
        try await Task.sleep(for: .milliseconds(5))
      }
      let tasksTook = clock.now - started
      let childRunningAtEnd = child.process.isRunning
      let outcome = try #require(results.withLock { $0 }, "the tasks did not finish in time: a deadlock?")
      let childEnd = await child.wait(timeout: .seconds(Mode.pick(quick: 60, full: 600)))
      try #require(childEnd == .exited(0), "\(String(describing: childEnd)) \(child.stderr)")
      #expect(outcome.errors.isEmpty, "\(outcome.errors.prefix(5))")
      let fromChild = Acknowledged.parse(child.lines)
      await opened.close()

      let all = outcome.acknowledged + fromChild
      var bySequence: [UInt64: Acknowledged] = [:]
      for event in all {
        #expect(
          bySequence.updateValue(event, forKey: event.sequence) == nil,
          "seq \(event.sequence) acknowledged twice")
      }
      let audit = try await audit(
        path: path, projections: RestaurantBookingSchema.projections, acknowledged: bySequence,
        appendProbe: false)
      #expect(audit.problems.isEmpty, "\(audit.problems)")
      #expect(audit.head == UInt64(all.count), "every stored event was acknowledged exactly once")
      // The two processes really appended at the same time: their sequence numbers interleave.
      let ours = outcome.acknowledged.map(\.sequence)
      let interleaved = fromChild.filter {
        (ours.min() ?? 0) < $0.sequence && $0.sequence < (ours.max() ?? 0)
      }
      // Only when the child was appending for the whole of the tasks' run can it be required to
      // have landed events between theirs (it may finish first on a fast machine).
      if childRunningAtStart && childRunningAtEnd {
        #expect(!interleaved.isEmpty, "the child appended nothing while the tasks did")
      }
      report(
        "concurrency",
        "\(tasks) tasks (\(outcome.acknowledged.count) events acknowledged, \(outcome.reads) concurrent reads) in "
          + "\(tasksTook), while another process appended \(fromChild.count) events (\(interleaved.count) between "
          + "ours); head \(audit.head), no error")
    }

    /// Runs `tasks` tasks at once: most append three times, one booking or two in an atomic
    /// multi-stream append; one in ten reads the latest events and checks they are gap-free.
    static func appendFromTasks(
      _ store: EventStore, tasks: Int
    ) async -> (acknowledged: [Acknowledged], errors: [String], reads: Int) {
      await withTaskGroup(of: (acknowledged: [Acknowledged], error: String?, read: Bool).self) { group in
        for index in 0..<tasks {
          group.addTask {
            do {
              if index % 10 == 9 {
                let head = try store.head()
                let events = try store.events(from: head > 20 ? head - 20 : 1, through: head)
                let expected = Array((head > 20 ? head - 20 : 1)...max(head, 1))
                guard head == 0 || events.map(\.sequence) == expected else {
                  return ([], "read \(events.map(\.sequence)) below head \(head)", true)
                }
                return ([], nil, true)
              }
              var acknowledged: [Acknowledged] = []
              for round in 0..<3 {
                let seed = UInt64(index * 3 + round)
                var appends = [try DomainEvents.bookingAppend(seed: seed)]
                if index % 3 == 0 { appends.append(try DomainEvents.bookingAppend(seed: seed << 32)) }
                let result = try await store.append(appends)
                let events = appends.flatMap(\.events)
                acknowledged += zip(events, result.events).map { event, position in
                  Acknowledged(
                    sequence: position.sequence, id: position.id, stream: position.stream.rawValue,
                    type: event.type,
                    length: event.payload.count, hash: FNV1a64.hash(event.payload))
                }
              }
              return (acknowledged, nil, false)
            } catch {
              return ([], "task \(index): \(error)", false)
            }
          }
        }
        var acknowledged: [Acknowledged] = []
        var errors: [String] = []
        var reads = 0
        for await result in group {
          acknowledged += result.acknowledged
          if let error = result.error { errors.append(error) }
          if result.read { reads += 1 }
        }
        return (acknowledged, errors, reads)
      }
    }
  }
}
