import Checksum
import EventLog
import Foundation

/// What the fuzz target checks of one input, in one place: the libFuzzer target
/// (`Tests/Fuzz/EventLogFuzz`, built by `.ci/fuzz`) stops on a ``Outcome/broken(_:)`` outcome, and
/// the test suite (`Tests/HardeningTests/FuzzRegressionTests.swift`) replays the corpus and every
/// input the fuzzer ever found through the very same function, so the two cannot drift apart.
///
/// The first byte of an input picks what the rest is:
///
/// | `b[0] % 4` | the rest is decoded as |
/// |---|---|
/// | 0 | a stored record, under the sequence number it claims (bytes 8..<16), checksum as given |
/// | 1 | a stored record whose CRC-32C is rewritten first, so the parser behind the checksum is reached |
/// | 2 | a ``FuzzBooking`` payload (`BinaryDecoder`) |
/// | 3 | a ``FuzzShapes`` payload (`BinaryDecoder`): every kind of value the format has |
///
/// Properties checked beyond "does not crash": the record decoder throws only
/// `EventStoreError.corruptedRecord` naming the record's key; a record it accepts re-encodes to
/// its own bytes (so it accepts only canonical records: known flags, zero reserved bytes, valid
/// UTF-8 texts); a payload that decodes re-encodes to the same bytes (the format is canonical).
package enum FuzzCheck {
  /// What one input did.
  package enum Outcome: Equatable, Sendable {
    /// The decoder accepted the input, and every property holds.
    case decoded
    /// The decoder refused the input with the error it must throw.
    case rejected
    /// A property does not hold: a bug, described.
    case broken(String)
  }

  /// Runs one input through the decoders and checks the properties.
  package static func run(_ input: [UInt8]) -> Outcome {
    guard let selector = input.first else { return .rejected }
    let rest = Array(input.dropFirst())
    switch selector % 4 {
    case 0: return record(rest, fixChecksum: false)
    case 1: return record(rest, fixChecksum: true)
    case 2: return payload(rest, as: FuzzBooking.self)
    default: return payload(rest, as: FuzzShapes.self)
    }
  }

  static func record(_ bytes: [UInt8], fixChecksum: Bool) -> Outcome {
    var bytes = bytes
    if fixChecksum && bytes.count >= 4 {
      let body = bytes.count - 4
      let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
      withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(body..., with: $0) }
    }
    let claimed: UInt64 =
      bytes.count >= 16 ? bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) } : 1
    let sequence = UInt64(littleEndian: claimed)
    let event: RecordedEvent
    do {
      event = try bytes.withUnsafeBytes { try RecordCodec.decode($0, sequence: sequence) }
    } catch let error as EventStoreError {
      guard case .corruptedRecord(let named, _) = error, named == sequence else {
        return .broken("RecordCodec.decode threw \(error), not corruptedRecord naming \(sequence)")
      }
      return .rejected
    } catch {
      return .broken("RecordCodec.decode threw a foreign error: \(error)")
    }
    // The payload of a record is decoded too, as the store's readers would.
    _ = try? BinaryDecoder().decode(FuzzBooking.self, from: event.payload)
    // Every record the decoder accepts is canonical: encoding what it read gives its bytes back,
    // in the format it was read in. (The recorded-at is re-read from the header: a `Date` holds
    // it to the microsecond only within about ±285 years of 1970. A format-2 record's chain value
    // depends on the record before it, which a lone record does not have: the bytes before it are
    // compared, and the value read back must be the one stored.)
    let fields = RecordCodec.Fields(
      sequence: event.sequence, version: event.version,
      recordedAtMicroseconds: Int64(
        littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 24, as: Int64.self) }),
      event: NewEvent(
        id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
        payloadEncoding: event.payloadEncoding, metadata: event.metadata),
      stream: event.stream, provenance: event.provenance,
      subjects: bytes.withUnsafeBytes { RecordCodec.subjects(of: $0) }, previousChain: .zero)
    let legacy = bytes.first == 1
    let again = legacy ? RecordCodec.encodeLegacy(fields) : RecordCodec.encode(fields)
    let compared = legacy ? bytes.count : bytes.count - 36
    guard again.count == bytes.count, again.prefix(compared) == bytes.prefix(compared) else {
      let at =
        zip(again, bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(again.count, bytes.count)
      return .broken(
        "RecordCodec.decode accepted record \(sequence), which does not re-encode to its own bytes "
          + "(\(bytes.count) bytes, re-encoded \(again.count); first difference at byte \(at))")
    }
    if !legacy, event.chain != ChainValue(bytes: bytes[(bytes.count - 36)..<(bytes.count - 4)]) {
      return .broken("RecordCodec.decode read record \(sequence)'s chain value wrongly")
    }
    return .decoded
  }

  static func payload<T: Codable & Equatable>(_ bytes: [UInt8], as type: T.Type) -> Outcome {
    guard let value = try? BinaryDecoder().decode(T.self, from: bytes) else { return .rejected }
    let again: [UInt8]
    do {
      again = try BinaryEncoder().encode(value)
    } catch {
      return .broken("a decoded \(T.self) does not encode: \(error)")
    }
    guard again == bytes else {
      return .broken("a decoded \(T.self) re-encodes to other bytes (\(bytes.count) vs \(again.count))")
    }
    return .decoded
  }
}

/// A payload shaped like the domain's `BookingCreated` (the fuzz checks depend on EventLog and
/// Checksum only).
package struct FuzzBooking: Codable, Equatable, Sendable {
  package var bookingID: UUID
  package var restaurantID: UUID
  package var restaurantName: String
  package var date: Date
  package var partySize: Int
  package var customerName: String
  package var notes: String?
  package var createdAt: Date

  package init(
    bookingID: UUID, restaurantID: UUID, restaurantName: String, date: Date, partySize: Int,
    customerName: String, notes: String?, createdAt: Date
  ) {
    self.bookingID = bookingID
    self.restaurantID = restaurantID
    self.restaurantName = restaurantName
    self.date = date
    self.partySize = partySize
    self.customerName = customerName
    self.notes = notes
    self.createdAt = createdAt
  }
}

/// Every kind of value the binary format has: integers of each width, floating point, nested
/// structs, optionals, arrays, byte arrays, `Data`, raw-value enums.
package struct FuzzShapes: Codable, Equatable, Sendable {
  package enum Kind: String, Codable, Sendable { case a, bb, ccc }
  package enum Level: UInt8, Codable, Sendable { case low = 1, high = 200 }
  package struct Change: Codable, Equatable, Sendable {
    package var old: String
    package var new: String

    package init(old: String, new: String) {
      self.old = old
      self.new = new
    }
  }
  package var flag: Bool
  package var small: Int8
  package var medium: Int32
  package var large: Int64
  package var unsigned: UInt64
  package var byte: UInt8
  package var single: Float
  package var double: Double
  package var kind: Kind
  package var level: Level?
  package var change: Change?
  package var changes: [Change]
  package var numbers: [Int]
  package var raw: [UInt8]
  package var blob: Data
  package var nested: [[String?]]
  package var when: Date?

  package init(
    flag: Bool, small: Int8, medium: Int32, large: Int64, unsigned: UInt64, byte: UInt8, single: Float,
    double: Double, kind: Kind, level: Level?, change: Change?, changes: [Change], numbers: [Int],
    raw: [UInt8],
    blob: Data, nested: [[String?]], when: Date?
  ) {
    self.flag = flag
    self.small = small
    self.medium = medium
    self.large = large
    self.unsigned = unsigned
    self.byte = byte
    self.single = single
    self.double = double
    self.kind = kind
    self.level = level
    self.change = change
    self.changes = changes
    self.numbers = numbers
    self.raw = raw
    self.blob = blob
    self.nested = nested
    self.when = when
  }
}
