import EventLog
import Foundation
import ReviewEntity
import TestKit
import Testing

/// Rows that converge (issue 22, item 5), in process: several devices, each its own store with
/// the `Review` test entity (posted, then rated, retitled and reworded by separate events, then
/// deleted), make random local changes with clocks that are skewed and step back, and exchange
/// events by `ingest` (a random prefix of another device's log, in its order, as a pull would
/// bring them), in any order; some are closed and reopened. At the end, after every device has
/// taken every other's events:
///
/// - every device holds the same rows, in every index, byte for byte;
/// - they are the rows of the rule worked out without the engine (``Reviews/expectedRows(_:)``);
/// - a replay equals the live tables, and `verify` is clean, on every device;
/// - a fresh store that ingested every event, the devices' logs merged in a random order, holds
///   the same rows.
///
/// Quick: 4 seeds of 150 steps, 3 to 5 devices. `EVENTLOG_FULL=1`: 40 seeds of 600 steps.
/// `EVENTLOG_SEED=n` replays one seed. (Through PostgreSQL, with kills: the replication tests'
/// `ReviewConvergenceModelCheckTests`.)
@Suite("Rows that converge")
struct ConvergenceTests {
  static let full = ModelCheck.full
  static var seeds: [UInt64] { ModelCheck.seeds(Array(0..<(full ? 40 : 4))) }

  /// One device: a store with its own wall clock.
  final class Device {
    let name: String
    let directory = TemporaryDirectory("device")
    let clock: TestClock
    var store: EventStore?

    init(_ name: String, clock: TestClock) throws {
      self.name = name
      self.clock = clock
      store = try Self.open(directory, clock: clock)
    }

    static func open(_ directory: TemporaryDirectory, clock: TestClock) throws -> EventStore {
      var options = clock.options
      options.replayChunkSize = 5  // several chunks: a refold in replay reads across them
      return try EventStore(
        path: directory.environment(), projections: [Reviews.projection], options: options)
    }

    var live: EventStore {
      get throws {
        guard let store else { throw CheckFailure("\(name) is closed") }
        return store
      }
    }

    func reopen() async throws {
      await close(&store)
      store = try Self.open(directory, clock: clock)
    }

    func reviews() throws -> [Review] { try live.read { try Reviews.projection.reader(in: $0).rows() } }
    func events() throws -> [RecordedEvent] { try live.events() }

    /// Stores `events` (another device's, in its order) as a pull would.
    func take(_ events: [RecordedEvent]) async throws {
      guard !events.isEmpty else { return }
      try await live.ingest(
        events.map { event in
          EventStore.IngestedEvent(
            stream: event.stream,
            event: NewEvent(
              id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
              metadata: event.metadata, recordedAt: event.recordedAt))
        })
    }

    /// Appends `payload` to review `id`'s stream at the version it was found at.
    func append(_ payload: some EventPayload, to id: UUID, new: Bool = false) async throws {
      let stream = Reviews.stream(id)
      let version = try live.version(of: stream)
      try await live.append(
        [try NewEvent(payload)], to: stream, expectedVersion: new ? .noStream : .exactly(version))
    }
  }

  struct CheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  @Test(
    "devices that exchange events in any order, with skewed clocks, hold the same rows: the rule's",
    arguments: seeds)
  func devicesConverge(seed: UInt64) async throws {
    var random = SplitMix64(seed: 0xC0_4E46 &+ seed)
    func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
    let count = 3 + below(3)
    let steps = Self.full ? 600 : 150
    let base = Date(microsecondsSince1970: 1_800_000_000_000_000)
    var skews = (0..<count).map { _ in Double(below(4_000)) / 1_000 - 2 }
    let devices = try (0..<count).map { try Device("device \($0)", clock: TestClock(base)) }
    let restaurants = (0..<3).map { _ in random.uuid() }
    var elapsed = 0.0
    var trace: [String] = []
    func context() -> String {
      "seed \(seed) (EVENTLOG_SEED=\(seed)); last steps:\n  " + trace.suffix(20).joined(separator: "\n  ")
    }

    for step in 0..<steps {
      elapsed += Double(below(3_000)) / 1_000_000
      let index = below(count)
      let device = devices[index]
      // Each device's clock: its skew, and now and then a step back of up to a second.
      if below(20) == 0 { skews[index] -= Double(below(1_000)) / 1_000 }
      device.clock.set(base.addingTimeInterval(elapsed + skews[index]))
      let live = try device.reviews()
      let roll = below(100)
      switch roll {
      case 0..<22:
        let review = Review(
          id: random.uuid(), restaurantID: restaurants[below(3)], author: "author \(below(5))",
          rating: 1 + below(5), title: "title \(step)", text: "text \(step)",
          postedAt: base.addingTimeInterval(elapsed))
        trace.append("\(step): \(device.name) posts \(review.id)")
        try await device.append(ReviewEntity.ReviewPosted(review: review), to: review.id, new: true)
      case 22..<60 where !live.isEmpty:
        let id = live[below(live.count)].id
        switch below(3) {
        case 0:
          trace.append("\(step): \(device.name) rates \(id)")
          try await device.append(ReviewRated(id: id, rating: 1 + below(5)), to: id)
        case 1:
          trace.append("\(step): \(device.name) retitles \(id)")
          try await device.append(ReviewRetitled(id: id, title: "title \(step) by \(index)"), to: id)
        default:
          trace.append("\(step): \(device.name) rewords \(id)")
          try await device.append(ReviewReworded(id: id, text: "text \(step) by \(index)"), to: id)
        }
      case 60..<68 where !live.isEmpty:
        let id = live[below(live.count)].id
        trace.append("\(step): \(device.name) deletes \(id)")
        try await device.append(ReviewDeleted(id: id), to: id)
      case 68..<97:
        let source = devices[below(count)]
        guard source !== device else { continue }
        let events = try source.events()
        let prefix = events.prefix(below(events.count + 1) + (below(2) == 0 ? events.count : 0))
        trace.append(
          "\(step): \(device.name) takes \(prefix.count) of \(source.name)'s \(events.count) events")
        try await device.take(Array(prefix))
      case 97..<100:
        trace.append("\(step): \(device.name) closes and reopens")
        try await device.reopen()
      default:
        continue
      }
    }

    // The end: every device takes every other's events.
    for device in devices {
      for source in devices where source !== device { try await device.take(try source.events()) }
    }

    let reference = try devices[0].reviews()
    let allEvents = try devices[0].events()
    let expected = try Reviews.expectedRows(allEvents)
    #expect(reference == expected, "the rows are not the rule's\n\(context())")
    let referenceTables = try Self.tables(devices[0].live)
    var outOfOrder = 0
    for device in devices {
      let store = try device.live
      let events = try device.events()
      #expect(Set(events.map(\.id)) == Set(allEvents.map(\.id)), "\(device.name) lacks events\n\(context())")
      #expect(try device.reviews() == reference, "\(device.name)'s rows differ\n\(context())")
      #expect(try Self.tables(store) == referenceTables, "\(device.name)'s tables differ\n\(context())")
      let difference = try store.firstDifference(from: store.replay())
      #expect(difference == nil, "\(device.name): \(String(describing: difference))\n\(context())")
      let report = try store.verify()
      #expect(report.isClean, "\(device.name): \(report.problems)\n\(context())")
      outOfOrder += Self.eventsOutOfStampOrder(events)
    }
    // The check is not vacuous: events did reach devices out of stamp order.
    #expect(outOfOrder > 0, "no event arrived out of order\n\(context())")

    // A single store that took every event, the logs merged in a random order.
    let single = try Device("single", clock: TestClock(base))
    var logs = try devices.map { try $0.events()[...] }
    var merged: [RecordedEvent] = []
    var seen = Set<UUID>()
    while let next = logs.indices.filter({ !logs[$0].isEmpty }).randomElement(using: &random) {
      let event = logs[next].removeFirst()
      if seen.insert(event.id).inserted { merged.append(event) }
    }
    try await single.take(merged)
    #expect(try single.reviews() == reference, "a single store's rows differ\n\(context())")
    #expect(try Self.tables(single.live) == referenceTables, "a single store's tables differ\n\(context())")
    #expect(try single.live.firstDifference(from: single.live.replay()) == nil)
    print(
      "[convergence] seed \(seed): \(count) devices, \(steps) steps, \(allEvents.count) events (\(outOfOrder) arrived out of stamp order), \(reference.count) reviews"
    )
  }

  /// The row table and the indexes (not the stamps, whose sequence numbers are each log's own).
  static func tables(_ store: EventStore) throws -> [String: [[UInt8]: [UInt8]]] {
    try liveTables(store).filter { !$0.key.hasSuffix("/" + TableProjection<Review>.stampsTable) }
  }

  /// How many events of `events` (a log, in its order) came after a later-stamped event.
  static func eventsOutOfStampOrder(_ events: [RecordedEvent]) -> Int {
    var latest: (Int64, String)?
    var count = 0
    for event in events {
      let stamp = (event.recordedAt.microsecondsSince1970, event.id.uuidString)
      if let latest, stamp < latest { count += 1 } else { latest = stamp }
    }
    return count
  }
}
