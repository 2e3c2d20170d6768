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
    let info = store.storageInfo()
    #expect(info.usedBytes > 100 << 20)
    #expect(info.mapSize >= info.usedBytes)
    #expect(try store.event(at: 12_345)?.decode(NoteAdded.self).text.hasPrefix("12-344 ") == true)
  }
}
