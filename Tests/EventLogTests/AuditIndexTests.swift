import Foundation
import LMDB
import TestKit
import Testing

@testable import EventLog

/// The audit indexes: the log by time, by origin device, and the events per type; kept by every
/// write, built once for an environment that had none, and checked by `verify`.
@Suite("Audit indexes")
struct AuditIndexTests {
  /// A log of local appends and events from two other devices recorded at other times.
  static func populated(_ path: String) async throws -> (store: EventStore, phone: UUID, tablet: UUID) {
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    let phone = UUID()
    let tablet = UUID()
    func elsewhere(_ text: String, at seconds: Double) throws -> NewEvent {
      var event = try note(text)
      event.recordedAt = Date(timeIntervalSince1970: seconds)
      return event
    }
    try await store.append([try note("local 1")], to: "a")
    // Older than the local event: out of time order in the log.
    _ = try await store.ingest([
      EventStore.IngestedEvent(
        stream: "b", event: try elsewhere("phone 1", at: 1_000),
        provenance: RecordedEvent.Provenance(device: phone, sequence: 1)),
      EventStore.IngestedEvent(
        stream: "b", event: try elsewhere("tablet 1", at: 3_000),
        provenance: RecordedEvent.Provenance(device: tablet, sequence: 1)),
      EventStore.IngestedEvent(
        stream: "b", event: try elsewhere("phone 2", at: 2_000),
        provenance: RecordedEvent.Provenance(device: phone, sequence: 2)),
    ])
    try await store.append([try note("local 2")], to: "a")
    return (store, phone, tablet)
  }

  @Test(
    "a time window, a device and the counts per type come from the indexes, whatever the order of arrival")
  func queries() async throws {
    let dir = TemporaryDirectory()
    let (store, phone, tablet) = try await Self.populated(dir.environment())
    #expect(try store.hasAuditIndexes)
    #expect(
      try store.sequences(
        recordedFrom: Date(timeIntervalSince1970: 1_500), through: Date(timeIntervalSince1970: 3_000))
        == [3, 4])
    #expect(try store.sequences(recordedFrom: nil, through: Date(timeIntervalSince1970: 2_500)) == [2, 4])
    #expect(try store.sequences(recordedFrom: Date(timeIntervalSince1970: 4_000), through: nil) == [1, 5])
    #expect(try store.sequences(fromDevice: phone) == [2, 4])
    #expect(try store.sequences(fromDevice: tablet) == [3])
    let own = try #require(store.deviceID)
    #expect(try store.sequences(fromDevice: own) == [1, 5])
    #expect(try store.sequences(fromDevice: UUID()) == [])
    let devices = try store.originDevices()
    #expect(
      Dictionary(devices.map { ($0.device, $0.events) }, uniquingKeysWith: +) == [
        own: 2, phone: 2, tablet: 1,
      ])
    #expect(try store.eventCountsByType() == ["NoteAdded": 5])
    #expect(try store.events(at: [5, 2]).map(\.sequence) == [5, 2])
    #expect(try store.verify().isClean)
  }

  @Test("verify finds an index entry removed or added behind the store's back")
  func damagedIndexes() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    do {
      let (store, phone, _) = try await Self.populated(path)
      await store.close()
      var options = Environment.Options()
      options.maxDatabases = 16
      let raw = try Environment(path: path, options: options)
      let byDevice = try raw.openDatabase("by_device", flags: [.duplicateSort, .duplicateFixed])
      try raw.write { txn in
        try withUnsafeBytes(of: phone.uuid) { k in _ = try txn.delete(forKey: k, in: byDevice) }
      }
      raw.close()
    }
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    let report = try store.verify()
    #expect(
      report.problems.contains { $0.problem.contains("the device index has 1 entries for 3 events") },
      "\(report.problems)")
  }

  @Test("an environment without the indexes gets them on its first writable open, in resumable steps")
  func built() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await ChainTests.legacyEnvironment(at: path, events: 9)
    do {
      let readOnly = try EventStore(path: path, projections: [NotesProjection()], options: .readOnlyTest)
      #expect(try !readOnly.hasAuditIndexes)
      // Without the indexes, the same answers by a scan.
      #expect(try readOnly.eventCountsByType() == ["NoteAdded": 9])
      #expect(try readOnly.sequences(recordedFrom: nil, through: nil).count == 9)
    }
    do {
      // Records rewritten, then the indexes built two events at a time, stopped after one step.
      let raw = try RawLog(path)
      let schema = try Schema(environment: raw.environment)
      let device = try #require(
        try raw.environment.read { txn in
          try txn.value(forKey: Array("device".utf8), in: raw.meta)
        }.flatMap { bytes in bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) } })
      try EventStore.chainLegacyRecords(environment: raw.environment, schema: schema, device: device)
      try EventStore.buildAuditIndexes(
        environment: raw.environment, schema: schema, device: device, chunk: 2, transactions: 1)
    }
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try store.hasAuditIndexes)
    #expect(try store.eventCountsByType() == ["NoteAdded": 9])
    #expect(try store.sequences(fromDevice: try #require(store.deviceID)) == Array(1...9))
    #expect(try store.sequences(recordedFrom: nil, through: nil) == Array(1...9))
    #expect(try store.verify().isClean)
  }
}
