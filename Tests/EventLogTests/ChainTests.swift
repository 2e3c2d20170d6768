import Checksum
import Foundation
import LMDB
import Sodium
import TestKit
import Testing

@testable import EventLog

/// The hash chain over the stored records (record format 2, environment format 5): what each
/// record's value is, what `verify` finds when a record is edited behind the store's back, and
/// the upgrade of an environment whose records carry none.
@Suite("The hash chain")
struct ChainTests {
  @Test(
    "each record's chain value is BLAKE2b-256 of the value before and its bytes; verify prints the head"
  )
  func values() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 1...5 { try await store?.append([try note("n\(index)")], to: StreamID("s-\(index % 2)")) }
    let report = try #require(try store?.verify())
    #expect(report.isClean)
    let events = try #require(try store?.events(from: 1, limit: 10))
    await close(&store)
    // The chain recomputed from the raw records, with libsodium directly.
    let raw = try RawLog(path)
    var previous = [UInt8](repeating: 0, count: 32)
    for (event, record) in zip(events, try raw.records()) {
      let body = Array(record.prefix(record.count - 36))
      let expected = BLAKE2b256.hash(previous + body)
      #expect(Array(record[(record.count - 36)..<(record.count - 4)]) == expected)
      #expect(event.chain?.bytes == expected)
      previous = expected
    }
    #expect(
      report.chainHead
        == EventStore.VerificationReport.ChainHead(sequence: 5, value: try #require(events.last?.chain)))
    #expect(report.unchainedRecords == 0)
  }

  @Test("a record edited with its checksum recomputed breaks the chain there, and verify names it")
  func editedRecord() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path, projections: [NotesProjection()]) { store in
      for index in 1...10 { try await store.append([try note("note \(index)")], to: "s") }
    }
    // What a forger with the file does: change a byte of event 4's payload, fix its CRC-32C.
    try RawLog(path).edit(4) { record in
      // In the payload, not in the chain value or the checksum after it.
      guard let at = record.prefix(record.count - 36).lastIndex(of: UInt8(ascii: "4")) else { return }
      record[at] = UInt8(ascii: "5")
    }
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try store.event(at: 4) != nil, "the record still reads: its checksum is valid")
    let report = try store.verify()
    let chainProblems = report.problems.filter { $0.problem.contains("hash chain breaks") }
    #expect(chainProblems.map(\.sequence) == [4], "\(report.problems)")
    #expect(report.chainHead?.sequence == 10)
  }

  @Test(
    "a record removed and the later ones renumbered, checksums fixed: the chain breaks where the record was")
  func removedAndRenumbered() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path) { store in
      for index in 1...8 { try await store.append([try note("note \(index)")], to: StreamID("s-\(index)")) }
    }
    let raw = try RawLog(path)
    try raw.renumber(removing: 5)
    let store = try EventStore(path: path, options: .fast)
    let report = try store.verify()
    #expect(
      report.problems.contains { $0.sequence == 5 && $0.problem.contains("hash chain breaks") },
      "\(report.problems)")
  }

  @Test("an environment of format 4 reads as it is, unchained; the first writable open chains every record")
  func upgradeFromFormat4() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let pulledDevice = UUID()
    let device = try await Self.legacyEnvironment(at: path, events: 7, pulled: [3: (pulledDevice, 77)])
    do {
      let store = try EventStore(path: path, projections: [NotesProjection()], options: .readOnlyTest)
      let events = try store.events(from: 1, limit: 10)
      #expect(events.count == 7)
      #expect(events.allSatisfy { $0.chain == nil && $0.provenance == nil })
      let report = try store.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(report.unchainedRecords == 7)
      #expect(report.chainHead == nil)
    }
    let store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    let events = try store.events(from: 1, limit: 10)
    #expect(try RawLog(path).records().allSatisfy { $0.first == 2 })
    #expect(events[2].provenance == RecordedEvent.Provenance(device: pulledDevice, sequence: 77))
    for event in events where event.sequence != 3 {
      #expect(event.provenance == RecordedEvent.Provenance(device: device, sequence: event.sequence))
    }
    let report = try store.verify()
    #expect(report.isClean, "\(report.problems)")
    #expect(report.unchainedRecords == 0)
    #expect(report.chainHead?.sequence == 7)
    #expect(try RawLog(path).format == 5)
    #expect(try RawLog(path).upgradeMark == nil)
    // Appends go on chaining from the rewritten head.
    try await store.append([try note("after")], to: "s")
    #expect(try store.verify().isClean)
  }

  @Test("an upgrade stopped half-way reads, and the next writable open finishes it with the same chain")
  func interruptedUpgrade() async throws {
    let whole = TemporaryDirectory()
    let halves = TemporaryDirectory()
    let device = UUID()
    let wholePath = whole.environment()
    let halvesPath = halves.environment()
    _ = try await Self.legacyEnvironment(at: wholePath, events: 9, device: device)
    // The same environment twice: one upgraded at once, one in two goes.
    try FileManager.default.createDirectory(
      atPath: halvesPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    try FileManager.default.copyItem(atPath: wholePath + "/data.mdb", toPath: halvesPath + "/data.mdb")
    do {
      let raw = try RawLog(halvesPath)
      let schema = try Schema(environment: raw.environment)
      try EventStore.chainLegacyRecords(
        environment: raw.environment, schema: schema, device: device, chunk: 4, transactions: 1)
      #expect(try raw.upgradeMark == 4)
      #expect(try raw.records().map { $0.first } == [2, 2, 2, 2, 1, 1, 1, 1, 1])
      #expect(try raw.format == 4)
    }
    do {
      let mixed = try EventStore(path: halvesPath, options: .readOnlyTest)
      #expect(try mixed.events(from: 1, limit: 20).count == 9)
      let report = try mixed.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(report.unchainedRecords == UInt64(5))
    }
    let finished = try EventStore(path: halvesPath, options: .fast)
    let upgraded = try EventStore(path: wholePath, options: .fast)
    #expect(try finished.verify().chainHead == upgraded.verify().chainHead)
    #expect(try finished.verify().chainHead?.sequence == 9)
  }

  @Test(
    "an ingested event keeps its provenance; one from a device of all zeros is stored as of unknown origin")
  func ingestedProvenance() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    let origin = RecordedEvent.Provenance(device: UUID(), sequence: 41)
    let zero = RecordedEvent.Provenance(
      device: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), sequence: 9)
    func elsewhere(_ text: String) throws -> NewEvent {
      var event = try note(text)
      event.recordedAt = Date(timeIntervalSince1970: 1_800_000_000)
      return event
    }
    _ = try await store.ingest([
      EventStore.IngestedEvent(stream: "s", event: try elsewhere("a"), provenance: origin),
      EventStore.IngestedEvent(stream: "s", event: try elsewhere("b"), provenance: zero),
      EventStore.IngestedEvent(stream: "s", event: try elsewhere("c")),
    ])
    try await store.append([try note("mine")], to: "s")
    let events = try store.events(from: 1, limit: 10)
    #expect(
      events.map(\.provenance) == [
        origin, nil, nil, RecordedEvent.Provenance(device: try #require(store.deviceID), sequence: 4),
      ])
    #expect(try store.verify().isClean)
  }

  // MARK: - Fixtures

  /// An environment as a build before format 5 left it: `events` notes, stored as records of
  /// format 1, format 4 in `meta`, and a `replication.pulled.` entry per `pulled` sequence.
  /// - Returns: the environment's device ID.
  @discardableResult
  static func legacyEnvironment(
    at path: String, events: Int, device: UUID? = nil, pulled: [UInt64: (UUID, UInt64)] = [:]
  ) async throws -> UUID {
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 1...events {
      try await store?.append([try note("legacy \(index)")], to: StreamID("s-\(index % 3)"))
    }
    if !pulled.isEmpty {
      try await store?.updateState(
        pulled.map { sequence, origin in
          .put(
            Array("replication.pulled.".utf8) + withUnsafeBytes(of: sequence.bigEndian, Array.init),
            withUnsafeBytes(of: UInt64(sequence).littleEndian, Array.init)
              + withUnsafeBytes(of: origin.0.uuid, Array.init)
              + withUnsafeBytes(of: origin.1.littleEndian, Array.init))
        })
    }
    let id = try #require(store?.deviceID)
    await close(&store)
    let raw = try RawLog(path)
    if let device { try raw.setDevice(device) }
    try raw.replaceRecords(
      with: try raw.records().enumerated().map { index, record in
        let event = try record.withUnsafeBytes { try RecordCodec.decode($0, sequence: UInt64(index + 1)) }
        return RecordCodec.encodeLegacy(
          RecordCodec.Fields(
            sequence: event.sequence, version: event.version,
            recordedAtMicroseconds: event.recordedAt.microsecondsSince1970,
            event: NewEvent(
              id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
              metadata: event.metadata),
            stream: event.stream, provenance: nil, previousChain: .zero))
      })
    try raw.setFormat(4)
    try raw.removeAuditIndexes()
    return device ?? id
  }
}

extension EventStore.Options {
  /// ``fast``, read-only.
  static var readOnlyTest: EventStore.Options {
    var options = EventStore.Options.fast
    options.readOnly = true
    return options
  }
}

/// The raw LMDB databases of an environment, for tests that change records behind the store's back.
struct RawLog {
  let environment: Environment
  let events: Database
  let meta: Database

  init(_ path: String) throws {
    var options = Environment.Options()
    options.maxDatabases = 16
    environment = try Environment(path: path, options: options)
    events = try environment.openDatabase("events", flags: [.integerKeys])
    meta = try environment.openDatabase("meta", flags: [])
  }

  /// Every record's bytes, in sequence order.
  func records() throws -> [[UInt8]] {
    try environment.read { txn in
      try txn.withCursor(in: events) { cursor in
        var records: [[UInt8]] = []
        var found = try cursor.move(.first)
        while found {
          records.append(Array(cursor.value))
          found = try cursor.move(.next)
        }
        return records
      }
    }
  }

  /// Stores `records` as events 1, 2, … (and removes any after them).
  func replaceRecords(with records: [[UInt8]]) throws {
    try environment.write { txn in
      try txn.removeAll(in: events)
      for (index, record) in records.enumerated() {
        var key = UInt64(index + 1)
        try withUnsafeBytes(of: &key) { k in
          try record.withUnsafeBytes { try txn.put($0, forKey: k, in: events) }
        }
      }
    }
  }

  /// Changes record `sequence` with `change` and recomputes its CRC-32C, as a forger would.
  func edit(_ sequence: UInt64, _ change: (inout [UInt8]) -> Void) throws {
    var records = try self.records()
    change(&records[Int(sequence) - 1])
    records[Int(sequence) - 1] = Self.withChecksum(records[Int(sequence) - 1])
    try replaceRecords(with: records)
  }

  /// Removes record `sequence` and renumbers those after it (their sequence fields and CRCs).
  func renumber(removing sequence: UInt64) throws {
    var records = try self.records()
    records.remove(at: Int(sequence) - 1)
    for index in (Int(sequence) - 1)..<records.count {
      withUnsafeBytes(of: UInt64(index + 1).littleEndian) { records[index].replaceSubrange(8..<16, with: $0) }
      records[index] = Self.withChecksum(records[index])
    }
    try replaceRecords(with: records)
  }

  static func withChecksum(_ record: [UInt8]) -> [UInt8] {
    var record = record
    let body = record.count - 4
    let crc = record.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
    withUnsafeBytes(of: crc.littleEndian) { record.replaceSubrange(body..., with: $0) }
    return record
  }

  var format: UInt32? {
    get throws {
      try environment.read { txn in
        try txn.value(forKey: Array("format".utf8), in: meta).map {
          $0.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        }
      }
    }
  }

  var upgradeMark: UInt64? {
    get throws {
      try environment.read { txn in
        try txn.value(forKey: Array("upgrade-chain".utf8), in: meta).map {
          $0.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        }
      }
    }
  }

  func setFormat(_ format: UInt32) throws {
    try environment.write { txn in
      try txn.put(
        withUnsafeBytes(of: format.littleEndian, Array.init), forKey: Array("format".utf8), in: meta)
    }
  }

  /// Removes what format 5 added beside the records (the audit indexes and their note).
  func removeAuditIndexes() throws {
    let databases = try ["by_time", "by_device", "type_counts"].map { name in
      try environment.openDatabase(name, flags: name == "by_device" ? [.duplicateSort, .duplicateFixed] : [])
    }
    try environment.write { txn in
      for database in databases { try txn.removeAll(in: database) }
      _ = try txn.delete(forKey: Array("audit-indexes".utf8), in: meta)
    }
  }

  func setDevice(_ device: UUID) throws {
    try environment.write { txn in
      try txn.put(withUnsafeBytes(of: device.uuid, Array.init), forKey: Array("device".utf8), in: meta)
    }
  }
}
