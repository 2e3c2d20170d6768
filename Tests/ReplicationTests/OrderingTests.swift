import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import RestaurantBooking
import Synchronization
import Testing

@testable import ReplicationPostgres

/// A puller paging by position never misses an event that commits late, and never sees one twice.
@Suite("Ordering under concurrent pushes", .needsPostgres)
struct OrderingTests {
  @Test func eightConcurrentPushersAndAPullerThatPagesMeanwhile() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    var options = Device.quickOptions
    options.pushBatchSize = 3
    options.pullPageSize = 5
    let pushers = try (0..<8).map { _ in try Device(customer, options: options) }
    let perDevice = 12
    for device in pushers {
      let restaurant = try await device.addRestaurant()
      for index in 0..<perDevice { _ = try await device.book(restaurant, name: "Guest \(index)") }
    }
    let puller = try Device(customer, options: options)
    let done = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for device in pushers {
        group.addTask {
          // Several pushes, so that batches of different devices interleave.
          while try await device.push().pushed > 0 || (try device.replicator.status().pending) > 0 {}
          done.add()
        }
      }
      group.addTask {
        var rounds = 0
        while done.value < pushers.count || rounds == 0 {
          _ = try await puller.pull()
          rounds += 1
        }
        _ = try await puller.pull()
      }
      try await group.waitForAll()
    }
    let total = pushers.count * perDevice
    // Every event once, at positions 1…total, in the order the server committed them.
    #expect(try puller.store.head() == UInt64(total))
    #expect(try puller.replicator.status().cursor == UInt64(total))
    let positions = try (1...UInt64(total)).map {
      try #require(try puller.replicator.local.origin(ofLocalSequence: $0)).position
    }
    #expect(positions == Array(1...UInt64(total)))
    #expect(Set(try puller.store.events(from: 1).map(\.id)).count == total)
    #expect(try await puller.allBookings().count == total)
    try puller.expectHealthy()
  }

  @Test func aPushHeldOpenMakesLaterPushesWaitAndThePullerMissesNothing() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let slow = try Device(customer)
    let fast = try Device(customer)
    let puller = try Device(customer)
    _ = try await slow.book(try await slow.addRestaurant(), name: "Slow")
    _ = try await fast.book(try await fast.addRestaurant(), name: "Fast")

    // The slow device's push: its transaction stays open.
    let held = try PostgresConnection(PostgresConfiguration(url: customer.url))
    let event = try #require(try slow.store.events(from: 1).last)
    try held.execute("BEGIN", purpose: "hold a push open")
    let device = DeviceCredentials.random()
    try held.query(
      "SELECT * FROM eventlog_api.push($1, $2, $3, $4::jsonb)",
      [
        .uuid(device.id), .text(device.key), .integer(2),
        .text(String(decoding: ReplicationWire.events([try slow.outgoing(event)]), as: UTF8.self)),
      ],
      purpose: "push, held open")

    // A later push waits for it rather than committing a later position first.
    let finished = Counter()
    let later = Task {
      let summary = try await fast.push()
      finished.add()
      return summary
    }
    try await Task.sleep(for: .milliseconds(500))
    let finishedEarly = finished.value > 0
    #expect(!finishedEarly, "a later push committed while an earlier one was open")
    let meanwhile = try await puller.pull()
    #expect(meanwhile.pulled == 0 && meanwhile.cursor == 0)

    try held.execute("COMMIT", purpose: "let the held push commit")
    #expect(try await later.value.pushed == 1)
    let pulled = try await puller.pull()
    #expect(pulled.pulled == 2 && pulled.cursor == 2)
    #expect(try puller.store.event(at: 1)?.id == event.id)
    // The held push sent the slow device's event by hand, without its customer's key: its own next
    // push sends the key, and the puller's next pull brings it.
    #expect(try await slow.push().keysPushed == 1)
    #expect(try await puller.pull().keysStored == 1)
    #expect(try await puller.allBookings().compactMap(\.customerName).sorted() == ["Fast", "Slow"])
  }
}

/// A count shared between tasks.
final class Counter: Sendable {
  private let count = Atomic<Int>(0)
  var value: Int { count.load(ordering: .relaxed) }
  func add() { count.add(1, ordering: .relaxed) }
}
