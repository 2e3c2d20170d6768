import Foundation

/// The rows a statement returned, copied out of libpq's result: column names and text values.
///
/// Reading a value names the row, the column and the statement's purpose when it is missing or
/// does not parse, as a ``PostgresError`` of kind ``PostgresError/Kind/unexpectedResult``.
public struct PostgresRows: Sendable {
  /// The column names, in order.
  public let columns: [String]
  /// The number of rows.
  public let count: Int
  /// The rows a command changed (`INSERT`, `UPDATE`…), or 0.
  public let affectedRows: Int
  /// The values, row after row, in PostgreSQL's text form (`nil` for `NULL`).
  let values: [String?]
  let purpose: String
  let server: String

  init(columns: [String], count: Int, affectedRows: Int, values: [String?], purpose: String, server: String) {
    self.columns = columns
    self.count = count
    self.affectedRows = affectedRows
    self.values = values
    self.purpose = purpose
    self.server = server
  }

  /// Whether there are no rows.
  public var isEmpty: Bool { count == 0 }

  private func failure(_ message: String) -> PostgresError {
    PostgresError(kind: .unexpectedResult, purpose: purpose, message: message, server: server)
  }

  private func index(of column: String) throws(PostgresError) -> Int {
    guard let index = columns.firstIndex(of: column) else {
      throw failure("the result has no column '\(column)' (it has \(columns.joined(separator: ", ")))")
    }
    return index
  }

  /// The value of `column` in row `row` in text form, or `nil` for `NULL`.
  /// - Throws: when there is no such row or column.
  public func value(_ row: Int, _ column: String) throws(PostgresError) -> String? {
    guard row >= 0 && row < count else { throw failure("the result has no row \(row + 1)") }
    return values[row * columns.count + (try index(of: column))]
  }

  /// The value of `column` in row `row`, which must not be `NULL`.
  public func string(_ row: Int, _ column: String) throws(PostgresError) -> String {
    guard let value = try value(row, column) else {
      throw failure("row \(row + 1): column '\(column)' is NULL")
    }
    return value
  }

  /// The integer value of `column` in row `row`.
  public func integer<T: FixedWidthInteger>(
    _ row: Int, _ column: String, as type: T.Type = Int64.self
  ) throws(PostgresError) -> T {
    let text = try string(row, column)
    guard let value = T(text) else {
      throw failure("row \(row + 1): column '\(column)' is '\(text)', not an integer of type \(T.self)")
    }
    return value
  }

  /// The UUID value of `column` in row `row`.
  public func uuid(_ row: Int, _ column: String) throws(PostgresError) -> UUID {
    let text = try string(row, column)
    guard let value = Self.parseUUID(text) ?? UUID(uuidString: text) else {
      throw failure("row \(row + 1): column '\(column)' is '\(text)', not a UUID")
    }
    return value
  }

  /// The `bytea` value of `column` in row `row`, decoded from PostgreSQL's hex form (`\x…`).
  public func bytes(_ row: Int, _ column: String) throws(PostgresError) -> [UInt8] {
    let text = try string(row, column)
    guard let bytes = Self.decodeHex(text) else {
      throw failure("row \(row + 1): column '\(column)' is not bytea in hex form")
    }
    return bytes
  }

  /// Parses PostgreSQL's form of a `uuid`, `8-4-4-4-12` hex digits (either case); `nil` for
  /// anything else. (Foundation's `UUID(uuidString:)` scans with `sscanf` on Linux: a pull of a
  /// page spent 5% of its time there.)
  static func parseUUID(_ text: String) -> UUID? {
    var text = text
    text.makeContiguousUTF8()  // a no-op for the native strings libpq's values become
    return text.utf8.withContiguousStorageIfAvailable(parseUUID) ?? nil
  }

  private static func parseUUID(_ buffer: UnsafeBufferPointer<UInt8>) -> UUID? {
    guard buffer.count == 36 else { return nil }
    var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    let parsed = withUnsafeMutableBytes(of: &value) { bytes -> Bool in
      var index = 0
      for byte in 0..<16 {
        if index == 8 || index == 13 || index == 18 || index == 23 {
          guard buffer[index] == UInt8(ascii: "-") else { return false }
          index += 1
        }
        guard let high = nibble(buffer[index]), let low = nibble(buffer[index + 1]) else { return false }
        bytes[byte] = high << 4 | low
        index += 2
      }
      return true
    }
    return parsed ? UUID(uuid: value) : nil
  }

  @inline(__always) private static func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Decodes `\x0a1b…`; `nil` for anything else.
  static func decodeHex(_ text: String) -> [UInt8]? {
    var text = text
    text.makeContiguousUTF8()  // a no-op for the native strings libpq's values become
    return text.utf8.withContiguousStorageIfAvailable(decodeHex) ?? nil
  }

  private static func decodeHex(_ buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    guard buffer.count >= 2, buffer[0] == UInt8(ascii: "\\"), buffer[1] == UInt8(ascii: "x"),
      buffer.count % 2 == 0
    else { return nil }
    let count = (buffer.count - 2) / 2
    var valid = true
    let result = [UInt8](unsafeUninitializedCapacity: count) { bytes, initialized in
      for byte in 0..<count {
        guard let high = nibble(buffer[2 + 2 * byte]), let low = nibble(buffer[3 + 2 * byte]) else {
          valid = false
          break
        }
        bytes[byte] = high << 4 | low
      }
      initialized = valid ? count : 0
    }
    return valid ? result : nil
  }
}
