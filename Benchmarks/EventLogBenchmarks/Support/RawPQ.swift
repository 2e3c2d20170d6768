import CLibPQ
import Foundation

/// The few libpq calls the `libpq-raw` baseline makes, written as a hand-written client would:
/// one connection, prepared statements, parameters and results in binary form. No deadlines, no
/// reconnection, no copying of results into strings.
final class RawPQConnection {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private let connection: OpaquePointer

  /// Connects to `url` (a libpq URI).
  init(url: String) throws {
    guard let connection = PQconnectdb(url) else { throw Failure(description: "libpq: out of memory") }
    guard PQstatus(connection) == CONNECTION_OK else {
      let message = String(cString: PQerrorMessage(connection))
      PQfinish(connection)
      throw Failure(description: "connect: \(message)")
    }
    self.connection = connection
  }

  deinit { PQfinish(connection) }

  /// The process ID of the server backend serving this connection.
  var backendPID: Int32 { PQbackendPID(connection) }

  /// Runs a statement without parameters and fails unless it succeeded.
  func execute(_ sql: String) throws {
    try check(PQexec(connection, sql), sql).clear()
  }

  /// Prepares `sql` as the statement `name`, with parameters of the types `types` (OIDs).
  func prepare(_ name: String, _ sql: String, types: [UInt32]) throws {
    try check(PQprepare(connection, name, sql, Int32(types.count), types), "prepare \(name)").clear()
  }

  /// Runs the prepared statement `name` with the binary parameters of `parameters`; the result
  /// is binary too.
  /// - Returns: the result, which the caller clears.
  func run(_ name: String, _ parameters: BinaryParameters) throws -> RawPQResult {
    let result = parameters.bytes.withUnsafeBufferPointer { bytes -> OpaquePointer? in
      guard let start = bytes.baseAddress else {
        return PQexecPrepared(connection, name, 0, nil, nil, nil, 1)
      }
      let base = UnsafeRawPointer(start)
      let values: [UnsafePointer<CChar>?] = parameters.offsets.map {
        base.advanced(by: $0).assumingMemoryBound(to: CChar.self)
      }
      let formats = [Int32](repeating: 1, count: values.count)
      return PQexecPrepared(
        connection, name, Int32(values.count), values, parameters.lengths, formats, 1)
    }
    return try check(result, name)
  }

  private func check(_ result: OpaquePointer?, _ what: String) throws -> RawPQResult {
    guard let result else {
      throw Failure(description: "\(what): \(String(cString: PQerrorMessage(connection)))")
    }
    let status = PQresultStatus(result)
    guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
      let message = String(cString: PQresultErrorMessage(result))
      PQclear(result)
      throw Failure(description: "\(what): \(message)")
    }
    return RawPQResult(result: result)
  }
}

/// A result in binary form; valid until ``clear()``.
struct RawPQResult {
  let result: OpaquePointer

  func clear() { PQclear(result) }

  var rows: Int { Int(PQntuples(result)) }

  /// The rows an `INSERT` stored.
  var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

  func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

  /// The bytes of a value (empty for `NULL`), valid until ``clear()``.
  func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
    let length = Int(PQgetlength(result, Int32(row), Int32(column)))
    guard let value = PQgetvalue(result, Int32(row), Int32(column)) else {
      return UnsafeRawBufferPointer(start: nil, count: 0)
    }
    return UnsafeRawBufferPointer(start: value, count: length)
  }

  /// An `int8`, `int4` or `int2` value in binary form (big-endian).
  func integer(_ row: Int, _ column: Int) throws -> Int64 {
    let value = bytes(row, column)
    switch value.count {
    case 8: return Int64(bigEndian: value.loadUnaligned(as: Int64.self))
    case 4: return Int64(Int32(bigEndian: value.loadUnaligned(as: Int32.self)))
    case 2: return Int64(Int16(bigEndian: value.loadUnaligned(as: Int16.self)))
    default:
      throw RawPQConnection.Failure(description: "row \(row + 1), column \(column + 1): not an integer")
    }
  }

  /// A `uuid` value in binary form (16 bytes).
  func uuid(_ row: Int, _ column: Int) throws -> UUID {
    let value = bytes(row, column)
    guard value.count == 16 else {
      throw RawPQConnection.Failure(description: "row \(row + 1), column \(column + 1): not a UUID")
    }
    return UUID(uuid: value.loadUnaligned(as: uuid_t.self))
  }

  /// The JSON text of a `jsonb` value in binary form (its format version 1, then the text as
  /// `jsonb` prints it), valid until ``clear()``.
  func jsonb(_ row: Int, _ column: Int) throws -> UnsafeRawBufferPointer {
    let value = bytes(row, column)
    guard value.first == 1 else {
      throw RawPQConnection.Failure(description: "row \(row + 1), column \(column + 1): not jsonb version 1")
    }
    return UnsafeRawBufferPointer(rebasing: value.dropFirst())
  }

  /// A `text` value (UTF-8), or `nil` for `NULL`.
  func text(_ row: Int, _ column: Int) -> String? {
    isNull(row, column) ? nil : String(decoding: bytes(row, column), as: UTF8.self)
  }
}

/// Statement parameters in PostgreSQL's binary forms, in one buffer.
struct BinaryParameters {
  /// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for timestamps.
  static let postgresEpochMicroseconds: Int64 = 946_684_800_000_000

  /// The parameters' type OIDs.
  enum OID {
    static let int8: UInt32 = 20
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let uuid: UInt32 = 2950
    static let jsonb: UInt32 = 3802
    static let timestamptz: UInt32 = 1184
    static let bytea: UInt32 = 17
  }

  private(set) var bytes: [UInt8] = []
  private(set) var offsets: [Int] = []
  private(set) var lengths: [Int32] = []

  init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

  mutating func removeAll() {
    bytes.removeAll(keepingCapacity: true)
    offsets.removeAll(keepingCapacity: true)
    lengths.removeAll(keepingCapacity: true)
  }

  private mutating func begin() { offsets.append(bytes.count) }
  private mutating func end() { lengths.append(Int32(bytes.count - offsets[offsets.count - 1])) }

  mutating func int8(_ value: Int64) {
    begin()
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    end()
  }

  mutating func int4(_ value: Int32) {
    begin()
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    end()
  }

  mutating func uuid(_ value: UUID) {
    begin()
    withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    end()
  }

  mutating func text(_ value: String) {
    begin()
    bytes.append(contentsOf: value.utf8)
    end()
  }

  /// `bytea`'s binary form: the bytes.
  mutating func bytea(_ value: [UInt8]) {
    begin()
    bytes.append(contentsOf: value)
    end()
  }

  /// `jsonb`'s binary form: the format version 1, then the JSON text (UTF-8).
  mutating func jsonb(_ json: [UInt8]) {
    begin()
    bytes.append(1)
    bytes.append(contentsOf: json)
    end()
  }

  /// `timestamptz`'s binary form: microseconds since 2000-01-01 UTC.
  mutating func timestamptz(microsecondsSince1970 value: Int64) {
    int8(value - Self.postgresEpochMicroseconds)
  }
}
