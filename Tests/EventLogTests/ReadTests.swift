import EventLog
import Foundation
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
    #expect(try reopened.verify().ok)
  }
}
