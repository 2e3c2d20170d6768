import Foundation
import LMDB
import ReviewEntity
import TestKit
import Testing

@testable import EventLog

/// The table engine's convergent rule, event by event: a table with updates folds each row's
/// events in stamp order, whatever order they arrive in; a delete's tombstone holds off later
/// updates; live, replay, a comparison's catch-up and a rebuild give the same tables.
@Suite("Tables with updates: the convergent rule")
struct ConvergentTableTests {
  static let start = Date(microsecondsSince1970: 1_800_000_000_000_000)
  static let restaurant = UUID(uuidString: "11111111-1111-4111-8111-111111111111") ?? UUID()

  static func review(_ id: UUID, rating: Int = 3) -> Review {
    Review(
      id: id, restaurantID: restaurant, author: "ada", rating: rating, title: "first", text: "text",
      postedAt: start)
  }

  /// The microseconds since 1970 of `seconds` after the start.
  static func micros(_ seconds: Double) -> Int64 { start.addingTimeInterval(seconds).microsecondsSince1970 }

  /// `payload` as an event recorded elsewhere `seconds` after the start.
  static func at(
    _ seconds: Double, _ payload: some EventPayload, stream id: UUID
  ) throws -> EventStore.IngestedEvent {
    var event = try NewEvent(payload)
    event.recordedAt = start.addingTimeInterval(seconds)
    return EventStore.IngestedEvent(stream: Reviews.stream(id), event: event)
  }

  func open(_ dir: TemporaryDirectory, chunk: Int = 2_048) throws -> EventStore {
    var options = EventStore.Options.fast
    options.replayChunkSize = chunk
    return try EventStore(path: dir.environment(), projections: [Reviews.projection], options: options)
  }

  func rows(_ store: EventStore) throws -> [Review] {
    try store.read { try Reviews.projection.reader(in: $0).rows() }
  }

  func byRating(_ store: EventStore) throws -> [Int] {
    try store.read { try Reviews.projection.reader(in: $0).rows(in: Reviews.byRating).map(\.rating) }
  }

  /// The row's entry in the stamps table: its latest stamp's microseconds and its streams.
  func stamps(_ store: EventStore, _ id: UUID) throws -> (latest: Int64, streams: [String])? {
    try store.read { snapshot in
      try TableKey.uuid(id).bytes.withUnsafeBytes { key in
        try snapshot.projection("reviews").withValue(forKey: key, in: TableProjection<Review>.stampsTable) {
          entry in
          (
            Stamp(stored: entry).microseconds,
            RowStamps.streams(entry).map { String(decoding: $0, as: UTF8.self) }
          )
        }
      }
    }
  }

  @Test("an update older than the row's latest is folded in under it; the indexes follow")
  func lateUpdate() async throws {
    let dir = TemporaryDirectory()
    let store = try open(dir)
    let id = UUID()
    try await store.ingest([
      try Self.at(0, ReviewEntity.ReviewPosted(review: Self.review(id)), stream: id),
      try Self.at(20, ReviewRated(id: id, rating: 5), stream: id),
      try Self.at(30, ReviewRetitled(id: id, title: "latest"), stream: id),
    ])
    // From a device that was apart: older than the latest edits, a field the latest left alone.
    try await store.ingest([
      try Self.at(10, ReviewRated(id: id, rating: 1), stream: id),
      try Self.at(15, ReviewReworded(id: id, text: "edited apart"), stream: id),
    ])
    var expected = Self.review(id, rating: 5)
    expected.title = "latest"
    expected.text = "edited apart"
    #expect(try rows(store) == [expected])
    #expect(try byRating(store) == [5])
    let entry = try #require(try stamps(store, id))
    #expect(entry.latest == Self.micros(30))
    #expect(entry.streams == [Reviews.stream(id).rawValue])
    // Now one older than everything but the post, changing the rating the latest rating keeps.
    try await store.ingest([try Self.at(5, ReviewRated(id: id, rating: 2), stream: id)])
    #expect(try rows(store) == [expected])
    #expect(try store.firstDifference(from: store.replay()) == nil)
    #expect(try store.verify().isClean)
  }

  @Test("a delete wins over concurrent and late updates; its tombstone replaces the row's list")
  func deleteWins() async throws {
    let dir = TemporaryDirectory()
    let store = try open(dir)
    let (kept, deleted) = (UUID(), UUID())
    try await store.ingest([
      try Self.at(0, ReviewEntity.ReviewPosted(review: Self.review(kept)), stream: kept),
      try Self.at(0, ReviewEntity.ReviewPosted(review: Self.review(deleted)), stream: deleted),
      try Self.at(10, ReviewRated(id: deleted, rating: 4), stream: deleted),
      try Self.at(20, ReviewDeleted(id: deleted), stream: deleted),
    ])
    #expect(try stamps(store, deleted)?.latest == Self.micros(20), "the tombstone")
    // Edits from a device that had not seen the delete: one stamped after it, one before.
    try await store.ingest([
      try Self.at(25, ReviewRetitled(id: deleted, title: "after the delete"), stream: deleted),
      try Self.at(15, ReviewReworded(id: deleted, text: "before the delete"), stream: deleted),
    ])
    #expect(try rows(store).map(\.id) == [kept])
    #expect(try stamps(store, deleted)?.latest == Self.micros(25))
    #expect(try byRating(store) == [3])
    // A delete of a review this device never saw leaves a tombstone: its post, arriving later
    // and stamped before it, stays deleted.
    let unseen = UUID()
    try await store.ingest([try Self.at(40, ReviewDeleted(id: unseen), stream: unseen)])
    try await store.ingest([
      try Self.at(35, ReviewEntity.ReviewPosted(review: Self.review(unseen)), stream: unseen)
    ])
    #expect(try rows(store).map(\.id) == [kept])
    // A post stamped after the delete makes the row again (a new row under the same key).
    try await store.ingest([
      try Self.at(50, ReviewEntity.ReviewPosted(review: Self.review(unseen, rating: 1)), stream: unseen)
    ])
    #expect(Set(try rows(store).map(\.id)) == [kept, unseen])
    #expect(try store.firstDifference(from: store.replay()) == nil)
    #expect(try store.verify().isClean)
  }

  @Test(
    "a refold reads every stream the row's events are in, only up to the event (time travel), never a skipped event"
  )
  func refoldReadsWhatItShould() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(
      path: dir.environment(), projections: [Reviews.projection], admission: NoForbiddenTitles(),
      options: .fast)
    let id = UUID()
    let elsewhere = StreamID("moderation")
    func inStream(_ event: EventStore.IngestedEvent, _ stream: StreamID) -> EventStore.IngestedEvent {
      EventStore.IngestedEvent(stream: stream, event: event.event)
    }
    try await store.ingest([
      try Self.at(0, ReviewEntity.ReviewPosted(review: Self.review(id)), stream: id),
      try Self.at(20, ReviewRated(id: id, rating: 5), stream: id),
      inStream(try Self.at(25, ReviewReworded(id: id, text: "moderated"), stream: id), elsewhere),
      try Self.at(27, ReviewRetitled(id: id, title: "forbidden"), stream: id),  // skipped
    ])
    #expect(try store.skippedCount() == 1)
    // Older than the latest: the row is folded again from both streams, without the skipped one.
    try await store.ingest([try Self.at(10, ReviewRated(id: id, rating: 1), stream: id)])
    var expected = Self.review(id, rating: 5)
    expected.text = "moderated"
    #expect(try rows(store) == [expected])
    #expect(try stamps(store, id)?.streams == [Reviews.stream(id).rawValue, "moderation"])
    // A later rating: replaying through the refold's event must not see it.
    try await store.ingest([try Self.at(30, ReviewRated(id: id, rating: 3), stream: id)])
    let before = try Reviews.projection.reader(in: store.replay(through: 5)).rows()
    #expect(before.map(\.rating) == [5])
    #expect(try rows(store).map(\.rating) == [3])
    #expect(try rows(store) == (try Reviews.expectedRows(store.events().filter { $0.sequence != 4 })))
    #expect(try store.firstDifference(from: store.replay()) == nil)
  }

  @Test(
    "a row whose events a build without the types stored as JSON is folded again, in stamp order, by one that reads them"
  )
  func refoldConvertsJSONPayloads() async throws {
    let dir = TemporaryDirectory()
    let id = UUID()
    let events: [(Double, any EventPayload)] = [
      (0, ReviewEntity.ReviewPosted(review: Self.review(id))), (20, ReviewRated(id: id, rating: 5)),
      (10, ReviewRated(id: id, rating: 1)),  // late: the rebuild folds the row again
    ]
    // A build that does not know the review types stores them as JSON, unreadable.
    try await withStore(at: dir.environment()) { store in
      let ingested = try events.map { seconds, payload in
        EventStore.IngestedEvent(
          stream: Reviews.stream(id),
          event: try store.event(
            id: UUID(), type: type(of: payload).eventType, schemaVersion: 1,
            payloadJSON: try PayloadJSONEncoder().encode(payload), metadata: EventMetadata(origin: "server"),
            recordedAt: Self.start.addingTimeInterval(seconds)))
      }
      #expect(ingested.allSatisfy { $0.event.payloadEncoding == .json })
      try await store.ingest(ingested)
      #expect(try store.skippedCount() == 3)
    }
    // One that knows them readmits them and rebuilds the table, refold included.
    let store = try EventStore(path: dir.environment(), schema: Reviews.schema, options: .fast)
    #expect(try store.skippedCount() == 0)
    #expect(try rows(store).map(\.rating) == [5])
    #expect(try store.firstDifference(from: store.replay()) == nil)
    #expect(try store.verify().isClean)
  }

  @Test("an update of a key never seen fails as ifMissing says; after a delete it changes nothing")
  func missingRows() async throws {
    let dir = TemporaryDirectory()
    let store = try open(dir)
    let id = UUID()
    await #expect(throws: EventStoreError.self) {
      try await store.append([try NewEvent(ReviewRated(id: id, rating: 2))], to: Reviews.stream(id))
    }
    #expect(try store.head() == 0)
    try await store.append(
      [try NewEvent(ReviewEntity.ReviewPosted(review: Self.review(id)))], to: Reviews.stream(id))
    try await store.append([try NewEvent(ReviewDeleted(id: id))], to: Reviews.stream(id))
    try await store.append([try NewEvent(ReviewRated(id: id, rating: 2))], to: Reviews.stream(id))
    #expect(try rows(store).isEmpty)
    #expect(try store.head() == 3)
  }

  @Test(
    "live, replay (across chunks), a comparison that folds events appended since the replay, and a rebuild agree",
    arguments: [1, 3, 2_048])
  func everyFoldAgrees(chunk: Int) async throws {
    let dir = TemporaryDirectory()
    var store: EventStore? = try open(dir, chunk: chunk)
    var random = SplitMix64(seed: UInt64(chunk))
    let ids = (0..<4).map { _ in random.uuid() }
    for id in ids {
      try await store?.ingest([try Self.at(0, ReviewEntity.ReviewPosted(review: Self.review(id)), stream: id)]
      )
    }
    func edits(_ count: Int) throws -> [EventStore.IngestedEvent] {
      try (0..<count).map { _ in
        let id = ids[Int(random.next() % 4)]
        let time = Double(1 + random.next() % 1_000)
        return switch random.next() % 5 {
        case 0: try Self.at(time, ReviewDeleted(id: id), stream: id)
        case 1: try Self.at(time, ReviewRetitled(id: id, title: "t\(time)"), stream: id)
        case 2: try Self.at(time, ReviewReworded(id: id, text: "x\(time)"), stream: id)
        default: try Self.at(time, ReviewRated(id: id, rating: Int(1 + random.next() % 5)), stream: id)
        }
      }
    }
    for _ in 0..<10 { try await store?.ingest(try edits(5)) }
    let replay = try #require(try store?.replay())
    // Appended after the replay: folded into it in the comparison's read transaction.
    try await store?.ingest(try edits(12))
    #expect(try store?.firstDifference(from: replay) == nil)
    let live = try rows(try #require(store))
    #expect(try Reviews.projection.reader(in: replay).rows() == live)
    #expect(live == (try Reviews.expectedRows(try #require(store).events())))
    try await store?.rebuildProjections()
    #expect(try rows(try #require(store)) == live)
    // Rebuilt on open from a new version, too.
    await close(&store)
    store = try open(dir, chunk: chunk)
    #expect(try store?.verify().isClean == true)
  }

  @Test(
    "a table with updates stores the rule's revision in its version and has a stamps table; one without, neither"
  )
  func versionsAndTables() {
    #expect(Reviews.projection.version == 0x0200_0001)
    #expect(Reviews.projection.tables == ["by-id", "by-restaurant", "by-rating", ".stamps", ".conflicts"])
    let postsOnly = TableProjection<Review>(
      name: "posts", version: 7, primaryKey: .uuid(\.id),
      handlers: [
        .create(ReviewEntity.ReviewPosted.self) { $0.review }, .delete(ReviewDeleted.self, key: \.id),
      ])
    #expect(postsOnly.version == 7)
    #expect(postsOnly.tables == ["by-id"])
  }

  @Test(
    "a table an engine without the rule built (its version without the revision) is rebuilt on open, stamps and all"
  )
  func olderEngineTablesAreRebuilt() async throws {
    let dir = TemporaryDirectory()
    let id = UUID()
    var store: EventStore? = try open(dir)
    try await store?.append(
      [try NewEvent(ReviewEntity.ReviewPosted(review: Self.review(id)))], to: Reviews.stream(id))
    try await store?.append([try NewEvent(ReviewRated(id: id, rating: 5))], to: Reviews.stream(id))
    await close(&store)
    // As an older engine leaves it: version 1, no stamps.
    try withRaw(dir.environment()) { environment in
      let checkpoints = try environment.openDatabase("projections", flags: [])
      let stamps = try environment.openDatabase("p:reviews:.stamps", flags: [])
      try environment.write { txn in
        try txn.removeAll(in: stamps)
        let value = Schema.encode(.following(version: 1))
        try txn.put(value, forKey: Array("reviews".utf8), in: checkpoints)
      }
    }
    store = try open(dir)
    #expect(try stamps(try #require(store), id)?.streams == [Reviews.stream(id).rawValue])
    #expect(try store?.verify().isClean == true)
  }

  @Test(
    "read-only, a table an engine without the rule built (no .stamps) reads its rows, and verify names its version"
  )
  func readOnlyBeforeTheRule() async throws {
    let dir = TemporaryDirectory()
    let id = UUID()
    // As a build before the rule left it: the same table, version 1, no `.stamps`.
    let before = TableProjection<Review>(
      name: "reviews", version: 1, primaryKey: .uuid(\.id),
      indexes: [Reviews.byRestaurant, Reviews.byRating],
      handlers: [
        .create(ReviewEntity.ReviewPosted.self) { $0.review }, .delete(ReviewDeleted.self, key: \.id),
      ])
    try await withStore(at: dir.environment(), projections: [before]) { store in
      try await store.append(
        [try NewEvent(ReviewEntity.ReviewPosted(review: Self.review(id)))], to: Reviews.stream(id))
    }
    var options = EventStore.Options.fast
    options.readOnly = true
    let store = try EventStore(path: dir.environment(), projections: [Reviews.projection], options: options)
    #expect(try rows(store).map(\.id) == [id])
    let report = try store.verify()
    #expect(
      report.problems.contains { $0.problem.contains("stored at version 1, code is at 33554433") },
      "\(report)")
  }

  @Test(
    "read-only, a table the rule's first revision built (no .conflicts) lists no conflicts, without failing")
  func readOnlyBeforeConflicts() async throws {
    let dir = TemporaryDirectory()
    let id = UUID()
    try await withStore(at: dir.environment(), projections: [RevisionOne()]) { store in
      try await store.append(
        [try NewEvent(ReviewEntity.ReviewPosted(review: Self.review(id)))], to: Reviews.stream(id))
      try await store.append([try NewEvent(ReviewRated(id: id, rating: 2))], to: Reviews.stream(id))
    }
    var options = EventStore.Options.fast
    options.readOnly = true
    let store = try EventStore(path: dir.environment(), projections: [Reviews.projection], options: options)
    #expect(store.conflictTables == ["reviews"])
    #expect(try store.conflicts().isEmpty)
    #expect(try rows(store).map(\.rating) == [2])
  }

  /// The table as the rule's first revision stored it: `.stamps`, no `.conflicts`.
  struct RevisionOne: Projection {
    var name: String { Reviews.projection.name }
    var version: UInt32 { 0x0100_0001 }
    var tables: [String] { Reviews.projection.tables.filter { $0 != TableProjection<Review>.conflictsTable } }
    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      try Reviews.projection.apply(event, to: state)
    }
  }

  private func withRaw(_ path: String, _ body: (Environment) throws -> Void) throws {
    var options = Environment.Options()
    options.maxDatabases = 32
    try body(try Environment(path: path, options: options))
  }
}

/// Refuses reviews titled "forbidden": such an event is stored and skipped.
struct NoForbiddenTitles: EventAdmission {
  func verdict(for event: RecordedEvent) -> EventVerdict {
    guard event.type == ReviewRetitled.eventType else { return .admitted }
    return (try? event.decode(ReviewRetitled.self))?.title == "forbidden"
      ? .invalid(reason: "forbidden") : .admitted
  }
}
