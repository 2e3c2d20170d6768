import Checksum
import Foundation
import Testing

@testable import EventLog

/// Item 9: the fuzz target's seed corpus stays valid, and inputs that once were (or could be)
/// dangerous for the decoders are replayed on every run.
///
/// The fuzz target is `Tests/Fuzz/EventLogFuzz`, run by `.ci/fuzz [SECONDS]`. A crash it finds
/// becomes a case of ``regressions`` (the input's bytes, selector byte first).
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
  /// `Tests/Fuzz/corpus`, found from this file's path.
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fuzz/corpus")

  /// The seed inputs: a selector byte (see `Tests/Fuzz/EventLogFuzz`), then a record or a payload.
  static func seeds() throws -> [String: [UInt8]] {
    let booking = FuzzBooking(
      bookingID: UUID(uuidString: "0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02")!,
      restaurantID: UUID(uuidString: "5B0E8B0C-6F43-4C3A-9E55-0C1C5B6F7A01")!, restaurantName: "Pasta Palace",
      date: Date(timeIntervalSince1970: 1_796_040_000), partySize: 4, customerName: "Ada Lovelace",
      notes: "Window table, please", createdAt: Date(timeIntervalSince1970: 1_795_000_000))
    let shapes = FuzzShapes(
      flag: true, small: -5, medium: 70_000, large: -1 << 40, unsigned: .max, byte: 200, single: 1.5,
      double: -0.25,
      kind: .bb, level: .high, change: .init(old: "Thai", new: "Thai Fusion"),
      changes: [.init(old: "a", new: "b"), .init(old: "", new: "ü")], numbers: [0, -1, 1 << 20],
      raw: [0, 255],
      blob: Data([1, 2, 3]), nested: [["x", nil], []], when: Date(timeIntervalSinceReferenceDate: 0))
    let minimal = FuzzShapes(
      flag: false, small: 0, medium: 0, large: 0, unsigned: 0, byte: 0, single: 0, double: 0, kind: .a,
      level: nil,
      change: nil, changes: [], numbers: [], raw: [], blob: Data(), nested: [], when: nil)
    let bookingBytes = try BinaryEncoder().encode(booking)
    func record(_ payload: [UInt8], sequence: UInt64, ids: Bool) -> [UInt8] {
      RecordCodec.encode(
        RecordCodec.Fields(
          sequence: sequence, version: 1, recordedAtMicroseconds: 1_795_000_000_000_000,
          event: NewEvent(
            id: UUID(uuidString: "C0C8DA11-3A91-4640-9071-311753A92ED4")!, type: "BookingCreated",
            schemaVersion: 1,
            payload: payload,
            metadata: EventMetadata(
              correlationID: ids ? UUID(uuidString: "FD9CFAF8-BC92-4A95-B40E-6B2BB9225419")! : nil,
              causationID: ids ? UUID(uuidString: "283AD2A0-8C78-4839-9E29-92D8C3C47014")! : nil,
              origin: "cli")),
          stream: StreamID("booking-0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02")))
    }
    return [
      "record-booking-with-ids": [0] + record(bookingBytes, sequence: 14, ids: true),
      "record-booking-fixed-crc": [1] + record(bookingBytes, sequence: 3, ids: false),
      "record-empty-payload": [0] + record([], sequence: 1, ids: false),
      "payload-booking": [2] + bookingBytes,
      "payload-shapes": [3] + (try BinaryEncoder().encode(shapes)),
      "payload-shapes-minimal": [3] + (try BinaryEncoder().encode(minimal)),
    ]
  }

  @Test("the checked-in seed corpus is what the encoders write today, and every seed decodes")
  func seedCorpus() throws {
    let seeds = try Self.seeds()
    if let directory = ProcessInfo.processInfo.environment["EVENTLOG_WRITE_FUZZ_CORPUS"] {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      for (name, bytes) in seeds {
        try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
      }
    }
    for (name, bytes) in seeds {
      let stored = try Data(contentsOf: Self.corpus.appendingPathComponent(name))
      #expect([UInt8](stored) == bytes, "Tests/Fuzz/corpus/\(name) is stale: regenerate it (see the report)")
      #expect(FuzzReplay.run(bytes) == .decoded, "\(name) does not decode")
    }
  }

  /// Inputs for the decoders (selector byte first) and what they must give. None of them crashed
  /// the decoders; they stay here so that none ever does.
  static let regressions: [(name: String, bytes: [UInt8], outcome: FuzzReplay.Outcome)] = [
    ("empty record", [0], .rejected),
    ("header only, no checksum", [1] + [1] + [UInt8](repeating: 0, count: 55), .rejected),
    ("length fields of 65535 with a valid checksum", [1] + maximalLengthsRecord(), .rejected),
    ("payload length 0xFFFFFFFF with a valid checksum", [1] + hugePayloadLengthRecord(), .rejected),
    ("unknown format byte with a valid checksum", [1] + [2] + [UInt8](repeating: 0, count: 59), .rejected),
    (
      "string length varint of 10 bytes",
      [2] + [UInt8](repeating: 0, count: 32) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
      .rejected
    ),
    (
      "string length varint of 11 bytes",
      [2] + [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 0xFF, count: 10) + [0x01], .rejected
    ),
    ("non-canonical varint", [2] + [UInt8](repeating: 0, count: 32) + [0x80, 0x00], .rejected),
    ("string longer than the input", [2] + [UInt8](repeating: 0, count: 32) + [0x7F, 0x41], .rejected),
    ("invalid UTF-8 in a string", [2] + [UInt8](repeating: 0, count: 32) + [0x02, 0xC3, 0x28], .rejected),
    ("array count 0xFFFFFFFF", [3] + shapesPrefix() + [0xFF, 0xFF, 0xFF, 0xFF], .rejected),
    ("optional tag 2", [3] + shapesPrefix(level: 2), .rejected),
    ("bool byte 2", [3, 2], .rejected),
    ("trailing bytes", [2] + ((try? BinaryEncoder().encode(sampleBooking())) ?? []) + [0], .rejected),
    ("raw-value enum of an unknown value", [3] + shapesPrefix(kind: "zz"), .rejected),
  ]

  @Test("hostile decoder inputs are rejected with an error, never a crash", arguments: 0..<regressions.count)
  func regression(_ index: Int) {
    let (name, bytes, outcome) = Self.regressions[index]
    #expect(FuzzReplay.run(bytes) == outcome, "\(name)")
  }

  @Test("deeply nested arrays are refused with an error, not a stack overflow")
  func deepNesting() {
    // [[[[…]]]] of 100,000 levels: each level a UInt32 count of 1.
    var bytes: [UInt8] = []
    for _ in 0..<100_000 { bytes += [1, 0, 0, 0] }
    bytes += [0, 0, 0, 0]
    #expect(throws: DecodingError.self) { try BinaryDecoder().decode(Nest.self, from: bytes) }
  }

  /// A type that nests itself through arrays.
  struct Nest: Codable {
    var children: [Nest]

    init(from decoder: any Decoder) throws {
      children = try [Nest](from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
      try children.encode(to: encoder)
    }
  }

  static func sampleBooking() -> FuzzBooking {
    FuzzBooking(
      bookingID: UUID(), restaurantID: UUID(), restaurantName: "A", date: Date(timeIntervalSince1970: 0),
      partySize: 1, customerName: "B", notes: nil, createdAt: Date(timeIntervalSince1970: 0))
  }

  /// A FuzzShapes encoding up to its `level` field (with the given optional tag) or its `kind`.
  static func shapesPrefix(kind: String = "a", level: UInt8 = 0) -> [UInt8] {
    // flag, small, medium, large, unsigned, byte, single (4), double (8), kind (string), level tag
    [0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 12) + [UInt8(kind.utf8.count)] + Array(kind.utf8) + [
      level
    ]
  }

  /// A record whose three UInt16 lengths are 65535, checksum valid: the lengths do not add up.
  static func maximalLengthsRecord() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 60)
    bytes[0] = 1
    bytes[8] = 1
    for offset in [48, 49, 50, 51, 52, 53] { bytes[offset] = 0xFF }
    return bytes
  }

  /// A record declaring a 4 GiB payload, checksum valid.
  static func hugePayloadLengthRecord() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 60)
    bytes[0] = 1
    bytes[8] = 1
    for offset in 4..<8 { bytes[offset] = 0xFF }
    return bytes
  }
}

/// The fuzz target's logic, for replaying its inputs in a normal test build (the target itself is
/// built only by `.ci/fuzz`). Keep in step with `Tests/Fuzz/EventLogFuzz/FuzzHarness.swift`.
enum FuzzReplay {
  enum Outcome: Equatable {
    case decoded
    case rejected
  }

  static func run(_ input: [UInt8]) -> Outcome {
    guard let selector = input.first else { return .rejected }
    var rest = Array(input.dropFirst())
    switch selector % 4 {
    case 0, 1:
      if selector % 4 == 1 && rest.count >= 4 {
        let body = rest.count - 4
        let crc = rest.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
        withUnsafeBytes(of: crc.littleEndian) { rest.replaceSubrange(body..., with: $0) }
      }
      let claimed: UInt64 =
        rest.count >= 16 ? rest.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) } : 1
      let sequence = UInt64(littleEndian: claimed)
      do {
        let event = try rest.withUnsafeBytes { try RecordCodec.decode($0, sequence: sequence) }
        _ = try? BinaryDecoder().decode(FuzzBooking.self, from: event.payload)
        return .decoded
      } catch let error as EventStoreError {
        guard case .corruptedRecord(let named, _) = error, named == sequence else {
          Issue.record("RecordCodec.decode threw \(error), not corruptedRecord(\(sequence))")
          return .rejected
        }
        return .rejected
      } catch {
        Issue.record("RecordCodec.decode threw a foreign error: \(error)")
        return .rejected
      }
    case 2:
      return roundTrip(rest, as: FuzzBooking.self)
    default:
      return roundTrip(rest, as: FuzzShapes.self)
    }
  }

  static func roundTrip<T: Codable & Equatable>(_ bytes: [UInt8], as type: T.Type) -> Outcome {
    guard let value = try? BinaryDecoder().decode(T.self, from: bytes) else { return .rejected }
    let again = try? BinaryEncoder().encode(value)
    #expect(again == bytes, "a decoded \(T.self) re-encodes to other bytes")
    return .decoded
  }
}

// MARK: - Fixtures (the fuzz target's payload types; keep in step with FuzzHarness.swift)

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
