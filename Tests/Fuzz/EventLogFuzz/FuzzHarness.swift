#if EVENTLOG_FUZZ
  import Checksum
  @testable import EventLog
  import Foundation

  /// A payload shaped like the domain's `BookingCreated` (the fuzz target depends on EventLog and Checksum only).
  struct FuzzBooking: Codable, Equatable {
    var bookingID: UUID
    var restaurantID: UUID
    var restaurantName: String
    var date: Date
    var partySize: Int
    var customerName: String
    var notes: String?
    var createdAt: Date
  }

  /// Every kind of value the binary format has: integers of each width, floating point, nested
  /// structs, optionals, arrays, byte arrays, `Data`, raw-value enums.
  struct FuzzShapes: Codable, Equatable {
    enum Kind: String, Codable { case a, bb, ccc }
    enum Level: UInt8, Codable { case low = 1, high = 200 }
    struct Change: Codable, Equatable {
      var old: String
      var new: String
    }
    var flag: Bool
    var small: Int8
    var medium: Int32
    var large: Int64
    var unsigned: UInt64
    var byte: UInt8
    var single: Float
    var double: Double
    var kind: Kind
    var level: Level?
    var change: Change?
    var changes: [Change]
    var numbers: [Int]
    var raw: [UInt8]
    var blob: Data
    var nested: [[String?]]
    var when: Date?
  }

  enum FuzzHarness {
    static func run(_ input: [UInt8]) {
      let selector = input[0] % 4
      let rest = Array(input.dropFirst())
      switch selector {
      case 0: record(rest, fixChecksum: false)
      case 1: record(rest, fixChecksum: true)
      case 2: payload(rest, as: FuzzBooking.self)
      default: payload(rest, as: FuzzShapes.self)
      }
    }

    static func record(_ bytes: [UInt8], fixChecksum: Bool) {
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
          fatalError("RecordCodec.decode threw \(error), not corruptedRecord naming \(sequence)")
        }
        return
      } catch {
        fatalError("RecordCodec.decode threw a foreign error: \(error)")
      }
      // The payload of a record is decoded too, as the store's readers would.
      _ = try? BinaryDecoder().decode(FuzzBooking.self, from: event.payload)
      // The decoder refuses unknown flags, non-zero reserved bytes and invalid UTF-8, so every
      // record it accepts is canonical and re-encodes to itself.
      let canonical =
        bytes[1] & ~3 == 0 && bytes[54] == 0 && bytes[55] == 0
        && textsAreValid(bytes)
      guard canonical else {
        fatalError(
          "RecordCodec.decode accepted record \(sequence) with non-canonical flags, reserved bytes or text")
      }
      let fields = RecordCodec.Fields(
        sequence: event.sequence, version: event.version,
        recordedAtMicroseconds: Int64(
          littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 24, as: Int64.self) }),
        event: NewEvent(
          id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
          metadata: event.metadata),
        stream: event.stream)
      let again = RecordCodec.encode(fields)
      if again != bytes {
        fatalError("record \(sequence) does not re-encode to its own bytes")
      }
    }

    /// Whether the stream ID, type name and origin of a record that decoded are valid UTF-8 (the
    /// record decoder repairs invalid ones with U+FFFD; the checksum is what guards them).
    static func textsAreValid(_ bytes: [UInt8]) -> Bool {
      func length(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
      var offset = RecordCodec.headerSize + (bytes[1] & 1 == 0 ? 0 : 16) + (bytes[1] & 2 == 0 ? 0 : 16)
      for field in [48, 50, 52] {
        let end = offset + length(field)
        guard String(validating: bytes[offset..<end], as: UTF8.self) != nil else { return false }
        offset = end
      }
      return true
    }

    static func payload<T: Codable & Equatable>(_ bytes: [UInt8], as type: T.Type) {
      guard let value = try? BinaryDecoder().decode(T.self, from: bytes) else { return }
      let again: [UInt8]
      do {
        again = try BinaryEncoder().encode(value)
      } catch {
        fatalError("a decoded \(T.self) does not encode: \(error)")
      }
      if again != bytes {
        fatalError("a decoded \(T.self) re-encodes to other bytes (\(bytes.count) vs \(again.count))")
      }
    }
  }
#endif
