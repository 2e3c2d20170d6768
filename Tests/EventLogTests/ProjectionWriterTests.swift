import EventLog
import Foundation
import TestKit
import Testing

/// Keeps, per stream, the total length of its events' payloads, reading the previous total in
/// place with `withValue` (and checking it against `value`, the copying read).
private struct PayloadLengthProjection: Projection {
  var name = "lengths"
  var version: UInt32 = 1
  var tables = ["per-stream"]

  struct Mismatch: Error {}

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    let key = Array(event.stream.rawValue.utf8)
    let borrowed = try state.withValue(forKey: key, in: "per-stream") { bytes in
      bytes.loadUnaligned(as: UInt64.self)
    }
    let copied = try state.value(forKey: key, in: "per-stream").map { bytes in
      bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
    guard borrowed == copied else { throw Mismatch() }
    let total = (borrowed ?? 0) + UInt64(event.payload.count)
    try state.put(
      ExactSizeBytes.make(count: 8) { $0.storeBytes(of: total, as: UInt64.self) }, forKey: key,
      in: "per-stream")
  }
}

@Suite("Projection state")
struct ProjectionWriterTests {
  @Test("withValue reads a stored value in place, live and in a replay, and is nil for a missing key")
  func withValue() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(
      path: dir.environment(), projections: [PayloadLengthProjection()], options: .fast)
    var expected: [String: UInt64] = [:]
    for index in 0..<40 {
      let stream = "s\(index % 3)"
      let event = try note(String(repeating: "x", count: index))
      expected[stream, default: 0] += UInt64(event.payload.count)
      try await store.append([event], to: StreamID(stream))
    }
    let totals = { (table: [[UInt8]: [UInt8]]?) in
      Dictionary(
        uniqueKeysWithValues: (table ?? [:]).map { key, value in
          (String(decoding: key, as: UTF8.self), value.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
        })
    }
    #expect(totals(try liveTables(store)["lengths/per-stream"]) == expected)
    let replay = try store.replay()
    #expect(totals(try replayedTables(store, replay)["lengths/per-stream"]) == expected)
    #expect(try store.firstDifference(from: replay) == nil)
  }

  @Test("ExactSizeBytes.make writes exactly the bytes asked for, and copy copies")
  func byteArray() {
    for count in [0, 1, 24, 1_000, 5_000] {
      let bytes = ExactSizeBytes.make(count: count) { buffer in
        for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index * 7) }
      }
      #expect(bytes == (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) })
      #expect(bytes.withUnsafeBytes { ExactSizeBytes.copy($0) } == bytes)
    }
  }
}
