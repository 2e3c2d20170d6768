import Checksum
import EventLog
import Foundation
import LMDB
import Postgres
import Replication
import Testing

/// What a forger holding an environment's file does with the LMDB API: change records, and
/// recompute every later record's chain value and checksum so that `verify` passes; remove a
/// record with its ID index entry. The store must be closed.
struct ForgedLog {
  let environment: Environment
  let events: Database
  let eventIDs: Database

  init(_ path: String) throws {
    var options = Environment.Options()
    options.maxDatabases = 16
    environment = try Environment(path: path, options: options)
    events = try environment.openDatabase("events", flags: [.integerKeys])
    eventIDs = try environment.openDatabase("event_ids", flags: [])
  }

  /// Every record's bytes, by sequence.
  func records() throws -> [UInt64: [UInt8]] {
    try environment.read { txn in
      try txn.withCursor(in: events) { cursor in
        var records: [UInt64: [UInt8]] = [:]
        var found = try cursor.move(.first)
        while found {
          records[cursor.key.loadUnaligned(as: UInt64.self)] = Array(cursor.value)
          found = try cursor.move(.next)
        }
        return records
      }
    }
  }

  /// Changes record `sequence` with `change`, then recomputes the chain value and the CRC-32C of
  /// it and of every record after it: the forged log verifies.
  func rewrite(_ sequence: UInt64, _ change: (inout [UInt8]) -> Void) throws {
    var records = try self.records()
    change(&records[sequence, default: []])
    let before = sequence == 1 ? nil : records[sequence - 1]
    var previous = try #require(sequence == 1 ? ChainValue.zero : before.flatMap(Self.chain(of:)))
    try environment.write { txn in
      for next in records.keys.sorted() where next >= sequence {
        var record = records[next] ?? []
        let body = record.count - 36
        let value = record.withUnsafeBytes {
          RecordCodec.chainValue(of: UnsafeRawBufferPointer(rebasing: $0[0..<body]), after: previous)
        }
        record.replaceSubrange(body..<(body + 32), with: value.bytes)
        let crc = record.withUnsafeBytes {
          CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(body + 32)]))
        }
        withUnsafeBytes(of: crc.littleEndian) { record.replaceSubrange((body + 32)..., with: $0) }
        previous = value
        var key = next
        try withUnsafeBytes(of: &key) { k in
          try record.withUnsafeBytes { try txn.put($0, forKey: k, in: events) }
        }
      }
    }
  }

  /// Removes the last record, and its event ID's index entry.
  func removeLast() throws {
    let records = try self.records()
    let last = try #require(records.keys.max())
    let id = try #require(
      records[last].map { record in
        record.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: 32, as: uuid_t.self)) }
      })
    try environment.write { txn in
      var key = last
      _ = try withUnsafeBytes(of: &key) { try txn.delete(forKey: $0, in: events) }
      _ = try withUnsafeBytes(of: id.uuid) { try txn.delete(forKey: $0, in: eventIDs) }
    }
  }

  /// The chain value a record carries.
  static func chain(of record: [UInt8]) -> ChainValue? {
    ChainValue(bytes: record[(record.count - 36)..<(record.count - 4)])
  }

  /// Replaces the first occurrence of `old` in `record` by `new` (the same length).
  static func replace(_ old: String, with new: String, in record: inout [UInt8]) {
    let old = Array(old.utf8)
    precondition(old.count == new.utf8.count, "a forger keeps the lengths")
    guard
      let start = (0...(record.count - old.count)).first(where: {
        Array(record[$0..<($0 + old.count)]) == old
      })
    else { preconditionFailure("'\(old)' is not in the record") }
    record.replaceSubrange(start..<(start + old.count), with: Array(new.utf8))
  }
}

/// Runs `sql` on the fixture's database as the tables' owner.
func asTableOwner(
  _ fixture: ServerFixture, _ sql: String, _ parameters: [PostgresValue] = []
) throws -> PostgresRows {
  let connection = try PostgresConnection(PostgresConfiguration(url: fixture.ownerURL))
  defer { connection.close() }
  return try connection.query(sql, parameters, purpose: "as the tables' owner")
}

/// Runs the statements of `script` on the fixture's database as the tables' owner.
func asTableOwner(script: String, _ fixture: ServerFixture) throws {
  let connection = try PostgresConnection(PostgresConfiguration(url: fixture.ownerURL))
  defer { connection.close() }
  try connection.execute(script, purpose: "as the tables' owner")
}

extension RemoteVerificationReport {
  /// The kinds of the differences found.
  var kinds: Set<Kind> { Set(problemCounts.keys) }
}
