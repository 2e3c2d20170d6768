import Checksum
import Foundation

/// The binary layout of one stored event (record format 1, inside environment format 4). See
/// `Docs/OnDiskFormat.md`.
///
/// ```
/// offset size field (all integers little-endian)
///  0     1   record format version (1)
///  1     1   flags: bit 0 correlation ID present, bit 1 causation ID present, bit 2 the
///            payload is JSON text (``PayloadEncoding/json``; format 4)
///  2     2   payload schema version
///  4     4   payload length P
///  8     8   sequence number
/// 16     8   version within the stream
/// 24     8   recorded-at, microseconds since 1970-01-01T00:00:00Z (signed)
/// 32    16   event ID (UUID bytes)
/// 48     2   stream ID length S
/// 50     2   type name length T
/// 52     2   origin length O
/// 54     2   reserved, 0
/// 56   0/16  correlation ID, if flagged
///   …  0/16  causation ID, if flagged
///   …    S   stream ID, UTF-8
///   …    T   type name, UTF-8
///   …    O   origin, UTF-8
///   …    P   payload
///   …    4   CRC-32C of every byte before it
/// ```
package enum RecordCodec {
  static let formatVersion: UInt8 = 1
  package static let headerSize = 56
  static let maximumTypeLength = 255
  static let maximumOriginLength = 1_000
  static let maximumPayloadLength = 64 << 20

  /// The parts of a record that are written as given.
  package struct Fields {
    package var sequence: UInt64
    package var version: UInt64
    package var recordedAtMicroseconds: Int64
    package var event: NewEvent
    package var stream: StreamID

    package init(
      sequence: UInt64, version: UInt64, recordedAtMicroseconds: Int64, event: NewEvent, stream: StreamID
    ) {
      self.sequence = sequence
      self.version = version
      self.recordedAtMicroseconds = recordedAtMicroseconds
      self.event = event
      self.stream = stream
    }
  }

  /// Why `event` cannot be encoded, or `nil`.
  static func invalidReason(_ event: NewEvent) -> String? {
    let typeLength = event.type.utf8.count
    if typeLength == 0 || typeLength > maximumTypeLength {
      return "its type name must be 1 to \(maximumTypeLength) UTF-8 bytes, not \(typeLength)"
    }
    if event.metadata.origin.utf8.count > maximumOriginLength {
      return "its origin must be at most \(maximumOriginLength) UTF-8 bytes"
    }
    if event.payload.count > maximumPayloadLength {
      return "its payload of \(event.payload.count) bytes exceeds \(maximumPayloadLength) bytes"
    }
    return nil
  }

  static func encodedSize(_ fields: Fields) -> Int {
    let metadata = fields.event.metadata
    return headerSize + (metadata.correlationID == nil ? 0 : 16) + (metadata.causationID == nil ? 0 : 16)
      + fields.stream.rawValue.utf8.count + fields.event.type.utf8.count + metadata.origin.utf8.count
      + fields.event.payload.count + 4
  }

  /// Writes the record into `buffer`, which is exactly ``encodedSize(_:)`` bytes.
  static func encode(_ fields: Fields, into buffer: UnsafeMutableRawBufferPointer) {
    precondition(buffer.count == encodedSize(fields), "record buffer of the wrong size")
    let event = fields.event
    let metadata = event.metadata
    var flags: UInt8 = 0
    if metadata.correlationID != nil { flags |= 1 }
    if metadata.causationID != nil { flags |= 2 }
    if event.payloadEncoding == .json { flags |= 4 }
    buffer.storeBytes(of: formatVersion, toByteOffset: 0, as: UInt8.self)
    buffer.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
    buffer.storeBytes(of: event.schemaVersion.littleEndian, toByteOffset: 2, as: UInt16.self)
    buffer.storeBytes(of: UInt32(event.payload.count).littleEndian, toByteOffset: 4, as: UInt32.self)
    buffer.storeBytes(of: fields.sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
    buffer.storeBytes(of: fields.version.littleEndian, toByteOffset: 16, as: UInt64.self)
    buffer.storeBytes(of: fields.recordedAtMicroseconds.littleEndian, toByteOffset: 24, as: Int64.self)
    buffer.storeBytes(of: event.id.uuid, toByteOffset: 32, as: uuid_t.self)
    buffer.storeBytes(
      of: UInt16(fields.stream.rawValue.utf8.count).littleEndian, toByteOffset: 48, as: UInt16.self)
    buffer.storeBytes(of: UInt16(event.type.utf8.count).littleEndian, toByteOffset: 50, as: UInt16.self)
    buffer.storeBytes(of: UInt16(metadata.origin.utf8.count).littleEndian, toByteOffset: 52, as: UInt16.self)
    buffer.storeBytes(of: UInt16(0), toByteOffset: 54, as: UInt16.self)
    var offset = headerSize
    if let id = metadata.correlationID {
      buffer.storeBytes(of: id.uuid, toByteOffset: offset, as: uuid_t.self)
      offset += 16
    }
    if let id = metadata.causationID {
      buffer.storeBytes(of: id.uuid, toByteOffset: offset, as: uuid_t.self)
      offset += 16
    }
    func write<C: Collection<UInt8>>(_ bytes: C) {
      let target = UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)])
      target.copyBytes(from: bytes)
      offset += bytes.count
    }
    write(fields.stream.rawValue.utf8)
    write(event.type.utf8)
    write(metadata.origin.utf8)
    write(event.payload)
    let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<offset]))
    buffer.storeBytes(of: crc.littleEndian, toByteOffset: offset, as: UInt32.self)
  }

  /// Encodes a record into a new array (for tests and tools; the store encodes in place).
  package static func encode(_ fields: Fields) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: encodedSize(fields)) { buffer, count in
      encode(fields, into: UnsafeMutableRawBufferPointer(buffer))
      count = buffer.count
    }
  }

  /// Parses and verifies a stored record.
  /// - Parameters:
  ///   - buffer: the stored bytes of the record, checksum included.
  ///   - sequence: the key it is stored under; the record must carry the same number.
  /// - Returns: the event the record holds.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` naming `sequence`.
  package static func decode(_ buffer: UnsafeRawBufferPointer, sequence: UInt64) throws -> RecordedEvent {
    func damaged(_ reason: String) -> EventStoreError { .corruptedRecord(sequence: sequence, reason: reason) }
    guard buffer.count >= headerSize + 4 else {
      throw damaged("the record is \(buffer.count) bytes, shorter than its header")
    }
    let body = buffer.count - 4
    let stored = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: body, as: UInt32.self))
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<body]))
    guard stored == computed else {
      throw damaged(
        "checksum mismatch (stored \(hex(stored)), computed \(hex(computed)))")
    }
    let format = buffer[0]
    guard format == formatVersion else { throw damaged("unknown record format \(format)") }
    let flags = buffer[1]
    guard flags & ~7 == 0 else { throw damaged("unknown flag bits \(flags)") }
    guard buffer[54] == 0 && buffer[55] == 0 else { throw damaged("the reserved bytes are not zero") }
    let schemaVersion = UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
    let payloadLength = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
    let storedSequence = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    guard storedSequence == sequence else {
      throw damaged("the record says it is event \(storedSequence)")
    }
    let version = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    let micros = Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: 24, as: Int64.self))
    let id = UUID(uuid: buffer.loadUnaligned(fromByteOffset: 32, as: uuid_t.self))
    let streamLength = Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 48, as: UInt16.self)))
    let typeLength = Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 50, as: UInt16.self)))
    let originLength = Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 52, as: UInt16.self)))
    var offset = headerSize
    var correlation: UUID?
    var causation: UUID?
    let idsLength = (flags & 1 == 0 ? 0 : 16) + (flags & 2 == 0 ? 0 : 16)
    guard offset + idsLength + streamLength + typeLength + originLength + payloadLength == body else {
      throw damaged("its field lengths do not add up to its size of \(buffer.count) bytes")
    }
    if flags & 1 != 0 {
      correlation = UUID(uuid: buffer.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
      offset += 16
    }
    if flags & 2 != 0 {
      causation = UUID(uuid: buffer.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
      offset += 16
    }
    func text(_ length: Int, _ field: String) throws -> String {
      let bytes = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + length)])
      offset += length
      guard let string = UTF8Validation.string(bytes) else {
        throw damaged("its \(field) is not valid UTF-8")
      }
      return string
    }
    let stream = try text(streamLength, "stream ID")
    let type = try text(typeLength, "type name")
    let origin = try text(originLength, "origin")
    let payloadStart = offset
    // A copy from the buffer (see `ExactSizeBytes`): the replay's reader makes one per event.
    let payload = ExactSizeBytes.copy(
      UnsafeRawBufferPointer(rebasing: buffer[payloadStart..<payloadStart + payloadLength]))
    return RecordedEvent(
      sequence: sequence, id: id, stream: StreamID(stream), version: version, type: type,
      schemaVersion: schemaVersion, recordedAt: date(microseconds: micros),
      metadata: EventMetadata(correlationID: correlation, causationID: causation, origin: origin),
      payload: payload, payloadEncoding: flags & 4 == 0 ? .binary : .json)
  }

  /// The recorded-at of a stored record, in microseconds since 1970, read from its header without
  /// verifying the record; `nil` when the bytes are too short to hold it.
  static func recordedAtMicroseconds(of record: UnsafeRawBufferPointer) -> Int64? {
    guard record.count >= 32 else { return nil }
    return Int64(littleEndian: record.loadUnaligned(fromByteOffset: 24, as: Int64.self))
  }

  /// The microseconds since 1970 of `date` (``Foundation/Date/microsecondsSince1970``): a
  /// recorded event's date, handed on to another log, comes back exact.
  static func microseconds(_ date: Date) -> Int64 { date.microsecondsSince1970 }

  static func date(microseconds: Int64) -> Date { Date(microsecondsSince1970: microseconds) }

  private static func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
  }
}
