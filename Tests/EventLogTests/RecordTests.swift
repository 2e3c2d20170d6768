import Checksum
import Foundation
import LMDB
import TestKit
import Testing

@testable import EventLog

@Suite("Records")
struct RecordTests {
  @Test("every field round-trips through the store")
  func roundTrip() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    let metadata = EventMetadata(correlationID: UUID(), causationID: UUID(), origin: "tests ✓")
    let payload = NoteAdded(noteID: UUID(), text: "Grüße, 世界", priority: -42, tag: "t")
    let event = try NewEvent(payload, id: UUID(), metadata: metadata)
    let before = Date()
    try await store.append([try note("first")], to: "other")
    let result = try await store.append([event], to: "notes-1", expectedVersion: .noStream)
    let after = Date()
    let stored = try #require(try store.event(at: result.firstSequence))
    #expect(stored.sequence == 2)
    #expect(stored.id == event.id)
    #expect(stored.stream == "notes-1")
    #expect(stored.version == 1)
    #expect(stored.type == "NoteAdded")
    #expect(stored.schemaVersion == 1)
    #expect(stored.metadata == metadata)
    #expect(stored.payload == event.payload)
    // Stamped at the append, between the two clock readings (to the microsecond it is stored in),
    // however long a loaded machine took.
    #expect(stored.recordedAt.timeIntervalSince(before) > -0.000_001, "\(stored.recordedAt) before \(before)")
    #expect(after.timeIntervalSince(stored.recordedAt) > -0.000_001, "\(stored.recordedAt) after \(after)")
    #expect(try stored.decode(NoteAdded.self) == payload)
    #expect(throws: EventStoreError.self) { try stored.decode(NoteRemoved.self) }
  }

  @Test("metadata without IDs and an empty payload round-trip")
  func minimalRecord() throws {
    let event = NewEvent(
      id: UUID(), type: "T", schemaVersion: 7, payload: [], metadata: EventMetadata(),
      recordedAt: Date(timeIntervalSince1970: -1.5))
    let fields = RecordCodec.Fields(
      sequence: 9, version: 3, recordedAtMicroseconds: RecordCodec.microseconds(event.recordedAt ?? Date()),
      event: event,
      stream: "s", provenance: nil, previousChain: .zero)
    let bytes = RecordCodec.encode(fields)
    #expect(bytes.count == RecordCodec.headerSize + 1 + 1 + 32 + 4)
    let decoded = try bytes.withUnsafeBytes { try RecordCodec.decode($0, sequence: 9) }
    #expect(decoded.recordedAt == Date(timeIntervalSince1970: -1.5))
    #expect(decoded.schemaVersion == 7)
    #expect(decoded.metadata == EventMetadata())
    #expect(decoded.payload.isEmpty)
    #expect(decoded.provenance == nil)
    #expect(bytes.withUnsafeBytes { RecordCodec.subjects(of: $0) }.isEmpty)
  }

  @Test(
    "any flipped bit of a record is detected, naming its sequence",
    arguments: [0, 1, 8, 30, 56, 70, 90, 120, 140])
  func flippedBit(offset: Int) throws {
    let event = try note("checksummed")
    let fields = RecordCodec.Fields(
      sequence: 77, version: 1, recordedAtMicroseconds: 1, event: event, stream: "notes-77",
      provenance: RecordedEvent.Provenance(device: UUID(), sequence: 77), previousChain: .zero)
    var bytes = RecordCodec.encode(fields)
    bytes[offset % bytes.count] ^= 0x10
    expectCorruption(at: 77) { _ = try bytes.withUnsafeBytes { try RecordCodec.decode($0, sequence: 77) } }
  }

  @Test(
    "unknown flag bits, non-zero reserved bytes and invalid UTF-8 are refused even with a valid checksum",
    arguments: [(1, false), (54, true), (55, true), (56, true), (1, true), (79, false), (80, false)])
  func nonCanonicalRecords(offset: Int, legacy: Bool) throws {
    let fields = RecordCodec.Fields(
      sequence: 3, version: 1, recordedAtMicroseconds: 1, event: try note("x"), stream: "stream",
      provenance: nil, previousChain: .zero)
    var bytes = legacy ? RecordCodec.encodeLegacy(fields) : RecordCodec.encode(fields)
    // Flag bit 3, a reserved byte, or the first byte of the stream ID made an invalid UTF-8 lead
    // byte (format 1: reserved 54–55, stream at 56; format 2: reserved 79, stream at 80).
    let stream = legacy ? 56 : 80
    bytes[offset] = offset == 1 ? 0x08 : (offset == stream ? 0xFF : 0x01)
    let body = bytes.count - 4
    let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
    withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(body..., with: $0) }
    expectCorruption(at: 3) { _ = try bytes.withUnsafeBytes { try RecordCodec.decode($0, sequence: 3) } }
  }

  @Test("a record stored under another sequence number is rejected")
  func misplacedRecord() throws {
    let fields = RecordCodec.Fields(
      sequence: 5, version: 1, recordedAtMicroseconds: 1, event: try note("x"), stream: "s",
      provenance: nil, previousChain: .zero)
    let bytes = RecordCodec.encode(fields)
    expectCorruption(at: 6) { _ = try bytes.withUnsafeBytes { try RecordCodec.decode($0, sequence: 6) } }
  }

  @Test("a byte flipped inside data.mdb is found on read, naming the event; others stay readable")
  func damageOnDisk() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 1...20 {
      let added = NoteAdded(noteID: UUID(), text: "note \(index)", priority: 1, tag: "MARKER-\(index)-END")
      try await store?.append([try NewEvent(added)], to: "notes")
    }
    await close(&store)
    let file = URL(fileURLWithPath: path).appendingPathComponent("data.mdb")
    var data = try Data(contentsOf: file)
    let marker = Data("MARKER-13-END".utf8)
    // Copy-on-write leaves stale copies of pages in the file: damage every copy of the record.
    var searchFrom = data.startIndex
    var flipped = 0
    while let range = data.range(of: marker, in: searchFrom..<data.endIndex) {
      data[range.lowerBound + 3] ^= 0x01
      searchFrom = range.upperBound
      flipped += 1
    }
    #expect(flipped > 0)
    try data.write(to: file)

    let reopened = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    expectCorruption(at: 13, reason: "checksum") { _ = try reopened.event(at: 13) }
    expectCorruption(at: 13) { _ = try reopened.events(from: 10, through: 15) }
    #expect(try reopened.event(at: 12)?.sequence == 12)
    #expect(try reopened.event(at: 14)?.sequence == 14)
    let report = try reopened.verify()
    #expect(!report.isClean)
    #expect(report.problems.first?.sequence == 13)
  }
}

/// Expects `body` to throw ``EventStoreError/corruptedRecord(sequence:reason:)`` for `sequence`.
func expectCorruption(
  at sequence: UInt64, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> Void
) {
  do {
    try body()
    Issue.record("no error was thrown; expected damage at event \(sequence)", sourceLocation: sourceLocation)
  } catch let EventStoreError.corruptedRecord(found, text) {
    #expect(found == sequence, sourceLocation: sourceLocation)
    if let reason { #expect(text.contains(reason), "\(text)", sourceLocation: sourceLocation) }
  } catch {
    Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
  }
}
