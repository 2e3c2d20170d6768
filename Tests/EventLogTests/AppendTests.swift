import Foundation
import TestKit
import Testing

@testable import EventLog

@Suite("Appends")
struct AppendTests {
  @Test("1,000 concurrent appending tasks get a gap-free sequence and every event is stored once")
  func concurrentAppends() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()])
    let results = try await withThrowingTaskGroup(of: AppendResult.self) { group in
      for index in 0..<1_000 {
        group.addTask {
          try await store.append(
            [try note("n\(index)"), try note("m\(index)")], to: StreamID("notes-\(index % 10)"))
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(try store.head() == 2_000)
    let sequences = results.flatMap { $0.events.map(\.sequence) }.sorted()
    #expect(sequences == Array(1...2_000))
    for result in results {
      // Each caller's events are contiguous: group commit never interleaves two callers.
      #expect(result.lastSequence == result.firstSequence + 1)
    }
    for stream in 0..<10 {
      let events = try store.events(in: StreamID("notes-\(stream)"))
      #expect(events.map(\.version) == Array(1...200))
    }
    #expect(try store.verify().isClean)
  }

  @Test("in one group commit, a caller's conflict fails only that caller")
  func groupCommitIsolation() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()])
    try await store.append([try note("seed")], to: "contended")
    let outcomes = await withTaskGroup(of: (Int, Result<AppendResult, any Error>).self) { group in
      for index in 0..<200 {
        group.addTask {
          // Every caller expects version 1; exactly one can win.
          let result = await outcome {
            try await store.append(
              [try note("a\(index)"), try note("b\(index)")], to: "contended", expectedVersion: .exactly(1))
          }
          return (index, result)
        }
        group.addTask {
          let result = await outcome {
            try await store.append([try note("free\(index)")], to: StreamID("free-\(index)"))
          }
          return (1_000 + index, result)
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    let contended = outcomes.filter { $0.0 < 1_000 }.map(\.1)
    let winners = contended.compactMap { try? $0.get() }
    #expect(winners.count == 1)
    for outcome in contended {
      if case .failure(let error) = outcome {
        #expect(
          error as? EventStoreError
            == .wrongExpectedVersion(stream: "contended", expected: .exactly(1), actual: 3))
      }
    }
    let free = outcomes.filter { $0.0 >= 1_000 }.map(\.1)
    #expect(free.allSatisfy { (try? $0.get()) != nil })
    #expect(try store.head() == 1 + 2 + 200)
    #expect(try store.version(of: "contended") == 3)
    #expect(try store.verify().isClean)
  }

  @Test("expected versions: any, no stream, exactly n")
  func expectedVersions() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("1")], to: "s", expectedVersion: .noStream)
    await #expect(throws: EventStoreError.wrongExpectedVersion(stream: "s", expected: .noStream, actual: 1)) {
      try await store.append([try note("x")], to: "s", expectedVersion: .noStream)
    }
    await #expect(throws: EventStoreError.wrongExpectedVersion(stream: "s", expected: .exactly(0), actual: 1))
    {
      try await store.append([try note("x")], to: "s", expectedVersion: .exactly(0))
    }
    let second = try await store.append(
      [try note("2"), try note("3")], to: "s", expectedVersion: .exactly(1))
    #expect(second.events.map(\.version) == [2, 3])
    try await store.append([try note("4")], to: "s", expectedVersion: .any)
    #expect(try store.version(of: "s") == 4)
    #expect(try store.version(of: "nothing") == 0)
    #expect(try store.head() == 4)
  }

  @Test("several streams in one append: all stored or none")
  func multiStreamAtomicity() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    try await store.append([try note("b1")], to: "b")
    await #expect(throws: EventStoreError.wrongExpectedVersion(stream: "b", expected: .noStream, actual: 1)) {
      try await store.append([
        StreamAppend(stream: "a", expectedVersion: .noStream, events: [try note("a1")]),
        StreamAppend(stream: "b", expectedVersion: .noStream, events: [try note("b2")]),
      ])
    }
    #expect(try store.head() == 1)
    #expect(try store.version(of: "a") == 0)
    let both = try await store.append([
      StreamAppend(stream: "a", expectedVersion: .noStream, events: [try note("a1")]),
      StreamAppend(stream: "b", expectedVersion: .exactly(1), events: [try note("b2")]),
      StreamAppend(stream: "a", expectedVersion: .exactly(1), events: [try note("a2")]),
    ])
    #expect(both.events.map(\.sequence) == [2, 3, 4])
    #expect(both.events.map(\.version) == [1, 2, 2])
  }

  @Test("the same batch appended 1,000 times is stored once and returns its positions")
  func idempotentAppends() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()])
    let batch = try (0..<5).map { try note("same \($0)") }
    let first = try await store.append(batch, to: "idem", expectedVersion: .noStream)
    #expect(!first.alreadyStored)
    try await withThrowingTaskGroup(of: AppendResult.self) { group in
      for _ in 0..<1_000 {
        group.addTask { try await store.append(batch, to: "idem", expectedVersion: .noStream) }
      }
      for try await again in group {
        #expect(again.alreadyStored)
        #expect(again.events == first.events)
      }
    }
    #expect(try store.head() == 5)
    #expect(try store.version(of: "idem") == 5)
    let counts = try liveTables(store)["notes/per-stream"]
    #expect(counts?.count == 1)
  }

  @Test("idempotency survives reopening the environment")
  func durableIdempotency() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let event = try note("once")
    var store: EventStore? = try EventStore(path: path)
    try await store?.append([event], to: "s")
    await close(&store)
    let reopened = try EventStore(path: path)
    let again = try await reopened.append([event], to: "s", expectedVersion: .noStream)
    #expect(again.alreadyStored)
    #expect(again.firstSequence == 1)
    #expect(try reopened.head() == 1)
  }

  @Test("rejected appends store nothing", arguments: RejectedAppend.allCases)
  func rejections(kind: RejectedAppend) async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    let stored = try note("stored")
    try await store.append([stored], to: "s")
    let before = try liveTables(store)
    await #expect(throws: EventStoreError.self) {
      switch kind {
      case .empty: try await store.append([], to: "s")
      case .emptyStream: try await store.append([try note("x")], to: "")
      case .streamWithNUL: try await store.append([try note("x")], to: "a\u{0}b")
      case .longStream:
        try await store.append([try note("x")], to: StreamID(String(repeating: "s", count: 401)))
      case .duplicateIDs:
        let id = UUID()
        try await store.append([try note("x", eventID: id), try note("y", eventID: id)], to: "s")
      case .partiallyStored: try await store.append([stored, try note("new")], to: "s")
      case .emptyType:
        try await store.append(
          [NewEvent(id: UUID(), type: "", schemaVersion: 1, payload: [], metadata: EventMetadata())], to: "s")
      case .projectionFails:
        try await store.append([try note("ok"), try NewEvent(Poison(reason: "test"))], to: "s")
      }
    }
    #expect(try store.head() == 1)
    #expect(try liveTables(store) == before)
    // The writer goes on working.
    try await store.append([try note("after")], to: "s")
    #expect(try store.head() == 2)
  }

  @Test("appends that wait while a commit runs share the next commit (group commit)")
  func groupCommitShares() async throws {
    let dir = TemporaryDirectory()
    // Durable commits (an fsync each) are slow enough for the other callers to queue up.
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()])
    let before = try store.environment.info().lastTransaction
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<32 {
        group.addTask {
          for index in 0..<10 {
            try await store.append([try note("\(task)-\(index)")], to: StreamID("writer-\(task)"))
          }
        }
      }
      try await group.waitForAll()
    }
    let commits = try store.environment.info().lastTransaction - before
    #expect(try store.head() == 320)
    // One commit per append would be 320; the callers that queue share commits.
    #expect(commits < 160, "320 appends took \(commits) commits")
  }

  @Test("a projection failure in a group commit fails only the append that carried it")
  func projectionFailureIsolation() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    let outcomes = await withTaskGroup(of: Bool.self) { group in
      for index in 0..<100 {
        group.addTask {
          let events = index % 10 == 0 ? [try? NewEvent(Poison(reason: "\(index)"))] : [try? note("\(index)")]
          return (try? await store.append(events.compactMap { $0 }, to: StreamID("s\(index)"))) != nil
        }
      }
      return await group.reduce(into: [Bool]()) { $0.append($1) }
    }
    #expect(outcomes.filter { $0 }.count == 90)
    #expect(try store.head() == 90)
    #expect(try store.verify().isClean)
  }
}

enum RejectedAppend: CaseIterable, Sendable {
  case empty, emptyStream, streamWithNUL, longStream, duplicateIDs, partiallyStored, emptyType,
    projectionFails
}
