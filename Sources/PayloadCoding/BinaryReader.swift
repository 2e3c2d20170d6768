#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads the values of one `BinaryEncoder` encoding field by field, in the order they were
/// written: the fast path for hot event types (EventLog's `EventPayload.init(binary:)`).
///
/// Synthesized `Codable` costs a few thousand instructions per event (keyed containers, coding
/// paths, generic dispatch); reading the same bytes directly costs a few hundred. The bytes are
/// those of `BinaryEncoder`: a type that reads itself with a `BinaryReader` must read exactly
/// what its `Encodable` conformance writes, field by field, and a test should check both ways
/// agree. The same bounds checks apply: no input makes a read crash or go out of bounds.
public struct BinaryReader: ~Copyable {
  /// The read position: a value, so reading a payload allocates nothing but its own fields.
  var cursor: BinaryCursor

  /// Reads from `buffer`, which must stay valid while the reader is used.
  public init(_ buffer: UnsafeRawBufferPointer) {
    cursor = BinaryCursor(buffer: buffer)
  }

  /// The error a top-level decode reports for `failure` (as `BinaryDecoder` does).
  private func fail(_ failure: BinaryReadFailure) -> DecodingError {
    .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: failure.message))
  }

  /// Reads a `UUID` (16 raw bytes).
  public mutating func uuid() throws -> UUID {
    do throws(BinaryReadFailure) { return try cursor.readUUID() } catch { throw fail(error) }
  }

  /// Reads a `UUID`'s 16 raw bytes without creating the `UUID`: for copying an ID from a payload
  /// into a row or a key.
  /// - Returns: bytes inside the reader's buffer, valid as long as it is.
  public mutating func uuidBytes() throws -> UnsafeRawBufferPointer {
    do throws(BinaryReadFailure) { return try cursor.readFixedBytes(16, "UUID") } catch { throw fail(error) }
  }

  /// Reads a `String` (varint length, UTF-8).
  public mutating func string() throws -> String {
    do throws(BinaryReadFailure) { return try cursor.readString() } catch { throw fail(error) }
  }

  /// Reads a `String`'s UTF-8 bytes (varint length, then the bytes, checked to be well-formed)
  /// without creating the `String`: for copying text from a payload into a row.
  /// - Returns: bytes inside the reader's buffer, valid as long as it is.
  public mutating func stringBytes() throws -> UnsafeRawBufferPointer {
    do throws(BinaryReadFailure) { return try cursor.readStringBytes() } catch { throw fail(error) }
  }

  /// Reads a `Data`'s or a `[UInt8]`'s bytes (varint length, then the bytes) without copying
  /// them: the stored form of a personal value, which EventLog's `Personal` reads.
  /// - Returns: bytes inside the reader's buffer, valid as long as it is.
  package mutating func lengthPrefixedBytes() throws -> UnsafeRawBufferPointer {
    do throws(BinaryReadFailure) {
      let bytes = try cursor.readByteArrayRange()
      return UnsafeRawBufferPointer(rebasing: cursor.buffer[bytes])
    } catch {
      throw fail(error)
    }
  }

  /// Reads an `Int` (zigzag varint).
  public mutating func int() throws -> Int {
    do throws(BinaryReadFailure) { return try cursor.readSigned(Int.self, "Int") } catch { throw fail(error) }
  }

  /// Reads an `Int64` (zigzag varint).
  public mutating func int64() throws -> Int64 {
    do throws(BinaryReadFailure) { return try cursor.readSigned(Int64.self, "Int64") } catch {
      throw fail(error)
    }
  }

  /// Reads a `UInt64` (varint).
  public mutating func uint64() throws -> UInt64 {
    do throws(BinaryReadFailure) { return try cursor.readUnsigned(UInt64.self, "UInt64") } catch {
      throw fail(error)
    }
  }

  /// Reads a `Bool` (one byte, 0 or 1).
  public mutating func bool() throws -> Bool {
    do throws(BinaryReadFailure) { return try cursor.readBool() } catch { throw fail(error) }
  }

  /// Reads a `Double` (8-byte bit pattern).
  public mutating func double() throws -> Double {
    do throws(BinaryReadFailure) { return try cursor.readDouble() } catch { throw fail(error) }
  }

  /// Reads a `Date` (8-byte bit pattern of `timeIntervalSinceReferenceDate`).
  public mutating func date() throws -> Date {
    do throws(BinaryReadFailure) { return try cursor.readDate() } catch { throw fail(error) }
  }

  /// Reads an optional: its tag byte, then the value with `read` when it is present.
  public mutating func optional<T>(_ read: (inout BinaryReader) throws -> T) throws -> T? {
    let present: Bool
    do throws(BinaryReadFailure) { present = try cursor.readPresence("Optional") } catch { throw fail(error) }
    return present ? try read(&self) : nil
  }

  /// Reads a value through its `Decodable` conformance (for fields without a fast path).
  public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let state = BinaryDecodingState(buffer: cursor.buffer)
    defer { state.invalidate() }
    state.offset = cursor.offset
    let value = try state.decodeValue(T.self)
    if let deferred = state.deferredFailure { throw state.decodingError(deferred, depth: 0) }
    cursor.offset = state.offset
    return value
  }

  /// Checks that every byte was read.
  /// - Throws: `DecodingError` naming the trailing bytes.
  public func finish() throws {
    let remaining = cursor.buffer.count - cursor.offset
    guard remaining == 0 else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: [],
          debugDescription:
            "\(remaining) unexpected trailing bytes at byte \(cursor.offset) after the top-level value"
        )
      )
    }
  }
}
