import Dispatch
import Foundation
import Synchronization
import TestKit
import Testing

@testable import EventLog

/// Issue 24, item 4: `EventStore.close()`.
@Suite("Closing a store")
struct CloseTests {
  let dir = TemporaryDirectory()

  @Test("after close every call throws .closed; closing again does nothing; the path opens again at once")
  func callsAfterClose() async throws {
    let path = dir.environment()
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    try await store.append([try note("kept")], to: "s")
    await store.close()
    await store.close()
    await #expect(throws: EventStoreError.closed) { try await store.append([try note("late")], to: "s") }
    #expect(throws: EventStoreError.closed) { try store.head() }
    #expect(throws: EventStoreError.closed) { try store.events() }
    #expect(throws: EventStoreError.closed) { try store.event(at: 1) }
    #expect(throws: EventStoreError.closed) { try store.version(of: "s") }
    #expect(throws: EventStoreError.closed) { try store.read { try $0.head() } }
    #expect(throws: EventStoreError.closed) { try store.replay() }
    #expect(throws: EventStoreError.closed) { try store.verify() }
    #expect(throws: EventStoreError.closed) { try store.storageInfo() }
    await #expect(throws: EventStoreError.closed) { try await store.rebuildProjections() }
    await #expect(throws: EventStoreError.closed) {
      for try await _ in store.changes({ $0 }) {}
    }
    // No wait for the last reference to go: the environment is closed, so it opens again.
    let reopened = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try reopened.head() == 1)
    #expect(try reopened.verify().problems.isEmpty)
    await reopened.close()
  }

  @Test("close waits for the append being committed and those queued behind it, and answers them")
  func waitsForTheWriter() async throws {
    let path = dir.environment()
    let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
    let release = DispatchSemaphore(value: 0)
    let holding = HoldingProjection(entered: enteredContinuation, release: release)
    let store = try EventStore(path: path, projections: [holding], options: .fast)
    let held = Task { try await store.append([try NewEvent(Hold())], to: "held") }
    for await _ in entered { break }  // the commit is in the projection, holding the writer
    let queued = Task { try await store.append([try note("queued")], to: "s") }
    for _ in 0..<5_000 where store.writer.pendingCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
    try #require(store.writer.pendingCount == 1, "the second append queued behind the held commit")
    let closed = Mutex(false)
    let closing = Task {
      await store.close()
      closed.withLock { $0 = true }
    }
    try await Task.sleep(for: .milliseconds(50))
    #expect(!closed.withLock { $0 }, "close returned while an append was being committed")
    release.signal()
    #expect(try await held.value.lastSequence == 1)
    #expect(try await queued.value.lastSequence == 2)
    await closing.value
    await #expect(throws: EventStoreError.closed) { try await store.append([try note("late")], to: "s") }
    let reopened = try EventStore(path: path, options: .fast)
    #expect(try reopened.events().map(\.type) == [Hold.eventType, NoteAdded.eventType])
    await reopened.close()
  }

  @Test("appends racing a close either commit and are answered, or throw .closed")
  func appendsRacingClose() async throws {
    let path = dir.environment()
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    let appends = (0..<40).map { index in
      Task { () -> UUID? in
        let event = try note("racer \(index)")
        do {
          try await store.append([event], to: StreamID("racer-\(index % 4)"))
          return event.id
        } catch EventStoreError.closed {
          return nil
        }
      }
    }
    await store.close()
    var committed: Set<UUID> = []
    for append in appends {
      if let id = try await append.value { committed.insert(id) }
    }
    let reopened = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(Set(try reopened.events().map(\.id)) == committed)
    #expect(try reopened.firstDifference(from: reopened.replay()) == nil)
    await reopened.close()
  }

  @Test("close ends the subscriptions, waiting ones included, before it returns")
  func endsSubscriptions() async throws {
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("first")], to: "s")
    let (started, startedContinuation) = AsyncStream<Void>.makeStream()
    let subscriber = Task { () -> [UInt64] in
      var seen: [UInt64] = []
      for try await event in store.subscribe() {
        seen.append(event.sequence)
        startedContinuation.yield()
      }
      return seen
    }
    for await _ in started { break }  // it saw event 1 and now waits for more
    await store.close()
    #expect(try await subscriber.value == [1])
    var iterator = store.subscribe().makeAsyncIterator()
    #expect(try await iterator.next() == nil, "a subscription of a closed store ends at once")
  }
}

// MARK: - Fixtures

/// An event whose fold waits for the test's signal.
private struct Hold: EventPayload {
  static let eventType = "Hold"
}

/// Folds ``Hold`` by saying so and then waiting for `release`: it keeps a commit (and so the
/// writer) busy for as long as a test needs.
private struct HoldingProjection: Projection {
  let entered: AsyncStream<Void>.Continuation
  let release: DispatchSemaphore
  var name: String { "holding" }
  var version: UInt32 { 1 }
  var tables: [String] { ["held"] }

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    guard event.is(Hold.self) else { return }
    entered.yield()
    release.wait()
    try state.put([1], forKey: Array(event.stream.rawValue.utf8), in: "held")
  }
}
