import CLMDB
import Foundation
import Sodium
import TestKit
import Testing

@testable import EventLogBenchmarks

/// The baselines do eventlog's work at append: each event stored with its provenance (origin
/// device and sequence) and its value in the hash chain, BLAKE2b-256 of the record's bytes before
/// the value keyed with the previous record's value (32 zero bytes before the first), carried
/// across commits and across a reopen.
@Suite("Benchmark baselines' hash chain")
struct BaselineChainTests {
  /// The offsets of the baselines' event record (`RawRecords`): the origin device after type,
  /// sequence, event ID, stream, version and recorded-at; the origin sequence after it; the
  /// chain value and the CRC-32C at the end.
  static let deviceOffset = 1 + 8 + 16 + 16 + 8 + 8
  static let originSequenceOffset = deviceOffset + 16
  static let headerSize = originSequenceOffset + 8
  /// `RawRecords.device`'s bytes.
  static let device: [UInt8] = [
    0x0B, 0xE4, 0xC4, 0x11, 0x5E, 0x7A, 0x4B, 0x1D, 0x9A, 0x3F, 0x6C, 0x20, 0x8E, 0x51, 0xD7, 0x02,
  ]

  @Test(
    "lmdb-raw stores each event with its origin and a chain value that verifies, across commits and a reopen")
  func lmdbRaw() throws {
    let dir = TemporaryDirectory("benchmark-chain")
    var generator = MixedEventGenerator()
    try LMDBRawLog(path: dir.path("raw"), durable: false).append(generator.next(300))
    let log = try LMDBRawLog(path: dir.path("raw"), durable: false)
    try log.append(generator.next(200))
    try log.append(generator.next(100))
    let records = try Self.records(
      log.environment, try log.environment.openDatabase("events", flags: MDB_INTEGERKEY))
    #expect(records.count == 600)
    try Self.expectChain(records)
  }

  @Test("lmdb-append stores each event with its origin and a chain value that verifies, across commits")
  func lmdbAppend() throws {
    let dir = TemporaryDirectory("benchmark-chain")
    var generator = MixedEventGenerator()
    let log = try LMDBAppendSystem.Log(path: dir.path("append"), durable: false)
    try log.append(generator.next(250))
    try log.append(generator.next(250))
    let records = try Self.records(log.environment, log.events)
    #expect(records.count == 500)
    try Self.expectChain(records)
  }

  @Test(
    "sqlite stores each event's origin and a chain value over its row's fields, across commits and a reopen")
  func sqlite() throws {
    let dir = TemporaryDirectory("benchmark-chain")
    var generator = MixedEventGenerator()
    try SQLiteLog(directory: dir.path("sqlite"), durable: false).append(generator.next(300))
    let log = try SQLiteLog(directory: dir.path("sqlite"), durable: false)
    try log.append(generator.next(200))
    // A failed transaction leaves the chain where the last commit left it.
    #expect(throws: (any Error).self) {
      try log.transaction { () throws -> Void in
        for record in generator.next(5) { try log.apply(record, recordedAt: 1) }
        throw CancellationError()
      }
    }
    try log.append(generator.next(100))
    let rows = try log.database.prepare(
      """
      SELECT seq, id, stream, version, type, recorded_at, origin_device, origin_seq, payload, chain
      FROM events ORDER BY seq
      """)
    var previous = [UInt8](repeating: 0, count: 32)
    var count = 0
    while try rows.step() {
      count += 1
      let sequence = rows.int64(0)
      #expect(sequence == Int64(count))
      #expect(Array(rows.blob(6)) == Self.device, "event \(sequence): origin device")
      #expect(rows.int64(7) == sequence, "event \(sequence): origin sequence")
      // The row in the baselines' record layout, up to the chain value.
      var body: [UInt8] = [UInt8(truncatingIfNeeded: rows.int64(4))]
      withUnsafeBytes(of: sequence.littleEndian) { body += $0 }
      body += rows.blob(1)
      body += rows.blob(2)
      withUnsafeBytes(of: rows.int64(3).littleEndian) { body += $0 }
      withUnsafeBytes(of: rows.int64(5).littleEndian) { body += $0 }
      body += rows.blob(6)
      withUnsafeBytes(of: rows.int64(7).littleEndian) { body += $0 }
      body += rows.blob(8)
      let chain = BLAKE2b256.hash(previous + body)
      #expect(Array(rows.blob(9)) == chain, "event \(sequence): chain value")
      previous = Array(rows.blob(9))
    }
    rows.reset()
    #expect(count == 600)
  }

  /// Every event record of `events`, in order, with its key.
  static func records(_ environment: RawEnvironment, _ events: MDB_dbi) throws -> [(UInt64, [UInt8])] {
    var records: [(UInt64, [UInt8])] = []
    try environment.read { txn in
      try RawLMDB.scan(txn, events) { key, value in
        records.append((key.loadUnaligned(as: UInt64.self), Array(value)))
      }
    }
    return records
  }

  /// Each record holds the baselines' device and its own sequence as its origin, then, before its
  /// CRC-32C, the keyed BLAKE2b-256 of its bytes before it; the first is keyed with 32 zero bytes.
  static func expectChain(_ records: [(UInt64, [UInt8])]) throws {
    var previous = [UInt8](repeating: 0, count: 32)
    for (sequence, record) in records {
      try #require(record.count >= headerSize + 32 + 4, "event \(sequence): \(record.count) bytes")
      #expect(Array(record[deviceOffset..<(deviceOffset + 16)]) == device, "event \(sequence): origin device")
      let origin = record[originSequenceOffset..<(originSequenceOffset + 8)].withUnsafeBytes {
        UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
      }
      #expect(origin == sequence, "event \(sequence): origin sequence")
      let valueStart = record.count - 4 - 32
      let chain = BLAKE2b256.hash(previous + Array(record[..<valueStart]))
      #expect(Array(record[valueStart..<(valueStart + 32)]) == chain, "event \(sequence): chain value")
      previous = Array(record[valueStart..<(valueStart + 32)])
    }
  }
}
