import Checksum
import Foundation
import Sodium

/// The binary layout of one stored event. See `Docs/OnDiskFormat.md`, "The event record".
///
/// This build writes record format 2 (environment format 5) and reads formats 1 and 2; the
/// record's first byte says which.
///
/// ```
/// offset size field (all integers little-endian)      format 2       format 1
///  0     1   record format version                     2              1
///  1     1   flags: bit 0 correlation ID present, bit 1 causation ID present, bit 2 the
///            payload is JSON text (``PayloadEncoding/json``)
///  2     2   payload schema version
///  4     4   payload length P
///  8     8   sequence number
/// 16     8   version within the stream
/// 24     8   recorded-at, microseconds since 1970-01-01T00:00:00Z (signed)
/// 32    16   event ID (UUID bytes)
/// 48    16   origin device (zero: unknown)               —
/// 64     8   origin sequence (0: unknown)                —
/// 72/48  2   stream ID length S
/// 74/50  2   type name length T
/// 76/52  2   origin length O
/// 78     1   subject count K                             —
/// 79/54  1/2 reserved, 0
/// 80/56 0/16 correlation ID, if flagged
///   …   0/16 causation ID, if flagged
///   …  16×K  data subjects, ascending, distinct          —
///   …    S   stream ID, UTF-8
///   …    T   type name, UTF-8
///   …    O   origin, UTF-8
///   …    P   payload
///   …   32   chain value (format 2): BLAKE2b-256 of the previous record's chain value
///            (``ChainValue/zero`` before the first record) followed by every byte before it
///   …    4   CRC-32C of every byte before it
/// ```
package enum RecordCodec {
  /// The record format this build writes.
  package static let formatVersion: UInt8 = 2
  /// The header of a format-2 record.
  package static let headerSize = 80
  /// The header of a format-1 record.
  static let legacyHeaderSize = 56
  static let maximumTypeLength = 255
  static let maximumOriginLength = 1_000
  static let maximumPayloadLength = 64 << 20
  static let maximumSubjects = 255

  /// The parts of a record that are written as given.
  package struct Fields {
    package var sequence: UInt64
    package var version: UInt64
    package var recordedAtMicroseconds: Int64
    package var event: NewEvent
    package var stream: StreamID
    /// The device that first recorded the event, and its sequence there (`nil`: unknown).
    package var provenance: RecordedEvent.Provenance?
    /// The data subjects of the payload's sealed fields, ascending and distinct (by default the
    /// event's).
    package var subjects: [UUID]
    /// The chain value of the record before this one (``ChainValue/zero`` for the first).
    package var previousChain: ChainValue

    package init(
      sequence: UInt64, version: UInt64, recordedAtMicroseconds: Int64, event: NewEvent, stream: StreamID,
      provenance: RecordedEvent.Provenance?, subjects: [UUID]? = nil, previousChain: ChainValue
    ) {
      self.sequence = sequence
      self.version = version
      self.recordedAtMicroseconds = recordedAtMicroseconds
      self.event = event
      self.stream = stream
      self.provenance = provenance
      self.subjects = subjects ?? event.subjects
      self.previousChain = previousChain
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
    if event.subjects.count > maximumSubjects {
      return "it names \(event.subjects.count) data subjects; a record holds at most \(maximumSubjects)"
    }
    if zip(event.subjects, event.subjects.dropFirst()).contains(where: { !($0.byteOrder < $1.byteOrder) }) {
      return "its data subjects are not ascending and distinct"
    }
    if event.payload.count > maximumPayloadLength {
      return "its payload of \(event.payload.count) bytes exceeds \(maximumPayloadLength) bytes"
    }
    return nil
  }

  /// The size of `fields`' record in format 2.
  static func encodedSize(_ fields: Fields) -> Int {
    let metadata = fields.event.metadata
    return headerSize + (metadata.correlationID == nil ? 0 : 16) + (metadata.causationID == nil ? 0 : 16)
      + 16 * fields.subjects.count + fields.stream.rawValue.utf8.count + fields.event.type.utf8.count
      + metadata.origin.utf8.count + fields.event.payload.count + ChainValue.length + 4
  }

  /// Writes the format-2 record into `buffer`, which is exactly ``encodedSize(_:)`` bytes.
  /// - Returns: the record's chain value.
  @discardableResult
  static func encode(_ fields: Fields, into buffer: UnsafeMutableRawBufferPointer) -> ChainValue {
    precondition(buffer.count == encodedSize(fields), "record buffer of the wrong size")
    precondition(fields.subjects.count <= maximumSubjects, "at most 255 data subjects per event")
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
      of: (fields.provenance?.device ?? Self.unknownDevice).uuid, toByteOffset: 48, as: uuid_t.self)
    buffer.storeBytes(of: (fields.provenance?.sequence ?? 0).littleEndian, toByteOffset: 64, as: UInt64.self)
    buffer.storeBytes(
      of: UInt16(fields.stream.rawValue.utf8.count).littleEndian, toByteOffset: 72, as: UInt16.self)
    buffer.storeBytes(of: UInt16(event.type.utf8.count).littleEndian, toByteOffset: 74, as: UInt16.self)
    buffer.storeBytes(of: UInt16(metadata.origin.utf8.count).littleEndian, toByteOffset: 76, as: UInt16.self)
    buffer.storeBytes(of: UInt8(fields.subjects.count), toByteOffset: 78, as: UInt8.self)
    buffer.storeBytes(of: UInt8(0), toByteOffset: 79, as: UInt8.self)
    var offset = headerSize
    func store(_ id: UUID) {
      buffer.storeBytes(of: id.uuid, toByteOffset: offset, as: uuid_t.self)
      offset += 16
    }
    if let id = metadata.correlationID { store(id) }
    if let id = metadata.causationID { store(id) }
    for subject in fields.subjects { store(subject) }
    func write<C: Collection<UInt8>>(_ bytes: C) {
      let target = UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)])
      target.copyBytes(from: bytes)
      offset += bytes.count
    }
    write(fields.stream.rawValue.utf8)
    write(event.type.utf8)
    write(metadata.origin.utf8)
    write(event.payload)
    let chain = Self.chainValue(
      of: UnsafeRawBufferPointer(rebasing: buffer[0..<offset]), after: fields.previousChain)
    chain.withUnsafeBytes {
      UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + 32]).copyMemory(from: $0)
    }
    offset += ChainValue.length
    let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<offset]))
    buffer.storeBytes(of: crc.littleEndian, toByteOffset: offset, as: UInt32.self)
    return chain
  }

  /// The chain value of a record whose bytes before the value are `body`, after `previous`.
  package static func chainValue(of body: UnsafeRawBufferPointer, after previous: ChainValue) -> ChainValue {
    var digest = ChainValue.zero
    previous.withUnsafeBytes { prefix in
      Swift.withUnsafeMutableBytes(of: &digest) { out in
        BLAKE2b256.hash(prefix: prefix, body: body, into: out)
      }
    }
    return digest
  }

  /// The chain value the format-2 record of `fields` carries (what the store computes as it
  /// writes the record): how an export's line is checked against the record it came from.
  package static func chainValue(of fields: Fields) -> ChainValue {
    let size = encodedSize(fields)
    return withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
      encode(fields, into: buffer)
    }
  }

  /// Encodes a format-2 record into a new array (for tests and tools; the store encodes in place).
  package static func encode(_ fields: Fields) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: encodedSize(fields)) { buffer, count in
      encode(fields, into: UnsafeMutableRawBufferPointer(buffer))
      count = buffer.count
    }
  }

  /// Encodes a record in format 1, as builds before environment format 5 wrote it (no
  /// provenance, no subjects, no chain value): for tests of the upgrade, and to check that a
  /// format-1 record the decoder accepts is canonical.
  package static func encodeLegacy(_ fields: Fields) -> [UInt8] {
    let event = fields.event
    let metadata = event.metadata
    var bytes: [UInt8] = []
    var flags: UInt8 = 0
    if metadata.correlationID != nil { flags |= 1 }
    if metadata.causationID != nil { flags |= 2 }
    if event.payloadEncoding == .json { flags |= 4 }
    func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    bytes.append(1)
    bytes.append(flags)
    append(event.schemaVersion)
    append(UInt32(event.payload.count))
    append(fields.sequence)
    append(fields.version)
    append(fields.recordedAtMicroseconds)
    withUnsafeBytes(of: event.id.uuid) { bytes += $0 }
    append(UInt16(fields.stream.rawValue.utf8.count))
    append(UInt16(event.type.utf8.count))
    append(UInt16(metadata.origin.utf8.count))
    append(UInt16(0))
    for id in [metadata.correlationID, metadata.causationID].compactMap({ $0 }) {
      withUnsafeBytes(of: id.uuid) { bytes += $0 }
    }
    bytes += fields.stream.rawValue.utf8
    bytes += event.type.utf8
    bytes += metadata.origin.utf8
    bytes += event.payload
    append(bytes.withUnsafeBytes { CRC32C.checksum($0) })
    return bytes
  }

  /// The origin device of a format-2 record whose origin is unknown: zero.
  static let unknownDevice = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

  /// Parses and verifies a stored record of either format.
  /// - Parameters:
  ///   - buffer: the stored bytes of the record, checksum included.
  ///   - sequence: the key it is stored under; the record must carry the same number.
  /// - Returns: the event the record holds.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` naming `sequence`.
  package static func decode(_ buffer: UnsafeRawBufferPointer, sequence: UInt64) throws -> RecordedEvent {
    func damaged(_ reason: String) -> EventStoreError { .corruptedRecord(sequence: sequence, reason: reason) }
    guard buffer.count >= legacyHeaderSize + 4 else {
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
    guard format == formatVersion || format == 1 else { throw damaged("unknown record format \(format)") }
    let legacy = format == 1
    let header = legacy ? legacyHeaderSize : headerSize
    guard buffer.count >= header + (legacy ? 4 : 36) else {
      throw damaged("the record is \(buffer.count) bytes, shorter than its header")
    }
    let flags = buffer[1]
    guard flags & ~7 == 0 else { throw damaged("unknown flag bits \(flags)") }
    let reserved = legacy ? (buffer[54] | buffer[55]) : buffer[79]
    guard reserved == 0 else { throw damaged("the reserved bytes are not zero") }
    let schemaVersion = UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
    let payloadLength = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
    let storedSequence = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    guard storedSequence == sequence else {
      throw damaged("the record says it is event \(storedSequence)")
    }
    let version = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    let micros = Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: 24, as: Int64.self))
    let id = UUID(uuid: buffer.loadUnaligned(fromByteOffset: 32, as: uuid_t.self))
    var provenance: RecordedEvent.Provenance?
    var subjectCount = 0
    if !legacy {
      let device = UUID(uuid: buffer.loadUnaligned(fromByteOffset: 48, as: uuid_t.self))
      let originSequence = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 64, as: UInt64.self))
      let unknown = device == unknownDevice
      guard unknown == (originSequence == 0) else {
        throw damaged("its origin device and origin sequence are not both known or both unknown")
      }
      if !unknown { provenance = RecordedEvent.Provenance(device: device, sequence: originSequence) }
      subjectCount = Int(buffer[78])
    }
    let lengths = legacy ? 48 : 72
    let streamLength = Int(
      UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: lengths, as: UInt16.self)))
    let typeLength = Int(
      UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: lengths + 2, as: UInt16.self)))
    let originLength = Int(
      UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: lengths + 4, as: UInt16.self)))
    var offset = header
    var correlation: UUID?
    var causation: UUID?
    let idsLength = (flags & 1 == 0 ? 0 : 16) + (flags & 2 == 0 ? 0 : 16) + 16 * subjectCount
    let chainLength = legacy ? 0 : ChainValue.length
    guard offset + idsLength + streamLength + typeLength + originLength + payloadLength + chainLength == body
    else {
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
    var subjects: [UUID] = []
    if subjectCount > 0 {
      subjects.reserveCapacity(subjectCount)
      var last: UUID?
      for _ in 0..<subjectCount {
        let subject = UUID(uuid: buffer.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
        if let last, !(last.byteOrder < subject.byteOrder) {
          throw damaged("its data subjects are not ascending and distinct")
        }
        last = subject
        subjects.append(subject)
        offset += 16
      }
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
    let chain =
      legacy ? nil : ChainValue(loadingFrom: UnsafeRawBufferPointer(rebasing: buffer[(body - 32)..<body]))
    return RecordedEvent(
      sequence: sequence, id: id, stream: StreamID(stream), version: version, type: type,
      schemaVersion: schemaVersion, recordedAt: date(microseconds: micros),
      metadata: EventMetadata(correlationID: correlation, causationID: causation, origin: origin),
      payload: payload, payloadEncoding: flags & 4 == 0 ? .binary : .json, provenance: provenance,
      chain: chain, subjects: subjects)
  }

  /// The data subjects a format-2 record lists (none for format 1), read without verifying the
  /// record (``decode(_:sequence:)`` checks them): not part of ``RecordedEvent``, which every fold
  /// copies, until sealed fields need them.
  package static func subjects(of record: UnsafeRawBufferPointer) -> [UUID] {
    guard record.first == formatVersion, record.count >= headerSize else { return [] }
    let count = Int(record[78])
    let flags = record[1]
    var offset = headerSize + (flags & 1 == 0 ? 0 : 16) + (flags & 2 == 0 ? 0 : 16)
    var subjects: [UUID] = []
    for _ in 0..<count {
      guard offset + 16 <= record.count else { break }
      subjects.append(UUID(uuid: record.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)))
      offset += 16
    }
    return subjects
  }

  /// The record format of stored bytes (their first byte), or `nil` when there are none.
  static func format(of record: UnsafeRawBufferPointer) -> UInt8? { record.first }

  /// The chain value a format-2 record carries, read without verifying the record; `nil` for a
  /// format-1 record or bytes too short to hold one.
  static func storedChain(of record: UnsafeRawBufferPointer) -> ChainValue? {
    guard record.first == formatVersion, record.count >= headerSize + 36 else { return nil }
    return ChainValue(
      loadingFrom: UnsafeRawBufferPointer(rebasing: record[(record.count - 36)..<(record.count - 4)]))
  }

  /// The bytes a format-2 record's chain value covers: all but the value and the checksum.
  static func chainedBody(of record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: record[0..<max(0, record.count - 36)])
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
    "0x" + Hex.string(withUnsafeBytes(of: value.bigEndian) { Array($0) })
  }
}
