import EventLog
import Foundation
import TestKit
import Testing

@Suite("Projections and replay")
struct ProjectionTests {
  /// A seeded random workload of adds and removes over a few streams.
  static func workload(seed: UInt64, count: Int) throws -> [(StreamID, NewEvent)] {
    var random = SplitMix64(seed: seed)
    var live: [UUID] = []
    var events: [(StreamID, NewEvent)] = []
    for index in 0..<count {
      let stream = StreamID("notes-\(random.next() % 5)")
      if !live.isEmpty && random.next() % 3 == 0 {
        let id = live.remove(at: Int(random.next() % UInt64(live.count)))
        events.append((stream, try NewEvent(NoteRemoved(noteID: id))))
      } else {
        let id = UUID()
        live.append(id)
        events.append((stream, try note("note \(index)", id: id, priority: Int(random.next() % 5))))
      }
    }
    return events
  }

  @Test("the live projection equals a replay after every append, and replay up to n equals the state after n")
  func liveEqualsReplay() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    var states: [UInt64: [String: [[UInt8]: [UInt8]]]] = [0: try liveTables(store)]
    for (stream, event) in try Self.workload(seed: 42, count: 120) {
      let result = try await store.append([event], to: stream)
      let replay = try store.replay()
      #expect(try store.firstDifference(from: replay) == nil)
      let live = try liveTables(store)
      #expect(try replayedTables(store, replay) == live)
      states[result.lastSequence] = live
    }
    for (sequence, state) in states {
      let replay = try store.replay(through: sequence)
      #expect(replay.throughSequence == sequence)
      #expect(try replayedTables(store, replay) == state, "state as of event \(sequence)")
    }
  }

  @Test("replay reads in chunks and reports progress")
  func chunkedReplay() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options.fast
    options.replayChunkSize = 7
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: options)
    let events = try Self.workload(seed: 7, count: 100)
    try await store.append(events.map { StreamAppend(stream: $0.0, events: [$0.1]) })
    var reports: [UInt64] = []
    let replay = try store.replay { reports.append($0.completed) }
    #expect(reports.count == 15)
    #expect(reports.last == 100)
    #expect(replay.eventCount == 100)
    #expect(try store.firstDifference(from: replay) == nil)
  }

  @Test("a difference between a replay and the live projection is named")
  func differenceIsNamed() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let noteID = UUID()
    try await withStore(at: path, projections: [NotesProjection()]) { first in
      try await first.append([try note("a", id: noteID)], to: "s")
    }
    // A projection whose logic changed but whose version did not: live and replay now differ.
    let store = try EventStore(path: path, projections: [DoublingProjection()], options: .fast)
    try await store.append([try note("b")], to: "s")
    let difference = try #require(try store.firstDifference(from: store.replay()))
    #expect(difference.projection == "notes")
    #expect(difference.table == "by-id")
    #expect(difference.key == Array(noteID.uuidString.utf8))
    #expect(difference.replayed == nil)
    #expect(difference.description.contains("absent from the replay"))
    try await store.rebuildProjections()
    #expect(try store.firstDifference(from: store.replay()) == nil)
    #expect(try store.verify().isClean)
  }

  @Test("a new projection, or one whose version changed, is caught up on open")
  func catchUpOnOpen() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path) { store in
      for (stream, event) in try Self.workload(seed: 3, count: 50) {
        try await store.append([event], to: stream)
      }
    }
    let withProjection = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try withProjection.read { try $0.checkpoint(of: "notes") } == 50)
    #expect(try withProjection.firstDifference(from: withProjection.replay()) == nil)
    #expect(try withProjection.verify().isClean)
  }

  @Test(
    "a projection behind the head (another process appended without it) catches up before the next append")
  func catchUpBeforeAppend() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var first: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    try await first?.append([try note("1")], to: "s")
    await close(&first)
    var without: EventStore? = try EventStore(path: path, options: .fast)
    try await without?.append([try note("2"), try note("3")], to: "s")
    await close(&without)
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try store.read { try $0.checkpoint(of: "notes") } == 3)
    let counts = try liveTables(store)["notes/per-stream"]
    #expect(counts?[Array("s".utf8)] == (try BinaryEncoder().encode(UInt64(3))))
  }

  @Test("rebuilding swaps in new projections atomically while appends go on")
  func rebuildWhileAppending() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    for (stream, event) in try Self.workload(seed: 11, count: 300) {
      try await store.append([event], to: stream)
    }
    async let appends: Void = {
      for index in 0..<100 { try await store.append([try note("late \(index)")], to: "late") }
    }()
    let replay = try await store.rebuildProjections()
    try await appends
    #expect(replay.throughSequence >= 300)
    #expect(try store.firstDifference(from: store.replay()) == nil)
    #expect(try store.head() == 400)
  }

  @Test("an invalid or duplicate projection is refused on open")
  func invalidProjections() throws {
    let dir = TemporaryDirectory()
    #expect(throws: EventStoreError.self) {
      _ = try EventStore(path: dir.environment(), projections: [NotesProjection(), NotesProjection()])
    }
    var bad = NotesProjection()
    bad.name = "Bad Name"
    #expect(throws: EventStoreError.self) { _ = try EventStore(path: dir.environment(), projections: [bad]) }
  }
}

/// Counts every event twice per stream under the `notes` name: a changed `apply` without a new version.
struct DoublingProjection: Projection {
  var name = "notes"
  var version: UInt32 = 1
  var tables = ["by-id", "per-stream"]

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    let key = Array(event.stream.rawValue.utf8)
    let count = try state.row(UInt64.self, forKey: key, in: "per-stream") ?? 0
    try state.putRow(count + 2, forKey: key, in: "per-stream")
  }
}

@Suite("Replay failures")
struct ReplayFailureTests {
  @Test("a projection that fails during replay names the event, stops the reader, and does not hang")
  func failingReplay() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var options = EventStore.Options.fast
    options.replayChunkSize = 3
    try await withStore(at: path, options: options) { plain in
      for index in 0..<20 { try await plain.append([try note("n\(index)")], to: "s") }
      try await plain.append([try NewEvent(Poison(reason: "late"))], to: "s")
      for index in 0..<20 { try await plain.append([try note("m\(index)")], to: "s") }
    }
    // Opening with the projection must catch it up, and the poison event fails that, naming it.
    #expect(
      throws: EventStoreError.projectionFailed(
        projection: "notes", sequence: 21, underlying: PoisonError(reason: "late"))
    ) {
      _ = try EventStore(path: path, projections: [NotesProjection()], options: options)
    }
    options.readOnly = true
    let readOnly = try EventStore(path: path, projections: [NotesProjection()], options: options)
    #expect(
      throws: EventStoreError.projectionFailed(
        projection: "notes", sequence: 21, underlying: PoisonError(reason: "late"))
    ) {
      _ = try readOnly.replay()
    }
    let partial = try readOnly.replay(through: 20)
    #expect(partial.eventCount == 20)
  }

  /// Fails on the event at `failAt`.
  struct FailingAt: Projection {
    var name: String
    var version: UInt32 = 1
    var tables = ["seen"]
    var failAt: UInt64

    struct Failure: Error, CustomStringConvertible {
      var description: String { "failed on purpose" }
    }

    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      if event.sequence == failAt { throw Failure() }
      try state.put([1], forKey: Array("\(event.sequence)".utf8), in: "seen")
    }
  }

  @Test(
    "two projections failing in one chunk: the earliest event is named, and on one event the first projection",
    arguments: [(8, 5, "b", 5), (5, 8, "a", 5), (6, 6, "a", 6)] as [(UInt64, UInt64, String, UInt64)])
  func earliestFailure(_ a: UInt64, _ b: UInt64, _ name: String, _ sequence: UInt64) async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var options = EventStore.Options.fast
    options.replayChunkSize = 10
    try await withStore(at: path, options: options) { plain in
      for index in 0..<12 { try await plain.append([try note("n\(index)")], to: "s") }
    }
    let projections = [FailingAt(name: "a", failAt: a), FailingAt(name: "b", failAt: b)]
    // A writable open creates the projections' tables, then fails to catch them up.
    #expect(throws: EventStoreError.self) {
      _ = try EventStore(path: path, projections: projections, options: options)
    }
    options.readOnly = true
    let store = try EventStore(path: path, projections: projections, options: options)
    #expect(
      throws: EventStoreError.projectionFailed(
        projection: name, sequence: sequence, underlying: FailingAt.Failure())
    ) {
      _ = try store.replay()
    }
  }
}
