import Foundation
import Synchronization
import TestKit
import Testing

@testable import EventLog

/// `append(to:retrying:)`: the bounded retry of an expected-version conflict.
@Suite("Appends that retry a version conflict")
struct RetryTests {
  /// How often `decide` ran and the versions it was given.
  final class Calls: Sendable {
    private let versions = Mutex<[UInt64]>([])
    func record(_ version: UInt64) { versions.withLock { $0.append(version) } }
    var seen: [UInt64] { versions.withLock { $0 } }
  }

  @Test("no conflict: decide runs once, with the stream's version, and its events are appended")
  func once() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("a"), try note("b")], to: "s")
    let calls = Calls()
    let result = try await store.append(to: "s") { version in
      calls.record(version)
      return [try note("c")]
    }
    #expect(calls.seen == [2])
    #expect(result.events.map(\.version) == [3])
    // A stream that does not exist yet is at version 0.
    try await store.append(to: "new") { version in
      calls.record(version)
      return [try note("d")]
    }
    #expect(calls.seen == [2, 0])
  }

  @Test("another writer appends between the read and the append: decide runs again on the new version")
  func conflictThenSuccess() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("a")], to: "s")
    let calls = Calls()
    let result = try await store.append(to: "s") { version in
      calls.record(version)
      if calls.seen.count == 1 { try await store.append([try note("meanwhile")], to: "s") }
      return [try note("mine")]
    }
    #expect(calls.seen == [1, 2])
    #expect(result.events.map(\.version) == [3])
    #expect(
      try store.events(in: "s").map { try $0.decode(NoteAdded.self).text } == ["a", "meanwhile", "mine"])
  }

  @Test("a conflict at every attempt: decide runs maxAttempts times, then the conflict is thrown")
  func bounded() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    let calls = Calls()
    await #expect(throws: EventStoreError.self) {
      try await store.append(to: "s", retrying: 4) { version in
        calls.record(version)
        try await store.append([try note("meanwhile")], to: "s")
        return [try note("never")]
      }
    }
    #expect(calls.seen == [0, 1, 2, 3])
    #expect(try store.version(of: "s") == 4, "only the interfering appends are stored")
    do {
      try await store.append(to: "s", retrying: 1) { _ in
        try await store.append([try note("meanwhile")], to: "s")
        return [try note("never")]
      }
      Issue.record("no error")
    } catch EventStoreError.wrongExpectedVersion(let stream, let expected, let actual) {
      #expect(stream == "s" && expected == .exactly(4) && actual == 5)
    }
  }

  @Test("what decide throws ends the append; no events appends nothing; other errors are not retried")
  func errors() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    struct Refused: Error {}
    let calls = Calls()
    await #expect(throws: Refused.self) {
      try await store.append(to: "s") { version in
        calls.record(version)
        throw Refused()
      }
    }
    let result = try await store.append(to: "s") { _ in [] }
    #expect(result.events.isEmpty)
    await #expect(throws: EventStoreError.self) {
      try await store.append(to: "") { version in
        calls.record(version)
        return [try note("x")]
      }
    }
    #expect(calls.seen == [0], "an invalid stream fails before decide runs, and is not retried")
    #expect(try store.head() == 0)
  }
}
