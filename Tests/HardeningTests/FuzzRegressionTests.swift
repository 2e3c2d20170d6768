import Checksum
import EventLog
import Foundation
import FuzzChecks
import Testing

/// The fuzz target's seed corpus stays valid, every input in the corpus passes the fuzz target's
/// own checks (`FuzzCheck.run`, the one function the target calls), and inputs that once were (or
/// could be) dangerous for the decoders are replayed on every run.
///
/// The fuzz target is `Tests/Fuzz/EventLogFuzz`, run by `.ci/fuzz` (see its header: CI replays the
/// corpus and a fixed-seed run; `.ci/fuzz 600` explores). An input it finds joins the corpus as a
/// file (`Tests/Fuzz/corpus/found-*`) and, where it names a rule, a case of ``regressions``.
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
    func record(_ payload: [UInt8], sequence: UInt64, ids: Bool, legacy: Bool = false) -> [UInt8] {
      (legacy ? RecordCodec.encodeLegacy : RecordCodec.encode)(
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
          stream: StreamID("booking-0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02"),
          provenance: RecordedEvent.Provenance(
            device: UUID(uuidString: "7C2E5A10-9B3D-4F61-8A47-0E5D9C3B2A18")!, sequence: sequence),
          subjects: ids ? [UUID(uuidString: "11111111-2222-4333-8444-555555555555")!] : [],
          previousChain: ChainValue(bytes: [UInt8](repeating: 7, count: 32))!))
    }
    return [
      "record-booking-with-ids": [0] + record(bookingBytes, sequence: 14, ids: true),
      "record-booking-fixed-crc": [1] + record(bookingBytes, sequence: 3, ids: false),
      "record-empty-payload": [0] + record([], sequence: 1, ids: false),
      "legacy-record-booking": [1] + record(bookingBytes, sequence: 5, ids: true, legacy: true),
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
      #expect(FuzzCheck.run(bytes) == .decoded, "\(name) does not decode")
    }
  }

  @Test("every input of the corpus passes the fuzz target's checks, found inputs included")
  func wholeCorpus() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
    #expect(names.count >= 7)
    for name in names {
      let bytes = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent(name)))
      let outcome = FuzzCheck.run(bytes)
      if case .broken(let reason) = outcome { Issue.record("Tests/Fuzz/corpus/\(name): \(reason)") }
    }
  }

  /// Inputs for the decoders (selector byte first) and what they must give. None of them crashed
  /// the decoders; they stay here so that none ever does.
  static let regressions: [(name: String, bytes: [UInt8], outcome: FuzzCheck.Outcome)] = [
    ("empty record", [0], .rejected),
    ("header only, no checksum", [1] + [1] + [UInt8](repeating: 0, count: 55), .rejected),
    ("length fields of 65535 with a valid checksum", [1] + maximalLengthsRecord(), .rejected),
    ("payload length 0xFFFFFFFF with a valid checksum", [1] + hugePayloadLengthRecord(), .rejected),
    ("unknown format byte with a valid checksum", [1] + [3] + [UInt8](repeating: 0, count: 119), .rejected),
    ("format 2: header only, checksum valid", [1] + formatTwoRecord { _ in }, .rejected),
    (
      "format 2: length fields of 65535", [1] + formatTwoRecord { for o in 72..<78 { $0[o] = 0xFF } },
      .rejected
    ),
    ("format 2: 255 data subjects in a short record", [1] + formatTwoRecord { $0[78] = 0xFF }, .rejected),
    ("format 2: a non-zero reserved byte", [1] + validFormatTwo { $0[79] = 1 }, .rejected),
    (
      "format 2: an origin device without a sequence",
      [1] + validFormatTwo { $0[64...71] = [0, 0, 0, 0, 0, 0, 0, 0] }, .rejected
    ),
    ("format 2: subjects out of order", [1] + validFormatTwo(subjects: 2) { $0.swapAt(95, 111) }, .rejected),
    ("format 2: a valid record with two subjects", [1] + validFormatTwo(subjects: 2) { _ in }, .decoded),
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
    // CI's 20-second random fuzz run of 2026-12-03 stopped on this record: a valid record whose
    // payload is stored as JSON (flag bit 2, format 4), which the target's copy of the canonical
    // rule still called unknown (it allowed bits 0 and 1 only). The decoder was right; the check
    // had drifted from it. Now one check serves both (FuzzCheck), and the record re-encodes to
    // itself. (Tests/Fuzz/corpus/found-2026-12-03-json-flag-record holds the same bytes.)
    ("a record whose payload is JSON (flag bit 2), checksum as found", jsonFlagRecord, .decoded),
    ("the JSON-flag record with an unknown flag bit 3", withFlags(jsonFlagRecord, 4 | 8), .rejected),
  ]

  /// The input CI's fuzz step found (base64 as reported), selector byte first.
  static let jsonFlagRecord = [UInt8](
    Data(
      base64Encoded:
        "AQEEAQBhAAAAAwAAAAAAAAABAAAA2wAAAAAwXwGLYAYAwMjaETqRRkCQcTEAAAAAAAAAAAADAAAAYg4AAAAAAAAAb29raW5nLTBEN0U0QTUyLTFCOUMtNEUwQi04RjNBLWdDcmVhdGVkY2xpDX5KUhucTguPOmotHJuOAlsOiwxvQ0w6nlUMHFtvegEMUGFzLGEgUGFsXGNlAAAAYM5eyEE="
    ) ?? Data())

  /// `input` (a selector-1 record: its checksum is rewritten) with other flags.
  static func withFlags(_ input: [UInt8], _ flags: UInt8) -> [UInt8] {
    var bytes = input
    if bytes.count > 2 { bytes[2] = flags }
    return bytes
  }

  @Test("hostile decoder inputs are rejected with an error, never a crash", arguments: 0..<regressions.count)
  func regression(_ index: Int) {
    let (name, bytes, outcome) = Self.regressions[index]
    #expect(FuzzCheck.run(bytes) == outcome, "\(name)")
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

  /// 120 bytes that start as a format-2 record of sequence 1 (checksum rewritten by the
  /// selector), changed by `change`.
  static func formatTwoRecord(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 120)
    bytes[0] = 2
    bytes[8] = 1
    change(&bytes)
    return bytes
  }

  /// A valid format-2 record (type "T", stream "s", `subjects` subjects 1, 2, …), changed by
  /// `change` (the selector rewrites the checksum).
  static func validFormatTwo(subjects: Int = 0, _ change: (inout [UInt8]) -> Void) -> [UInt8] {
    var bytes = RecordCodec.encode(
      RecordCodec.Fields(
        sequence: 1, version: 1, recordedAtMicroseconds: 0,
        event: NewEvent(
          id: UUID(), type: "T", schemaVersion: 1, payload: [], metadata: EventMetadata(origin: "")),
        stream: StreamID("s"), provenance: RecordedEvent.Provenance(device: UUID(), sequence: 1),
        subjects: (0..<subjects).map {
          UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8($0 + 1)))
        },
        previousChain: .zero))
    change(&bytes)
    return bytes
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
