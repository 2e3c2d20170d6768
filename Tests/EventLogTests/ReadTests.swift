import EventLog
import Foundation
import LMDB
import TestKit
import Testing

@Suite("Reads")
struct ReadTests {
  @Test("ranges forward and backward, one event, the head, a stream, and chunked walks")
  func reads() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options.fast
    options.replayChunkSize = 4
    let store = try EventStore(path: dir.environment(), options: options)
    #expect(try store.head() == 0)
    #expect(try store.event(at: 1) == nil)
    #expect(try store.events().isEmpty)
    for index in 1...20 {
      try await store.append([try note("n\(index)")], to: StreamID(index % 2 == 0 ? "even" : "odd"))
    }
    #expect(try store.head() == 20)
    #expect(try store.events().map(\.sequence) == Array(1...20))
    #expect(try store.events(from: 5, through: 9).map(\.sequence) == [5, 6, 7, 8, 9])
    #expect(try store.events(from: 5, limit: 3).map(\.sequence) == [5, 6, 7])
    #expect(try store.events(direction: .backward).map(\.sequence) == Array((1...20).reversed()))
    #expect(try store.events(from: 3, through: 7, direction: .backward).map(\.sequence) == [7, 6, 5, 4, 3])
    #expect(try store.events(through: 50, limit: 2, direction: .backward).map(\.sequence) == [20, 19])
    #expect(try store.events(from: 21).isEmpty)
    #expect(try store.events(from: 9, through: 8).isEmpty)
    #expect(try store.event(at: 7)?.stream == "odd")
    let even = try store.events(in: "even")
    #expect(even.map(\.sequence) == Array(stride(from: 2, through: 20, by: 2)))
    #expect(even.map(\.version) == Array(1...10))
    #expect(try store.events(in: "even", fromVersion: 9).map(\.version) == [9, 10])
    #expect(try store.events(in: "even", limit: 2).map(\.version) == [1, 2])
    #expect(try store.events(in: "none").isEmpty)
    var walked: [UInt64] = []
    let visited = try store.forEachEvent(from: 3) { event in
      walked.append(event.sequence)
      return event.sequence < 17
    }
    #expect(walked == Array(3...17))
    #expect(visited == 15)
  }

  @Test("a projection whose version changed is rebuilt on open")
  func versionChangeRebuilds() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 0..<10 { try await store?.append([try note("n\(index)")], to: "s") }
    await close(&store)
    var doubling = DoublingProjection()
    doubling.version = 2
    let reopened = try EventStore(path: path, projections: [doubling], options: .fast)
    #expect(try reopened.read { try $0.checkpoint(of: "notes") } == 10)
    let counts = try liveTables(reopened)["notes/per-stream"]
    #expect(counts?[Array("s".utf8)] == (try BinaryEncoder().encode(UInt64(20))))
    #expect(try liveTables(reopened)["notes/by-id"]?.isEmpty == true)
    #expect(try reopened.verify().isClean)
  }
}

@Suite("Verify under appends")
struct VerifyUnderAppendsTests {
  @Test("a stream index missing the last stream's newest entry is named, with both versions")
  func lastStreamIndexChecked() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path) { store in
      try await store.append([try note("a1")], to: "a")
      try await store.append([try note("z1"), try note("z2")], to: "z")
    }
    do {
      // The last stream in key order loses its newest index entry.
      let environment = try Environment(path: path)
      let index = try environment.openDatabase("stream_events", flags: [.duplicateSort, .duplicateFixed])
      try environment.write { txn in
        try txn.withCursor(in: index) { cursor in
          try #require(try cursor.seek(Array("z".utf8), exact: true))
          try #require(try cursor.move(.lastDuplicate))
          try cursor.deleteCurrent()
        }
      }
    }
    let reopened = try EventStore(path: path, options: .fast)
    let problems = try reopened.verify().problems.map(\.problem)
    #expect(problems.contains("stream 'z' is indexed up to version 1 but its events reach 2"), "\(problems)")
  }

  @Test("verify while another task appends finds no problem: each check reads a consistent state")
  func verifyWhileAppending() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options.fast
    options.replayChunkSize = 16
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: options)
    for index in 0..<200 {
      try await store.append([try note("seed \(index)")], to: StreamID("s\(index % 7)"))
    }
    let appender = Task.detached {
      for index in 0..<3_000 {
        try await store.append([try note("more \(index)")], to: StreamID("s\(index % 7)"))
      }
    }
    var reports: [VerificationReport] = []
    while reports.count < 40 {
      let report = try await Task.detached { try store.verify() }.value
      reports.append(report)
      if try store.head() >= 3_200 { break }
    }
    try await appender.value
    for report in reports where !report.isClean {
      Issue.record("verify under appends: \(report.problems.prefix(3))")
    }
    #expect(try store.verify().isClean)
  }
}
