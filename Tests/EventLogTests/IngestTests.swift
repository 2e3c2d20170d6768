import EventLog
import Foundation
import TestKit
import Testing

/// Events from elsewhere: stored as they came, each on its own, with state in the same
/// transaction; those the admission does not admit are stored and skipped by the projections.
@Suite("Ingest, skipped events and state")
struct IngestTests {
  @Test func ingestKeepsTheEventAndGivesItLocalPositions() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), projections: [NotesProjection()]) { store in
      try await store.append([try note("local")], to: "s")
      var foreign = try note("from elsewhere", eventID: Self.eventID)
      foreign.recordedAt = Self.recordedAt
      foreign.metadata = EventMetadata(correlationID: Self.correlation, origin: "phone")
      let outcomes = try await store.ingest([IngestedEvent(stream: "s", event: foreign)]) { outcomes in
        [.put(Array("test.cursor".utf8), Array("\(outcomes.count)".utf8))]
      }
      #expect(outcomes == [.stored(sequence: 2)])
      let stored = try #require(try store.event(at: 2))
      #expect(stored.id == Self.eventID)
      #expect(stored.version == 2)
      #expect(stored.recordedAt == Self.recordedAt)
      #expect(stored.metadata == foreign.metadata)
      #expect(stored.payload == foreign.payload)
      #expect(try store.stateValue(forKey: Array("test.cursor".utf8)) == Array("1".utf8))
      #expect(
        try liveTables(store)["notes/per-stream"]?[Array("s".utf8)] == (try BinaryEncoder().encode(UInt64(2)))
      )

      // Again, and twice in one batch: stored once.
      let again = try await store.ingest([
        IngestedEvent(stream: "s", event: foreign),
        IngestedEvent(stream: "t", event: try note("x", eventID: Self.other)),
        IngestedEvent(stream: "t", event: try note("x", eventID: Self.other)),
      ])
      #expect(again == [.alreadyPresent(sequence: 2), .stored(sequence: 3), .alreadyPresent(sequence: 3)])
      #expect(try store.head() == 3)
      #expect(try store.verify().isClean)
    }
  }

  @Test func anEventThatCannotBeStoredIsRefusedAndTheOthersAreStored() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment()) { store in
      let outcomes = try await store.ingest([
        IngestedEvent(stream: "", event: try note("no stream")),
        IngestedEvent(stream: "s", event: try note("fine")),
      ])
      guard case .refused(let reason) = outcomes.first else {
        Issue.record("expected a refusal, got \(outcomes)")
        return
      }
      #expect(reason.contains("empty"))
      #expect(outcomes.last == .stored(sequence: 1))
    }
  }

  @Test func eventsTheAdmissionRefusesAreStoredButSkipped() async throws {
    let dir = TemporaryDirectory()
    let admission = NotesAdmission(readsFutureNotes: false)
    var store: EventStore? = try EventStore(
      path: dir.environment(), projections: [NotesProjection()], admission: admission, options: .fast)
    let outcomes = try await store?.ingest([
      IngestedEvent(stream: "s", event: try note("one")),
      IngestedEvent(stream: "s", event: try Self.futureNote()),
      IngestedEvent(stream: "s", event: try note("forbidden")),
      IngestedEvent(stream: "s", event: try note("two")),
    ])
    #expect(outcomes?[0] == .stored(sequence: 1))
    #expect(outcomes?[1] == .skipped(sequence: 2, kind: .unreadable, reason: "FutureNote is not known here"))
    #expect(outcomes?[2] == .skipped(sequence: 3, kind: .invalid, reason: "a note may not say 'forbidden'"))
    #expect(outcomes?[3] == .stored(sequence: 4))
    // Two notes folded; the skipped events counted nowhere, live and in replay alike.
    let live = try #require(try store.map(liveTables))
    #expect(live["notes/per-stream"]?[Array("s".utf8)] == (try BinaryEncoder().encode(UInt64(2))))
    #expect(live["notes/by-id"]?.count == 2)
    let replay = try #require(try store?.replay())
    #expect(try store.map { try replayedTables($0, replay) } == live)
    let report = try #require(try store?.verify())
    #expect(report.isClean, "\(report.problems)")
    #expect(report.skipped.map(\.sequence) == [2, 3])
    #expect(try store?.skippedCount() == 2)
    // A catch-up after a reopen skips them too.
    await close(&store)
    store = try EventStore(
      path: dir.environment(), projections: [NotesProjection(version: 2)], admission: admission,
      options: .fast)
    #expect(try store.map(liveTables) == live)
    await close(&store)
  }

  @Test func aLaterBuildThatReadsASkippedEventFoldsItInItsPlace() async throws {
    let dir = TemporaryDirectory()
    var store: EventStore? = try EventStore(
      path: dir.environment(), projections: [NotesProjection()],
      admission: NotesAdmission(readsFutureNotes: false),
      options: .fast)
    try await store?.ingest([
      IngestedEvent(stream: "s", event: try note("one")),
      IngestedEvent(stream: "s", event: try Self.futureNote()),
    ])
    try await store?.append([try note("two")], to: "s")
    await close(&store)
    // The newer build knows FutureNote: on open, the event is no longer skipped, and the
    // projections count it.
    store = try EventStore(
      path: dir.environment(), projections: [NotesProjection()],
      admission: NotesAdmission(readsFutureNotes: true),
      options: .fast)
    #expect(try store?.skippedCount() == 0)
    #expect(
      try store.map(liveTables)?["notes/per-stream"]?[Array("s".utf8)]
        == (try BinaryEncoder().encode(UInt64(3))))
    #expect(try store?.verify().isClean == true)
    await close(&store)
  }

  /// Issue 21: a pulled event that a projection throws on failed the pull for good. It is stored
  /// and skipped (kind `refused`) instead, the events around it folded; replay and verify agree.
  @Test func anEventAProjectionRefusesIsStoredAndSkipped() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), projections: [NotesProjection()]) { store in
      let outcomes = try await store.ingest([
        IngestedEvent(stream: "s", event: try note("before")),
        IngestedEvent(stream: "s", event: try NewEvent(Poison(reason: "from another device"))),
        IngestedEvent(stream: "s", event: try note("after")),
      ])
      #expect(outcomes.first == .stored(sequence: 1) && outcomes.last == .stored(sequence: 3))
      guard case .skipped(2, .refused, let reason) = outcomes[1] else {
        Issue.record("expected the poison skipped as refused, got \(outcomes)")
        return
      }
      #expect(reason.contains("'notes'") && reason.contains("poisoned: from another device"))
      #expect(
        try liveTables(store)["notes/per-stream"]?[Array("s".utf8)] == (try BinaryEncoder().encode(UInt64(2)))
      )
      #expect(try store.verify().isClean)
      #expect(try store.firstDifference(from: store.replay()) == nil)
    }
  }

  /// A skipped event that a newer build admits, but that a projection throws on when the open
  /// folds it in: the open goes on with the event skipped as `refused`, and later opens do not
  /// try it again.
  @Test func aReadmittedEventAProjectionRefusesDoesNotFailTheOpen() async throws {
    let dir = TemporaryDirectory()
    var store: EventStore? = try EventStore(
      path: dir.environment(), projections: [NotesProjection()], admission: PoisonAdmission(reads: false),
      options: .fast)
    try await store?.ingest([
      IngestedEvent(stream: "s", event: try note("one")),
      IngestedEvent(stream: "s", event: try NewEvent(Poison(reason: "newer"))),
    ])
    #expect(try store?.skippedEvents().map(\.kind) == [.unreadable])
    await close(&store)
    for _ in 0..<2 {
      store = try EventStore(
        path: dir.environment(), projections: [NotesProjection()], admission: PoisonAdmission(reads: true),
        options: .fast)
      #expect(try store?.skippedEvents().map(\.kind) == [.refused])
      #expect(try store?.verify().isClean == true)
      await close(&store)
    }
  }

  @Test func verifyFindsAnEventThatBreaksTheRulesInALogWrittenWithoutTheCheck() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), projections: [NotesProjection()]) { store in
      try await store.append([try note("fine"), try note("forbidden")], to: "s")
    }
    var store: EventStore? = try EventStore(
      path: dir.environment(), projections: [NotesProjection()],
      admission: NotesAdmission(readsFutureNotes: false),
      options: .fast)
    let report = try #require(try store?.verify())
    #expect(!report.isClean)
    #expect(report.problems.map(\.sequence) == [2])
    #expect(report.problems.first?.problem.contains("'forbidden'") == true)
    await close(&store)
  }

  @Test func stateChangesAndPrefixReads() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment()) { store in
      try await store.updateState([
        .put(Array("a.1".utf8), [1]), .put(Array("a.2".utf8), [2]), .put(Array("b.1".utf8), [3]),
      ])
      #expect(try store.stateEntries(withPrefix: Array("a.".utf8)).map(\.value) == [[1], [2]])
      try await store.updateState([.delete(Array("a.1".utf8))])
      #expect(try store.stateEntries(withPrefix: Array("a.".utf8)).map(\.key) == [Array("a.2".utf8)])
      #expect(try store.stateValue(forKey: Array("b.1".utf8)) == [3])
      await #expect(throws: EventStoreError.self) { try await store.updateState([.put([], [1])]) }
    }
  }

  @Test func theDeviceIDIsCreatedWithTheEnvironmentAndKept() async throws {
    let dir = TemporaryDirectory()
    var first: UUID?
    try await withStore(at: dir.environment()) { first = $0.deviceID }
    #expect(first != nil)
    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    try await withStore(at: dir.environment(), options: readOnly) { #expect($0.deviceID == first) }
    try await withStore(at: dir.environment()) { #expect($0.deviceID == first) }
    let other = TemporaryDirectory()
    try await withStore(at: other.environment()) { #expect($0.deviceID != first) }
  }

  @Test func recordedAtTimesComeThroughToTheMicrosecond() async throws {
    let dir = TemporaryDirectory()
    var random = SplitMix64(seed: 17)
    let micros = (0..<2_000).map { _ in Int64(random.next() % 4_102_444_800_000_000) }
    try await withStore(at: dir.environment()) { store in
      let events = try micros.map { value in
        var event = try note("t")
        event.recordedAt = Date(microsecondsSince1970: value)
        return IngestedEvent(stream: "s", event: event)
      }
      try await store.ingest(events)
      let stored = try store.events(from: 1, limit: micros.count).map(\.recordedAt.microsecondsSince1970)
      #expect(stored == micros)
    }
  }

  static let eventID = UUID(uuidString: "11111111-2222-4333-8444-555555555555") ?? UUID()
  static let other = UUID(uuidString: "21111111-2222-4333-8444-555555555555") ?? UUID()
  static let correlation = UUID(uuidString: "31111111-2222-4333-8444-555555555555") ?? UUID()
  static let recordedAt = Date(timeIntervalSince1970: 1_700_000_000.123456)

  static func futureNote() throws -> NewEvent {
    NewEvent(id: UUID(), type: "FutureNote", schemaVersion: 1, payload: [1, 2, 3], metadata: EventMetadata())
  }
}

/// Notes must not say "forbidden"; `FutureNote` is known only to a "newer build".
struct NotesAdmission: EventAdmission {
  var readsFutureNotes: Bool

  func verdict(for event: RecordedEvent) -> EventVerdict {
    switch event.type {
    case NoteAdded.eventType:
      guard let added = try? event.decode(NoteAdded.self) else { return .invalid(reason: "does not decode") }
      return added.text == "forbidden" ? .invalid(reason: "a note may not say 'forbidden'") : .admitted
    case "FutureNote":
      return readsFutureNotes ? .admitted : .unreadable(reason: "FutureNote is not known here")
    default:
      return .admitted
    }
  }
}

/// `Poison` is unknown to an older build and read by a newer one.
struct PoisonAdmission: EventAdmission {
  var reads: Bool

  func verdict(for event: RecordedEvent) -> EventVerdict {
    event.type == Poison.eventType && !reads ? .unreadable(reason: "Poison is not known here") : .admitted
  }
}
