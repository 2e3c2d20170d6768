import Foundation
import LMDB
import Synchronization
import TestKit
import Testing

@testable import EventLog

/// The writer's hybrid logical clock: an appended event is recorded at the later of the wall clock
/// and 1 µs after the largest recorded-at the log has seen; ingested events keep theirs and move
/// the clock. (Several processes: `Reliability.HybridClockAcrossProcesses`.)
@Suite("Hybrid logical clock")
struct HybridClockTests {
  static let start = Date(microsecondsSince1970: 1_800_000_000_000_000)

  @Test("a clock that steps back never stamps an event before the log's latest, in a batch or after a reopen")
  func clockSteppingBack() async throws {
    let dir = TemporaryDirectory()
    let clock = TestClock(Self.start)
    var store: EventStore? = try EventStore(path: dir.environment(), options: clock.options)
    try await store?.append([try note("at the start")], to: "s")
    clock.set(Self.start.addingTimeInterval(-10))
    try await store?.append([try note("b"), try note("c")], to: "s")
    clock.set(Self.start.addingTimeInterval(5))
    try await store?.append([try note("the clock is ahead again")], to: "s")
    await close(&store)
    clock.set(Self.start.addingTimeInterval(-60))
    store = try EventStore(path: dir.environment(), options: clock.options)
    try await store?.append([try note("after a reopen, a minute behind")], to: "s")
    let micros = try #require(try store?.events(from: 1, limit: 10)).map(\.recordedAt.microsecondsSince1970)
    let start = Self.start.microsecondsSince1970
    #expect(micros == [start, start + 1, start + 2, start + 5_000_000, start + 5_000_001])
  }

  @Test("a pulled event stamped in the future: the next local event is stamped after it, also after a reopen")
  func eventFromTheFuture() async throws {
    let dir = TemporaryDirectory()
    let clock = TestClock(Self.start)
    var store: EventStore? = try EventStore(path: dir.environment(), options: clock.options)
    let future = Self.start.addingTimeInterval(3_600)
    var ahead = try note("from a device whose clock runs an hour ahead")
    ahead.recordedAt = future
    var behind = try note("from a device whose clock is behind")
    behind.recordedAt = Self.start.addingTimeInterval(-100)
    // The future event is not the head: the clock that remembers it is stored with the ingest.
    let outcomes = try await store?.ingest([
      IngestedEvent(stream: "s", event: ahead), IngestedEvent(stream: "s", event: behind),
    ])
    #expect(outcomes == [.stored(sequence: 1), .stored(sequence: 2)])
    #expect(try store?.event(at: 1)?.recordedAt == future)
    #expect(try store?.event(at: 2)?.recordedAt == behind.recordedAt)
    try await store?.append([try note("local")], to: "s")
    #expect(try store?.event(at: 3)?.recordedAt.microsecondsSince1970 == future.microsecondsSince1970 + 1)

    // Another ingest of an older event, a reopen, and an append: still after the future one.
    var older = try note("older still")
    older.recordedAt = Self.start.addingTimeInterval(-200)
    try await store?.ingest([IngestedEvent(stream: "s", event: older)])
    await close(&store)
    store = try EventStore(path: dir.environment(), options: clock.options)
    try await store?.append([try note("after the reopen")], to: "s")
    #expect(try store?.event(at: 5)?.recordedAt.microsecondsSince1970 == future.microsecondsSince1970 + 2)
    #expect(try store?.verify().isClean == true)
  }

  @Test(
    "an environment without a stored clock (an older build's) finds the largest recorded-at once, and stores it"
  )
  func environmentWithoutAStoredClock() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let clock = TestClock(Self.start)
    let future = Self.start.addingTimeInterval(86_400)
    try await withStore(at: path, options: clock.options) { store in
      var ahead = try note("ahead")
      ahead.recordedAt = future
      var behind = try note("behind")
      behind.recordedAt = Self.start
      try await store.ingest([
        IngestedEvent(stream: "s", event: ahead), IngestedEvent(stream: "s", event: behind),
      ])
    }
    // As an older build leaves it: no clock in `meta`.
    try withEnvironment(at: path) { environment in
      let meta = try environment.openDatabase("meta", flags: [])
      let deleted = try environment.write { txn in try txn.delete(forKey: Schema.clockKey, in: meta) }
      #expect(deleted)
    }
    try await withStore(at: path, options: clock.options) { store in
      let stored = try store.environment.read { txn in
        try txn.value(forKey: Schema.clockKey, in: store.schema.meta)
      }
      #expect(stored != nil, "stored on open")
      try await store.append([try note("local")], to: "s")
      #expect(try store.event(at: 3)?.recordedAt.microsecondsSince1970 == future.microsecondsSince1970 + 1)
    }
  }

  /// Opens the environment at `path` with LMDB alone, for `body`, and closes it.
  private func withEnvironment(at path: String, _ body: (Environment) throws -> Void) throws {
    var options = Environment.Options()
    options.maxDatabases = 16
    try body(try Environment(path: path, options: options))
  }

  @Test(
    "appends leave the stored clock alone (the head's record carries it); an ingest leaving it above the head stores it"
  )
  func clockIsStoredOnlyWhenNeeded() async throws {
    let dir = TemporaryDirectory()
    let clock = TestClock(Self.start)
    let store = try EventStore(path: dir.environment(), options: clock.options)
    func stored() throws -> Int64? {
      try store.environment.read { txn in try WriteBatch.storedClock(in: txn, schema: store.schema) }
    }
    #expect(try stored() == 0, "stored once, by the open of a new environment")
    for index in 0..<5 {
      clock.set(Self.start.addingTimeInterval(Double(index)))
      try await store.append([try note("local \(index)")], to: "s")
    }
    var newer = try note("pulled, newer than every local event")
    newer.recordedAt = Self.start.addingTimeInterval(60)
    try await store.ingest([IngestedEvent(stream: "s", event: newer)])
    #expect(try stored() == 0, "appends and an ingest that ends on the latest event write no clock")
    var older = try note("pulled, older")
    older.recordedAt = Self.start.addingTimeInterval(-60)
    try await store.ingest([IngestedEvent(stream: "s", event: older)])
    #expect(try stored() == Self.micros(60))
    try await store.append([try note("after")], to: "s")
    #expect(try store.event(at: 8)?.recordedAt.microsecondsSince1970 == Self.micros(60) + 1)
    #expect(try stored() == Self.micros(60), "the head carries the clock again: nothing written")
  }

  static func micros(_ seconds: Double) -> Int64 { start.addingTimeInterval(seconds).microsecondsSince1970 }

  @Test(
    "appends stamped in the log's order are strictly increasing, and their stamps order them as the log does")
  func stampsFollowTheLog() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    for round in 0..<20 {
      try await store.append(
        (0..<(1 + round % 5)).map { try note("n\(round)-\($0)") }, to: StreamID("s\(round % 3)"))
    }
    let events = try store.events(from: 1, limit: 1_000)
    let stamps = events.map(Stamp.init)
    #expect(stamps == stamps.sorted())
    #expect(Set(events.map(\.recordedAt)).count == events.count)
  }
}

/// A wall clock that a test sets, and that the writer of a store opened with ``options`` reads.
final class TestClock: Sendable {
  private let date: Mutex<Date>

  init(_ date: Date) { self.date = Mutex(date) }

  func set(_ new: Date) { date.withLock { $0 = new } }

  /// Test options (``EventStore/Options/fast``) with this wall clock.
  var options: EventStore.Options {
    var options = EventStore.Options.fast
    options.wallClock = { [self] in date.withLock { $0 } }
    return options
  }
}
