import Foundation
import TestKit
import Testing

@testable import EventLog

@Suite("Compacting a store")
struct CompactStoreTests {
  let dir = TemporaryDirectory()

  /// Whether the data file of the environment at `path` holds `marker`'s bytes anywhere.
  func dataFile(_ path: String, contains marker: [UInt8]) throws -> Bool {
    try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")).range(of: Data(marker)) != nil
  }

  @Test(
    "a deleted state value is found in data.mdb until compact(); the log then verifies, keeps its head and appends"
  )
  func compactRemovesDeletedBytes() async throws {
    let path = dir.environment()
    let marker = Array("subject-key-\(UUID().uuidString)".utf8)
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 0..<20 { try await store.append([try note("note \(index)")], to: "s") }
    try await store.updateState([
      .put(Array("erasure.key.subject-1".utf8), marker + [UInt8](repeating: 7, count: 32))
    ])
    try await store.updateState([.delete(Array("erasure.key.subject-1".utf8))])
    #expect(try store.stateValue(forKey: Array("erasure.key.subject-1".utf8)) == nil)
    #expect(try dataFile(path, contains: marker), "LMDB keeps the freed page: the test can fail")
    let before = try store.verify()
    try #require(before.isClean)

    let compaction = try await store.compact()
    #expect(compaction.path == path)
    #expect(compaction.bytesAfter == dataFileSize(path))
    #expect(compaction.bytesAfter <= compaction.bytesBefore)
    #expect(!(try dataFile(path, contains: marker)))
    // The store is closed: it must be opened again.
    #expect(throws: EventStoreError.closed) { try store.head() }
    await #expect(throws: EventStoreError.closed) { try await store.append([try note("late")], to: "s") }

    let reopened = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    let after = try reopened.verify()
    #expect(after.isClean, "\(after.problems)")
    #expect(after.chainHead == before.chainHead)
    #expect(after.events == 20)
    try await reopened.append([try note("after compact")], to: "s")
    #expect(try reopened.head() == 21)
    #expect(try reopened.verify().isClean)
    await reopened.close()
  }

  @Test("a store opened read-only is refused and left open")
  func readOnlyIsRefused() async throws {
    let path = dir.environment()
    let writer = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    try await writer.append([try note("one")], to: "s")
    await writer.close()
    var options = EventStore.Options.fast
    options.readOnly = true
    let store = try EventStore(path: path, projections: [NotesProjection()], options: options)
    await #expect(throws: EventStoreError.readOnly(path: path)) { try await store.compact() }
    #expect(try store.head() == 1)
    await store.close()
  }
}
