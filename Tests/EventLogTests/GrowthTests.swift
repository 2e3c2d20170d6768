import EventLog
import Foundation
import TestKit
import Testing

@Suite("Map growth")
struct GrowthTests {
  @Test("a 1 MiB map grows to hold 100 MiB of events")
  func mapGrowth() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options()
    options.mapSize = 1 << 20
    options.durability = .noSync
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: options)
    let text = String(repeating: "x", count: 4_000)
    let batches = 25
    let perBatch = 1_000
    for batch in 0..<batches {
      let events = try (0..<perBatch).map { try note("\(batch)-\($0) \(text)") }
      try await store.append(events, to: StreamID("big-\(batch)"))
    }
    #expect(try store.head() == UInt64(batches * perBatch))
    let info = try store.storageInfo()
    #expect(info.usedBytes > 100 << 20)
    #expect(info.mapSize >= info.usedBytes)
    #expect(try store.event(at: 12_345)?.decode(NoteAdded.self).text.hasPrefix("12-344 ") == true)
  }

  @Test("group commits that fill the map are retried whole: every caller answered, nothing lost or doubled")
  func groupCommitsGrowTheMap() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options()
    options.mapSize = 1 << 20
    // Durable commits are slow enough for the callers to queue, so the commits that fill the map
    // carry several callers' appends, some taken in while the transaction was open.
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: options)
    let text = String(repeating: "y", count: 16_000)
    let tasks = 8
    let perTask = 25
    let results = try await withThrowingTaskGroup(of: [AppendResult].self) { group in
      for task in 0..<tasks {
        group.addTask {
          var results: [AppendResult] = []
          for index in 0..<perTask {
            let events = try (0..<4).map { try note("\(task)-\(index)-\($0) \(text)") }
            results.append(
              try await store.append(
                events, to: StreamID("w\(task)"), expectedVersion: .exactly(UInt64(index * 4))))
          }
          return results
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    let total = tasks * perTask * 4
    #expect(try store.head() == UInt64(total))
    #expect(try store.storageInfo().mapSize > 4 << 20, "the map grew")
    // Each caller's four events contiguous, and the calls' ranges tile 1...total exactly.
    let ranges = results.map { $0.firstSequence...$0.lastSequence }.sorted { $0.lowerBound < $1.lowerBound }
    #expect(ranges.allSatisfy { $0.count == 4 })
    #expect(ranges.first?.lowerBound == 1)
    #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound + 1 == $1.lowerBound })
    #expect(try store.verify().isClean)
  }
}
