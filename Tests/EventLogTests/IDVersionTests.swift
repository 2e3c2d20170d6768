import Foundation
import TestKit
import Testing

@testable import EventLog

/// Logs written before event IDs were time-ordered hold version-4 (random) IDs; new events get
/// version-7 ones. Both kinds share one ID index.
@Suite("Version-4 and version-7 event IDs")
struct IDVersionTests {
  @Test(
    "a log of version-4 IDs reads, appends (idempotently too), replays and verifies with version-7 IDs added")
  func oldIDsStillWork() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let old = try (0..<20).map { try note("old \($0)", eventID: UUID()) }
    #expect(old.allSatisfy { UUIDv7Generator.milliseconds(of: $0.id) == nil })
    try await withStore(at: path, projections: [NotesProjection()]) { store in
      for (index, event) in old.enumerated() {
        try await store.append([event], to: StreamID("notes-\(index % 3)"))
      }
    }

    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    // Read: the stored IDs are the version-4 ones, in log order.
    #expect(try store.events(from: 1).map(\.id) == old.map(\.id))
    // Append: new events get version-7 IDs beside them.
    let new = try (0..<20).map { try NewEvent(NoteAdded(noteID: UUID(), text: "new \($0)", priority: 2)) }
    #expect(new.allSatisfy { UUIDv7Generator.milliseconds(of: $0.id) != nil })
    for (index, event) in new.enumerated() {
      try await store.append([event], to: StreamID("notes-\(index % 3)"))
    }
    // A version-4 ID appended after version-7 ones (an import, an old client) still goes in.
    let late = try note("late", eventID: UUID())
    try await store.append([late], to: "notes-late", expectedVersion: .noStream)
    #expect(try store.head() == 41)

    // Idempotency finds old and new IDs alike.
    let again = try await store.append([old[4]], to: "notes-1")
    #expect(again.alreadyStored)
    #expect(again.firstSequence == 5)
    let newAgain = try await store.append([new[7]], to: "notes-1")
    #expect(newAgain.alreadyStored)
    #expect(newAgain.firstSequence == 28)
    #expect(try store.head() == 41)
    #expect(try store.events(from: 1).map(\.id) == old.map(\.id) + new.map(\.id) + [late.id])

    // Replay and verify.
    let replay = try store.replay()
    #expect(replay.eventCount == 41)
    #expect(try store.firstDifference(from: replay) == nil)
    #expect(try replayedTables(store, replay) == liveTables(store))
    #expect(try liveTables(store)["notes/by-id"]?.count == 41)
    let report = try store.verify()
    #expect(report.isClean, "\(report.problems)")
  }
}
