import Foundation
import LMDB

extension EventStore {
  /// How many records one transaction of the format-5 upgrade rewrites: a bounded transaction
  /// (about 20 MiB of pages for booking events), so that a log of any length upgrades.
  static let chainUpgradeChunk = 50_000

  /// The `meta` key of the format-5 upgrade's progress: the last sequence whose record it has
  /// rewritten (UInt64 little-endian), present only while the upgrade is under way.
  static let chainUpgradeKey = Array("upgrade-chain".utf8)

  /// The `state` key prefix under which replication recorded, before format 5, where each pulled
  /// event came from: `replication.pulled.` + the local sequence (UInt64 big-endian) → the server
  /// position (UInt64 LE), the origin device (16 bytes), the origin sequence (UInt64 LE). The
  /// upgrade reads it once, to carry that provenance into the events' records (format 5 stores it
  /// there); nothing else in this module reads replication's keys.
  static let legacyPulledPrefix = Array("replication.pulled.".utf8)

  /// Rewrites every record of format 1 (environment formats 1 to 4) as a record of format 2 with
  /// its provenance and its chain value, in transactions of ``chainUpgradeChunk`` records, each
  /// noting how far it got (``chainUpgradeKey``), so that a crash resumes where it stopped. The
  /// open's first write transaction then stores format 5 and removes the note.
  ///
  /// An event's provenance: the origin replication recorded for a pulled event, else this
  /// device and the event's own sequence (appended here, or imported: before format 5 an import
  /// kept no origin, and replication pushed such events as this device's own).
  /// - Parameters:
  ///   - environment: the environment to upgrade.
  ///   - schema: its databases.
  ///   - device: its device ID, the origin of the events not pulled.
  ///   - chunk: records per transaction.
  ///   - transactions: at most this many transactions (tests stop an upgrade half-way with it).
  /// - Throws: ``EventStoreError`` for a damaged record or a storage failure; what was rewritten
  ///   before stays, and the next writable open resumes.
  /// - Complexity: O(n) in the log's length, once.
  static func chainLegacyRecords(
    environment: Environment, schema: Schema, device: UUID, chunk: Int = chainUpgradeChunk,
    transactions: Int = .max
  ) throws {
    for _ in 0..<transactions {
      let done = try storage {
        try environment.write { txn -> Bool in
          try rewriteLegacyChunk(in: txn, schema: schema, device: device, chunk: chunk)
        }
      }
      if done { return }
    }
  }

  /// Rewrites the next chunk of format-1 records.
  /// - Returns: whether no format-1 record is left.
  private static func rewriteLegacyChunk(
    in txn: WriteTransaction, schema: Schema, device: UUID, chunk: Int
  ) throws -> Bool {
    let rewritten: UInt64 =
      try txn.value(forKey: chainUpgradeKey, in: schema.meta).flatMap { bytes in
        bytes.count == 8
          ? bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } : nil
      } ?? 0
    // The audit indexes of a log before format 5 say nothing of the rewritten records' origins:
    // built afresh after the rewrite (``buildAuditIndexes(environment:schema:chunk:transactions:)``).
    if rewritten == 0 { _ = try txn.delete(forKey: Schema.auditIndexesKey, in: schema.meta) }
    // The chain continues from the last record rewritten (or from zero).
    var previous = ChainValue.zero
    if rewritten > 0 {
      let stored = try withUnsafeBytes(of: rewritten) { key in
        try txn.withValue(forKey: key, in: schema.events) { RecordCodec.storedChain(of: $0) }
      }
      guard let stored, let chain = stored else {
        throw EventStoreError.corruptedRecord(
          sequence: rewritten, reason: "the format-5 upgrade rewrote it, but it carries no chain value")
      }
      previous = chain
    }
    var records: [RecordedEvent] = []
    let last = try txn.withCursor(in: schema.events) { cursor -> UInt64 in
      var found = try withUnsafeBytes(of: rewritten + 1) { try cursor.seek($0) }
      var last = rewritten
      while found && records.count < chunk {
        let sequence = cursor.key.loadUnaligned(as: UInt64.self)
        records.append(try RecordCodec.decode(cursor.value, sequence: sequence))
        last = sequence
        found = try cursor.move(.next)
      }
      return last
    }
    guard !records.isEmpty else { return true }
    let pulled = try legacyPulledOrigins(from: rewritten + 1, through: last, in: txn, schema: schema)
    for event in records {
      let provenance =
        event.provenance ?? pulled[event.sequence]
        ?? RecordedEvent.Provenance(device: device, sequence: event.sequence)
      let fields = RecordCodec.Fields(
        sequence: event.sequence, version: event.version,
        recordedAtMicroseconds: RecordCodec.microseconds(event.recordedAt),
        event: NewEvent(
          id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
          payloadEncoding: event.payloadEncoding, metadata: event.metadata),
        stream: event.stream, provenance: provenance, previousChain: previous)
      try withUnsafeBytes(of: event.sequence) { key in
        try txn.put(reservingCount: RecordCodec.encodedSize(fields), forKey: key, in: schema.events) {
          previous = RecordCodec.encode(fields, into: $0)
        }
      }
    }
    var mark = last.littleEndian
    try chainUpgradeKey.withUnsafeBytes { k in
      try withUnsafeBytes(of: &mark) { v in try txn.put(v, forKey: k, in: schema.meta) }
    }
    return false
  }

  /// Where replication recorded the pulled events in `first...last` came from.
  private static func legacyPulledOrigins(
    from first: UInt64, through last: UInt64, in txn: Transaction, schema: Schema
  ) throws -> [UInt64: RecordedEvent.Provenance] {
    guard let state = schema.state else { return [:] }
    var origins: [UInt64: RecordedEvent.Provenance] = [:]
    let prefix = legacyPulledPrefix
    try txn.withCursor(in: state) { cursor in
      var found = try (prefix + withUnsafeBytes(of: first.bigEndian, Array.init)).withUnsafeBytes {
        try cursor.seek($0)
      }
      while found {
        let key = cursor.key
        guard key.count == prefix.count + 8, key.starts(with: prefix) else { break }
        let sequence = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self))
        guard sequence <= last else { break }
        let value = cursor.value
        if value.count == 32 {
          let device = UUID(uuid: value.loadUnaligned(fromByteOffset: 8, as: uuid_t.self))
          let origin = UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
          if device != RecordCodec.unknownDevice && origin > 0 {
            origins[sequence] = RecordedEvent.Provenance(device: device, sequence: origin)
          }
        }
        found = try cursor.move(.next)
      }
    }
    return origins
  }
}
