import CSQLite
import Foundation

/// A failed SQLite call, with SQLite's message and the statement.
struct SQLiteError: Error, CustomStringConvertible {
  var code: Int32
  var message: String
  var sql: String

  var description: String { "SQLite error \(code): \(message) (in: \(sql))" }
}

/// SQLite's "copy the bytes now" destructor (`SQLITE_TRANSIENT`), which C defines as `(void*)-1`.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection of the `sqlite` baseline, through the system `libsqlite3`.
final class SQLiteDatabase {
  let handle: OpaquePointer
  let path: String

  /// Opens (creating) the database; `durable` sets WAL with `synchronous=FULL` (a commit returns
  /// once the WAL is fsynced), otherwise `synchronous=OFF` for fixture building.
  init(path: String, durable: Bool) throws {
    self.path = path
    var db: OpaquePointer?
    let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
    guard rc == SQLITE_OK, let db else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close_v2(db)
      throw SQLiteError(code: rc, message: message, sql: "open \(path)")
    }
    handle = db
    try execute("PRAGMA journal_mode=WAL")
    try execute(durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
  }

  deinit { sqlite3_close_v2(handle) }

  private func failure(_ rc: Int32, _ sql: String) -> SQLiteError {
    SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
  }

  @inline(__always) func check(_ rc: Int32, _ sql: @autoclosure () -> String) throws(SQLiteError) {
    if _slowPath(rc != SQLITE_OK) { throw failure(rc, sql()) }
  }

  /// Runs SQL without results (several statements allowed).
  func execute(_ sql: String) throws {
    try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
  }

  func prepare(_ sql: String) throws -> SQLiteStatement {
    var statement: OpaquePointer?
    try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql)
    guard let statement else { throw failure(SQLITE_MISUSE, sql) }
    return SQLiteStatement(handle: statement, database: self, sql: sql)
  }
}

@available(*, unavailable)
extension SQLiteDatabase: Sendable {}

/// A prepared statement: bind, step, read columns, reset.
final class SQLiteStatement {
  let handle: OpaquePointer
  let database: SQLiteDatabase
  let sql: String

  init(handle: OpaquePointer, database: SQLiteDatabase, sql: String) {
    self.handle = handle
    self.database = database
    self.sql = sql
  }

  deinit { sqlite3_finalize(handle) }

  @inline(__always) func bind(_ index: Int32, _ value: Int64) throws {
    try database.check(sqlite3_bind_int64(handle, index, value), sql)
  }

  @inline(__always) func bind(_ index: Int32, _ value: Double) throws {
    try database.check(sqlite3_bind_double(handle, index, value), sql)
  }

  @inline(__always) func bind(_ index: Int32, _ value: String?) throws {
    guard let value else { return try database.check(sqlite3_bind_null(handle, index), sql) }
    try database.check(sqlite3_bind_text(handle, index, value, -1, sqliteTransient), sql)
  }

  @inline(__always) func bind(_ index: Int32, _ value: UnsafeRawBufferPointer) throws {
    try database.check(
      sqlite3_bind_blob(handle, index, value.baseAddress, Int32(value.count), sqliteTransient), sql)
  }

  /// A blob (a sealed value), or NULL.
  @inline(__always) func bind(_ index: Int32, _ value: [UInt8]?) throws {
    guard let value else { return try database.check(sqlite3_bind_null(handle, index), sql) }
    try value.withUnsafeBytes { try bind(index, $0) }
  }

  @inline(__always) func bind(_ index: Int32, _ value: UUID) throws {
    try withUnsafeBytes(of: value.uuid) { try bind(index, $0) }
  }

  /// Steps once: `true` when a row is ready, `false` when done.
  @inline(__always) @discardableResult func step() throws -> Bool {
    let rc = sqlite3_step(handle)
    if rc == SQLITE_ROW { return true }
    if rc == SQLITE_DONE { return false }
    throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(database.handle)), sql: sql)
  }

  /// Resets the statement for the next execution and clears its bindings.
  @inline(__always) func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  /// Binds nothing more, steps to completion, resets.
  func run() throws {
    defer { reset() }
    while try step() {}
  }

  @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
  @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

  @inline(__always) func text(_ column: Int32) -> String? {
    guard let pointer = sqlite3_column_text(handle, column) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
  }

  /// The blob of `column`: valid until the next step or reset.
  @inline(__always) func blob(_ column: Int32) -> UnsafeRawBufferPointer {
    let pointer = sqlite3_column_blob(handle, column)
    return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
  }

  /// The blob of `column`, or `nil` when it is NULL: valid until the next step or reset.
  @inline(__always) func optionalBlob(_ column: Int32) -> UnsafeRawBufferPointer? {
    sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : blob(column)
  }

  /// A 16-byte blob column as a UUID.
  func uuid(_ column: Int32) throws -> UUID {
    let bytes = blob(column)
    guard bytes.count == 16 else {
      throw SQLiteError(code: SQLITE_MISMATCH, message: "column \(column) is not a 16-byte UUID", sql: sql)
    }
    return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
  }

  /// A 32-byte blob column as a chain value.
  func chainValue(_ column: Int32) throws -> RawChainValue {
    let bytes = blob(column)
    guard bytes.count == RawChainValue.length else {
      throw SQLiteError(
        code: SQLITE_MISMATCH, message: "column \(column) is not a 32-byte chain value", sql: sql)
    }
    return RawChainValue(loadingFrom: bytes)
  }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
