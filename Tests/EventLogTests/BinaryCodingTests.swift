import EventLog
import TestKit
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

@Suite("BinaryCoding")
struct BinaryCodingTests {
  let encoder = BinaryEncoder()
  let decoder = BinaryDecoder()

  // MARK: - Round trips

  @Test("every primitive type round-trips")
  func everyPrimitive() throws {
    try roundTrip(Primitives.sample)
    try roundTrip(Primitives.zero)
  }

  @Test("integer extremes round-trip", arguments: 0..<3)
  func integerExtremes(variant: Int) throws {
    try roundTrip(Primitives.extremes(variant))
  }

  @Test("integer extremes encode to the expected varint lengths")
  func varintLengths() throws {
    #expect(try encoder.encode(Int64.min).count == 10)
    #expect(try encoder.encode(Int64.max).count == 10)
    #expect(try encoder.encode(UInt64.max).count == 10)
    #expect(try encoder.encode(UInt64.max) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
    #expect(try encoder.encode(Int8.min) == [0xFF, 0x01])
    #expect(try encoder.encode(Int8.max) == [0xFE, 0x01])
    #expect(try encoder.encode(-1) == [0x01])
    #expect(try encoder.encode(UInt8(127)) == [0x7F])
    #expect(try encoder.encode(UInt8(128)) == [0x80, 0x01])
  }

  @Test("floating-point values keep their exact bit patterns")
  func floatingPointBitPatterns() throws {
    let doubles: [Double] = [0, -0.0, 1.5, -.infinity, .infinity, .nan, .leastNonzeroMagnitude, .pi]
    let decodedDoubles = try decoder.decode([Double].self, from: encoder.encode(doubles))
    #expect(decodedDoubles.map(\.bitPattern) == doubles.map(\.bitPattern))
    let floats: [Float] = [0, -0.0, 1.5, -.infinity, .nan, .greatestFiniteMagnitude]
    let decodedFloats = try decoder.decode([Float].self, from: encoder.encode(floats))
    #expect(decodedFloats.map(\.bitPattern) == floats.map(\.bitPattern))
    #expect(try encoder.encode(Float(1.5)) == [0x00, 0x00, 0xC0, 0x3F])
  }

  @Test("nested structs, arrays of structs and nested arrays round-trip")
  func nestedValues() throws {
    try roundTrip(Outer.sample)
    try roundTrip([Outer.sample, Outer.empty, Outer.sample])
    try roundTrip([[1, 2], [], [3]] as [[Int]])
    try roundTrip([[["a"], []], [], [["b", "c"]]] as [[[String]]])
    try roundTrip(Set([3, 1, 2]))
  }

  @Test("empty strings and empty arrays round-trip")
  func emptyValues() throws {
    try roundTrip(Outer.empty)
    #expect(try encoder.encode("") == [0x00])
    #expect(try encoder.encode([Int]()) == [0x00, 0x00, 0x00, 0x00])
    try roundTrip([String]())
    try roundTrip([[Int]]())
    try roundTrip([""])
  }

  @Test(
    "Unicode strings round-trip",
    arguments: [
      "héllo", "日本語のテキスト", "👩‍👩‍👧‍👦 family", "a\u{0}b", "\u{10FFFF}", "Ω≈ç√∫",
      String(repeating: "ü", count: 300),
    ])
  func unicodeStrings(string: String) throws {
    let bytes = try roundTrip(string)
    #expect(bytes.count > string.utf8.count)
  }

  @Test("UUID, Date, Data and [UInt8] use their compact forms")
  func foundationTypes() throws {
    let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
    #expect(try roundTrip(uuid) == (0..<16).map { UInt8($0 * 0x11) })
    let date = Date(timeIntervalSinceReferenceDate: 1)
    #expect(try roundTrip(date) == [0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
    for date in [Date(timeIntervalSince1970: 1_700_000_000.123_456_7), .distantPast, .distantFuture, Date()] {
      try roundTrip(date)
    }
    #expect(try roundTrip(Data([0xDE, 0xAD])) == [0x02, 0xDE, 0xAD])
    #expect(try roundTrip([UInt8]([0xBE, 0xEF])) == [0x02, 0xBE, 0xEF])
    try roundTrip(Data())
    try roundTrip([UInt8](repeating: 7, count: 1000))
    try roundTrip(FoundationValues.sample)
    try roundTrip([FoundationValues.sample, FoundationValues.sample])
    try roundTrip([uuid, uuid])
    try roundTrip([date, date])
  }

  @Test("raw-value enums round-trip as their raw values")
  func rawValueEnums() throws {
    #expect(try roundTrip(Kind.beta) == [0x01, 0x62])
    #expect(try roundTrip(Level.high) == [0x14])
    try roundTrip([Kind.alpha, .beta])
    try roundTrip(WithEnums(kind: .alpha, level: .low, optionalKind: .beta, optionalLevel: nil))
  }

  @Test("classes encode their superclass fields positionally through superEncoder")
  func superEncoder() throws {
    let value = Derived(base: 7, extra: "x")
    let decoded = try decoder.decode(Derived.self, from: encoder.encode(value))
    #expect(decoded.base == 7)
    #expect(decoded.extra == "x")
  }

  @Test("custom conformances using nested and generic container calls round-trip")
  func customContainers() throws {
    try roundTrip(CustomContainers.sample)
    try roundTrip(CustomContainers.empty)
    try roundTrip(UnkeyedNesting(rows: [[1, 2], [3]], pairs: [Pair(a: 1, b: "x"), Pair(a: 2, b: "y")]))
  }

  @Test("unkeyed decoding reports count and isAtEnd")
  func unkeyedCount() throws {
    let decoded = try decoder.decode(CountProbe.self, from: encoder.encode([5, 6, 7]))
    #expect(decoded.reportedCount == 3)
    #expect(decoded.values == [5, 6, 7])
  }

  // MARK: - Optionals

  @Test("optional properties of every type round-trip present and absent")
  func optionalProperties() throws {
    try roundTrip(Optionals.allPresent)
    try roundTrip(Optionals.allAbsent)
    let absent = try encoder.encode(Optionals.allAbsent)
    #expect(absent == [UInt8](repeating: 0, count: absent.count), "every absent optional is one 0 tag")
  }

  @Test("optionals in arrays and at the top level round-trip")
  func optionalContainers() throws {
    #expect(try roundTrip([1, nil, -1] as [Int?]) == [3, 0, 0, 0, 1, 2, 0, 1, 1])
    try roundTrip(["a", nil, ""] as [String?])
    try roundTrip([nil, UUID(), nil] as [UUID?])
    try roundTrip([nil, Date()] as [Date?])
    try roundTrip([Inner(x: 1, y: "y"), nil] as [Inner?])
    try roundTrip([[1, nil], nil, []] as [[Int?]?])
    #expect(try roundTrip(Int?.some(5)) == [0x01, 0x0A])
    #expect(try roundTrip(Int?.none) == [0x00])
    #expect(try roundTrip(String?.some("")) == [0x01, 0x00])
    try roundTrip(UUID?.some(UUID()))
    try roundTrip(Inner?.some(Inner(x: 2, y: "")))
    try roundTrip(Inner?.none)
  }

  @Test("encode(_:forKey:) with an optional agrees with encodeIfPresent")
  func optionalThroughGenericEncode() throws {
    let viaGeneric = GenericOptional(name: "n", number: nil, inner: Inner(x: 3, y: "z"))
    let bytes = try roundTrip(viaGeneric)
    // Same layout as the synthesized conformance of the same fields.
    let synthesized = SynthesizedOptional(name: "n", number: nil, inner: Inner(x: 3, y: "z"))
    #expect(try encoder.encode(synthesized) == bytes)
    #expect(try decoder.decode(GenericOptional.self, from: encoder.encode(synthesized)) == viaGeneric)
  }

  // MARK: - Exact format

  @Test("a small known value has exactly the documented bytes")
  func pinnedFormat() throws {
    let bytes = try roundTrip(Pinned.sample)
    #expect(bytes == Pinned.expectedBytes)
    #expect(try encoder.encode(Point(x: -2, label: "a")) == [0x03, 0x01, 0x01, 0x61])
  }

  @Test("encode(_:appendingTo:) appends, and leaves the array untouched on failure")
  func appendingTo() throws {
    var bytes: [UInt8] = [0xAA, 0xBB]
    try encoder.encode(Point(x: -2, label: "a"), appendingTo: &bytes)
    #expect(bytes == [0xAA, 0xBB, 0x03, 0x01, 0x01, 0x61])
    #expect(throws: EncodingError.self) {
      try encoder.encode(["k": 1], appendingTo: &bytes)
    }
    #expect(throws: EncodingError.self) {
      try encoder.encode([Empty(), Empty()], appendingTo: &bytes)
    }
    #expect(bytes == [0xAA, 0xBB, 0x03, 0x01, 0x01, 0x61])
    #expect(try decoder.decode(Point.self, from: Array(bytes[2...])) == Point(x: -2, label: "a"))
  }

  @Test("decoding from an unaligned raw buffer works without copying")
  func rawBufferDecoding() throws {
    let bytes = try encoder.encode(Outer.sample)
    let padded = [0x99] + bytes + [0x99]
    let decoded = try padded.withUnsafeBytes { raw in
      try decoder.decode(Outer.self, from: UnsafeRawBufferPointer(rebasing: raw[1..<(raw.count - 1)]))
    }
    #expect(decoded == Outer.sample)
    #expect(try decoder.decode(Empty.self, from: []) == Empty())
  }

  // MARK: - Unsupported shapes

  @Test("dictionaries and enums with associated values are rejected when encoding")
  func unsupportedShapes() throws {
    #expect(throws: EncodingError.self) { try encoder.encode(["a": 1]) }
    #expect(throws: EncodingError.self) { try encoder.encode([1: "a"]) }
    #expect(throws: EncodingError.self) { try encoder.encode(HasDictionary(values: [:])) }
    #expect(throws: EncodingError.self) { try encoder.encode(Shape.circle(radius: 1)) }
    #expect(throws: EncodingError.self) { try encoder.encode(Plain.first) }
    #expect(throws: EncodingError.self) { try encoder.encode([Empty()]) }
    #expect(try encoder.encode(Empty()) == [])
    // Decoding them fails cleanly too.
    #expect(throws: DecodingError.self) { try decoder.decode(Shape.self, from: [0x00]) }
    #expect(throws: DecodingError.self) { try decoder.decode([String: Int].self, from: [0x01, 0x02]) }
  }

  // MARK: - Malformed input

  @Test("every truncation of an encoded value throws")
  func everyTruncationThrows() throws {
    let bytes = try encoder.encode(Envelope.sample)
    #expect(try decoder.decode(Envelope.self, from: bytes) == Envelope.sample)
    for length in 0..<bytes.count {
      #expect(throws: DecodingError.self, "prefix of \(length) bytes") {
        try decoder.decode(Envelope.self, from: Array(bytes[..<length]))
      }
    }
  }

  @Test("trailing bytes after the value throw")
  func trailingBytes() throws {
    let bytes = try encoder.encode(Point(x: 1, label: nil))
    expectCorrupted(Point.self, from: bytes + [0x00], containing: "1 unexpected trailing bytes at byte 2")
    expectCorrupted(Int.self, from: [0x02, 0x02, 0x02], containing: "trailing")
  }

  @Test("error descriptions name the problem, the byte offset and the coding path")
  func errorDescriptions() throws {
    let context = expectCorrupted(Point.self, from: [0x02, 0x01], containing: "unexpected end of data")
    #expect(context?.debugDescription == "unexpected end of data at byte 2 while reading String")
    expectCorrupted(
      Point.self, from: [0x02], containing: "unexpected end of data at byte 1 while reading String?")
    let stringContext = expectCorrupted(
      Wrapper.self, from: [0x02], containing: "unexpected end of data at byte 1 while reading String")
    #expect(stringContext?.codingPath.map(\.stringValue) == ["label"])
    let nested = try encoder.encode(Outer.sample)
    let nestedContext = expectCorrupted(Outer.self, from: Array(nested[..<3]), containing: "at byte 1")
    #expect(nestedContext?.codingPath.map(\.stringValue) == ["inner", "y"])
    let elementContext = expectCorrupted(Outer.self, from: Array(nested[..<12]), containing: "at byte")
    #expect(elementContext?.codingPath.map(\.stringValue) == ["list", "Index 0", "y"])
    expectCorrupted(Wrapper.self, from: [0x02, 0x05, 0x61], containing: "declared length 5 at byte 1")
  }

  @Test("invalid UTF-8 throws instead of being repaired", arguments: InvalidUTF8.cases)
  func invalidUTF8(bytes: [UInt8]) throws {
    expectCorrupted(String.self, from: [UInt8(bytes.count)] + bytes, containing: "invalid UTF-8")
  }

  @Test("valid multi-byte UTF-8 at the edges of each range decodes")
  func validUTF8Edges() throws {
    let edges: [[UInt8]] = [
      [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEF, 0xBF, 0xBD],
    ]
    for edge in edges + [[0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF]] {
      let decoded = try decoder.decode(String.self, from: [UInt8(edge.count)] + edge)
      #expect(Array(decoded.utf8) == edge)
    }
  }

  @Test("Bool bytes other than 0 and 1 throw")
  func invalidBool() throws {
    #expect(try decoder.decode(Bool.self, from: [0x01]) == true)
    #expect(try decoder.decode(Bool.self, from: [0x00]) == false)
    expectCorrupted(Bool.self, from: [0x02], containing: "invalid Bool byte 2 at byte 0")
    expectCorrupted(
      [Bool].self, from: [0x02, 0, 0, 0, 0x01, 0xFF], containing: "invalid Bool byte 255 at byte 5")
  }

  @Test("optional tags other than 0 and 1 throw in every kind of container")
  func invalidOptionalTags() throws {
    expectCorrupted(Int?.self, from: [0x02, 0x0A], containing: "invalid optional tag 2 at byte 0")
    expectCorrupted(
      Int?.self, from: [], containing: "unexpected end of data at byte 0 while reading optional tag")
    expectCorrupted(Point.self, from: [0x02, 0x07, 0x00], containing: "invalid optional tag 7 at byte 1")
    expectCorrupted(
      [Int?].self, from: [0x01, 0, 0, 0, 0x03, 0x02], containing: "invalid optional tag 3 at byte 4")
    expectCorrupted(Inner?.self, from: [0x09], containing: "invalid optional tag 9")
  }

  @Test("out-of-range, over-long and non-canonical varints throw")
  func malformedVarints() throws {
    expectCorrupted(UInt8.self, from: [0x80, 0x02], containing: "does not fit in UInt8")
    expectCorrupted(Int8.self, from: [0x80, 0x02], containing: "does not fit in Int8")
    expectCorrupted(Int16.self, from: [0x80, 0x80, 0x04], containing: "does not fit in Int16")
    expectCorrupted(UInt32.self, from: [0x80, 0x80, 0x80, 0x80, 0x10], containing: "does not fit in UInt32")
    let elevenBytes = [UInt8](repeating: 0xFF, count: 10) + [0x01]
    expectCorrupted(UInt64.self, from: elevenBytes, containing: "longer than 10 bytes")
    let overflow = [UInt8](repeating: 0xFF, count: 9) + [0x02]
    expectCorrupted(UInt64.self, from: overflow, containing: "overflows 64 bits")
    expectCorrupted(Int.self, from: [0x80, 0x00], containing: "non-canonical")
    expectCorrupted(UInt.self, from: [0x81, 0x80, 0x00], containing: "non-canonical")
    expectCorrupted(UInt.self, from: [0x81, 0x80], containing: "unexpected end of data at byte 2")
    #expect(try decoder.decode(UInt8.self, from: [0xFF, 0x01]) == 255)
    #expect(try decoder.decode(Int8.self, from: [0xFF, 0x01]) == -128)
  }

  @Test("huge declared counts and lengths throw before anything is allocated")
  func hugeDeclaredSizes() throws {
    expectCorrupted(
      [Int].self, from: [0xFF, 0xFF, 0xFF, 0xFF, 0x01], containing: "declared length 4294967295")
    expectCorrupted([[Int]].self, from: [0x01, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F], containing: "exceeds")
    let hugeLength = [UInt8](repeating: 0xFF, count: 9) + [0x01]
    expectCorrupted(
      String.self, from: hugeLength + [0x61], containing: "declared length 18446744073709551615")
    expectCorrupted(Data.self, from: hugeLength, containing: "exceeds the 0 remaining bytes")
    expectCorrupted([UInt8].self, from: [0x80, 0x80, 0x80, 0x80, 0x01, 0x00], containing: "exceeds")
    expectCorrupted(CountProbe.self, from: [0x00, 0x00, 0x00, 0x40], containing: "exceeds")
  }

  @Test("hostile nesting of a recursive type throws instead of overflowing the stack")
  func deepNesting() throws {
    // Each level is an array count of 1; a final empty array closes the legitimate case. Every level is
    // two nested values (the node and its array), so 61 levels stay within the limit of 128.
    let shallow = Array(repeating: [1, 0, 0, 0] as [UInt8], count: 60).flatMap { $0 }
    let decoded = try decoder.decode(Node.self, from: shallow + [0, 0, 0, 0])
    #expect(decoded.depth == 61)
    let deep = Array(repeating: [1, 0, 0, 0] as [UInt8], count: 10_000).flatMap { $0 }
    expectCorrupted(Node.self, from: deep, containing: "nesting deeper than 128 levels")
  }

  @Test("10,000 random mutations of an encoded value never crash")
  func randomMutations() throws {
    let original = try encoder.encode(Envelope.sample)
    var random = FuzzGenerator(seed: 0x5EED)
    var decodedCount = 0
    for _ in 0..<10_000 {
      let mutated = random.mutate(original)
      // An allocation of exactly the input's size, so that an address sanitizer run catches any over-read.
      let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: mutated.count, alignment: 1)
      defer { exact.deallocate() }
      exact.copyBytes(from: mutated)
      let input = UnsafeRawBufferPointer(exact)
      if (try? decoder.decode(Envelope.self, from: input)) != nil {
        decodedCount += 1
      }
      _ = try? decoder.decode([Outer?].self, from: input)
      _ = try? decoder.decode(Node.self, from: input)
    }
    // Most mutations must be caught; the ones that survive only changed payload bytes.
    #expect(decodedCount < 10_000)
  }

  @Test("random garbage never crashes")
  func randomGarbage() throws {
    var random = FuzzGenerator(seed: 99)
    for _ in 0..<2_000 {
      let count = random.next(below: 64)
      let garbage = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
      defer { garbage.deallocate() }
      for index in 0..<count {
        garbage[index] = UInt8(truncatingIfNeeded: random.next())
      }
      let input = UnsafeRawBufferPointer(garbage)
      _ = try? decoder.decode(Envelope.self, from: input)
      _ = try? decoder.decode([String?].self, from: input)
      _ = try? decoder.decode(Primitives.self, from: input)
    }
  }

  // MARK: - Helpers

  /// Encodes, decodes, checks equality, and returns the bytes.
  @discardableResult
  private func roundTrip<T: Codable & Equatable>(
    _ value: T, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [UInt8] {
    let bytes = try encoder.encode(value)
    let decoded = try decoder.decode(T.self, from: bytes)
    #expect(decoded == value, sourceLocation: sourceLocation)
    return bytes
  }

  /// Expects `DecodingError.dataCorrupted` whose description contains `fragment`; returns its context.
  @discardableResult
  private func expectCorrupted<T: Decodable>(
    _ type: T.Type, from bytes: [UInt8], containing fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> DecodingError.Context? {
    do {
      let value = try decoder.decode(type, from: bytes)
      Issue.record("decoded \(value) instead of throwing", sourceLocation: sourceLocation)
    } catch DecodingError.dataCorrupted(let context) {
      #expect(
        context.debugDescription.contains(fragment), "\(context.debugDescription)",
        sourceLocation: sourceLocation)
      return context
    } catch {
      Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
    return nil
  }
}

// MARK: - Fixtures

// Fixtures are nested in the suite so that their short names cannot clash with other test files.
extension BinaryCodingTests {
  struct Primitives: Codable, Equatable {
    var bool: Bool
    var string: String
    var double: Double
    var float: Float
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64

    static let sample = Primitives(
      bool: true, string: "text", double: -12.25, float: 3.5, int: -123_456, int8: -5, int16: 300,
      int32: -70_000, int64: 1 << 40, uint: 42, uint8: 200, uint16: 65_000, uint32: 4_000_000_000,
      uint64: 1 << 63)

    static let zero = Primitives(
      bool: false, string: "", double: 0, float: 0, int: 0, int8: 0, int16: 0, int32: 0, int64: 0, uint: 0,
      uint8: 0, uint16: 0, uint32: 0, uint64: 0)

    static func extremes(_ variant: Int) -> Primitives {
      switch variant {
      case 0:
        return Primitives(
          bool: true, string: "min", double: -.greatestFiniteMagnitude, float: -.greatestFiniteMagnitude,
          int: .min, int8: .min, int16: .min, int32: .min, int64: .min, uint: .min, uint8: .min, uint16: .min,
          uint32: .min, uint64: .min)
      case 1:
        return Primitives(
          bool: false, string: "max", double: .greatestFiniteMagnitude, float: .greatestFiniteMagnitude,
          int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: .max, uint8: .max, uint16: .max,
          uint32: .max, uint64: .max)
      default:
        return Primitives(
          bool: true, string: "-1", double: -1, float: -1, int: -1, int8: -1, int16: -1, int32: -1, int64: -1,
          uint: 1, uint8: 1, uint16: 1, uint32: 1, uint64: 1)
      }
    }
  }

  struct Inner: Codable, Equatable {
    var x: Int
    var y: String
  }

  struct Outer: Codable, Equatable {
    var inner: Inner
    var list: [Inner]
    var grid: [[Int]]
    var name: String
    var maybe: Inner?

    static let sample = Outer(
      inner: Inner(x: 1, y: "one"), list: [Inner(x: 2, y: "two"), Inner(x: -3, y: "")],
      grid: [[1, 2, 3], [], [-4]], name: "outer", maybe: Inner(x: 9, y: "nine"))
    static let empty = Outer(inner: Inner(x: 0, y: ""), list: [], grid: [], name: "", maybe: nil)
  }

  struct FoundationValues: Codable, Equatable {
    var id: UUID
    var at: Date
    var data: Data
    var bytes: [UInt8]
    var optionalID: UUID?
    var optionalDate: Date?
    var optionalData: Data?
    var optionalBytes: [UInt8]?
    var ids: [UUID]

    static let sample = FoundationValues(
      id: UUID(), at: Date(timeIntervalSinceReferenceDate: 12_345.678_9), data: Data([1, 2, 3]), bytes: [],
      optionalID: UUID(), optionalDate: nil, optionalData: Data(), optionalBytes: [0xFF],
      ids: [UUID(), UUID()])
  }

  enum Kind: String, Codable {
    case alpha = "a"
    case beta = "b"
  }

  enum Level: Int, Codable {
    case low = 1
    case high = 10
  }

  struct WithEnums: Codable, Equatable {
    var kind: Kind
    var level: Level
    var optionalKind: Kind?
    var optionalLevel: Level?
  }

  struct Optionals: Codable, Equatable {
    var bool: Bool?
    var string: String?
    var double: Double?
    var float: Float?
    var int: Int?
    var int8: Int8?
    var int16: Int16?
    var int32: Int32?
    var int64: Int64?
    var uint: UInt?
    var uint8: UInt8?
    var uint16: UInt16?
    var uint32: UInt32?
    var uint64: UInt64?
    var uuid: UUID?
    var inner: Inner?
    var list: [Int?]?
    var kind: Kind?

    static let allPresent = Optionals(
      bool: false, string: "", double: 1, float: 2, int: -3, int8: .min, int16: .max, int32: 0, int64: .min,
      uint: .max, uint8: 0, uint16: 1, uint32: .max, uint64: .max, uuid: UUID(), inner: Inner(x: 1, y: "i"),
      list: [nil, 1], kind: .beta)
    static let allAbsent = Optionals()
  }

  struct Point: Codable, Equatable {
    var x: Int
    var label: String?
  }

  struct Wrapper: Codable, Equatable {
    var number: Int
    var label: String
  }

  struct Pinned: Codable, Equatable {
    var flag: Bool
    var small: Int
    var big: UInt32
    var name: String
    var note: String?
    var count: Int?
    var list: [Int16]
    var ratio: Double
    var id: UUID
    var when: Date
    var blob: Data
    var kind: Kind

    static let sample = Pinned(
      flag: true, small: -2, big: 300, name: "hé", note: nil, count: 5, list: [1, -1], ratio: 1.5,
      id: UUID(
        uuid: (0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF)
      ),
      when: Date(timeIntervalSinceReferenceDate: 1), blob: Data([0xDE, 0xAD]), kind: .beta)

    static let expectedBytes: [UInt8] = [
      0x01,  // flag: true
      0x03,  // small: zigzag(-2) = 3
      0xAC, 0x02,  // big: 300 as LEB128
      0x03, 0x68, 0xC3, 0xA9,  // name: 3 UTF-8 bytes of "hé"
      0x00,  // note: nil
      0x01, 0x0A,  // count: present, zigzag(5) = 10
      0x02, 0x00, 0x00, 0x00, 0x02, 0x01,  // list: 2 elements, zigzag(1) = 2, zigzag(-1) = 1
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,  // ratio: 1.5
      0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,  // id
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F,  // when: 1.0 s after the reference date
      0x02, 0xDE, 0xAD,  // blob
      0x01, 0x62,  // kind: raw value "b"
    ]
  }

  struct Empty: Codable, Equatable {}

  struct HasDictionary: Codable {
    var values: [String: Int]
  }

  enum Shape: Codable {
    case circle(radius: Double)
    case square(side: Double)
  }

  enum Plain: Codable {
    case first
    case second
  }

  struct Node: Codable {
    var children: [Node]

    var depth: Int { 1 + (children.map(\.depth).max() ?? 0) }
  }

  /// Reads an unkeyed container by hand and records what `count` reported.
  struct CountProbe: Decodable {
    var reportedCount: Int?
    var values: [Int] = []

    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      reportedCount = container.count
      values.reserveCapacity(container.count ?? 0)
      while !container.isAtEnd {
        values.append(try container.decode(Int.self))
      }
    }
  }

  class Base: Codable {
    var base: Int

    init(base: Int) {
      self.base = base
    }
  }

  final class Derived: Base {
    var extra: String

    private enum CodingKeys: String, CodingKey {
      case extra
    }

    init(base: Int, extra: String) {
      self.extra = extra
      super.init(base: base)
    }

    required init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      extra = try container.decode(String.self, forKey: .extra)
      try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(extra, forKey: .extra)
      try super.encode(to: container.superEncoder())
    }
  }

  /// Uses generic `encode(_:forKey:)` with optionals instead of `encodeIfPresent`.
  struct GenericOptional: Codable, Equatable {
    var name: String?
    var number: Int?
    var inner: Inner?

    private enum CodingKeys: String, CodingKey {
      case name, number, inner
    }

    init(name: String?, number: Int?, inner: Inner?) {
      self.name = name
      self.number = number
      self.inner = inner
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String?.self, forKey: .name)
      number = try container.decode(Int?.self, forKey: .number)
      inner = try container.decode(Inner?.self, forKey: .inner)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(name, forKey: .name)
      try container.encode(number, forKey: .number)
      try container.encode(inner, forKey: .inner)
    }
  }

  struct SynthesizedOptional: Codable, Equatable {
    var name: String?
    var number: Int?
    var inner: Inner?
  }

  /// Exercises nested unkeyed containers, `encodeNil(forKey:)` / `decodeNil(forKey:)` and single values.
  struct CustomContainers: Codable, Equatable {
    var numbers: [Int]
    var maybe: Int?
    var single: Kind

    private enum CodingKeys: String, CodingKey {
      case numbers, maybe, single
    }

    static let sample = CustomContainers(numbers: [1, -2, 3], maybe: nil, single: .alpha)
    static let empty = CustomContainers(numbers: [], maybe: -7, single: .beta)

    init(numbers: [Int], maybe: Int?, single: Kind) {
      self.numbers = numbers
      self.maybe = maybe
      self.single = single
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      var nested = try container.nestedUnkeyedContainer(forKey: .numbers)
      var numbers: [Int] = []
      while !nested.isAtEnd {
        numbers.append(try nested.decode(Int.self))
      }
      self.numbers = numbers
      // The protocol's default `decodeIfPresent`, spelled out: the tag, then the value.
      maybe = try container.decodeNil(forKey: .maybe) ? nil : try container.decode(Int.self, forKey: .maybe)
      single = try container.decode(Kind.self, forKey: .single)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      var nested = container.nestedUnkeyedContainer(forKey: .numbers)
      for number in numbers {
        try nested.encode(number)
      }
      if let maybe {
        try container.encodeIfPresent(maybe, forKey: .maybe)
      } else {
        try container.encodeNil(forKey: .maybe)
      }
      try container.encode(single, forKey: .single)
    }
  }

  struct Pair: Codable, Equatable {
    var a: Int
    var b: String
  }

  /// Exercises containers nested inside unkeyed containers.
  struct UnkeyedNesting: Codable, Equatable {
    var rows: [[Int]]
    var pairs: [Pair]

    private enum PairKeys: String, CodingKey {
      case a, b
    }

    init(rows: [[Int]], pairs: [Pair]) {
      self.rows = rows
      self.pairs = pairs
    }

    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      var rows: [[Int]] = []
      var rowContainer = try container.nestedUnkeyedContainer()
      while !rowContainer.isAtEnd {
        var row = try rowContainer.nestedUnkeyedContainer()
        var values: [Int] = []
        while !row.isAtEnd {
          values.append(try row.decode(Int.self))
        }
        rows.append(values)
      }
      var pairs: [Pair] = []
      var pairContainer = try container.nestedUnkeyedContainer()
      while !pairContainer.isAtEnd {
        let pair = try pairContainer.nestedContainer(keyedBy: PairKeys.self)
        pairs.append(
          Pair(a: try pair.decode(Int.self, forKey: .a), b: try pair.decode(String.self, forKey: .b)))
      }
      self.rows = rows
      self.pairs = pairs
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.unkeyedContainer()
      var rowContainer = container.nestedUnkeyedContainer()
      for values in rows {
        var row = rowContainer.nestedUnkeyedContainer()
        for value in values {
          try row.encode(value)
        }
      }
      var pairContainer = container.nestedUnkeyedContainer()
      for pair in pairs {
        var keyed = pairContainer.nestedContainer(keyedBy: PairKeys.self)
        try keyed.encode(pair.a, forKey: .a)
        try keyed.encode(pair.b, forKey: .b)
      }
    }
  }

  /// A realistic event envelope, used for truncation and mutation tests.
  struct Envelope: Codable, Equatable {
    var id: UUID
    var stream: UUID
    var recordedAt: Date
    var version: Int
    var kind: Kind
    var title: String
    var note: String?
    var tags: [String]
    var scores: [Int?]
    var matrix: [[UInt16]]
    var payload: Data
    var raw: [UInt8]
    var child: Inner?
    var children: [Inner]
    var flags: [Bool]
    var ratio: Float
    var level: Level

    static let sample = Envelope(
      id: UUID(), stream: UUID(), recordedAt: Date(timeIntervalSinceReferenceDate: 700_000_000.5),
      version: 42,
      kind: .alpha, title: "Order placed — ü", note: "note", tags: ["a", "", "ccc"], scores: [1, nil, -300],
      matrix: [[1, 65_535], [], [7]], payload: Data([0, 1, 2, 0xFF]), raw: [9, 8], child: Inner(x: 5, y: "c"),
      children: [Inner(x: 1, y: ""), Inner(x: 2, y: "two")], flags: [true, false], ratio: 0.25, level: .high)
  }

  enum InvalidUTF8 {
    static let cases: [[UInt8]] = [
      [0x80],  // lone continuation byte
      [0x61, 0xBF, 0x62],  // continuation byte between ASCII
      [0xC0, 0xAF],  // over-long encoding of "/"
      [0xC1, 0xBF],  // over-long two-byte form
      [0xE0, 0x80, 0xAF],  // over-long three-byte form
      [0xED, 0xA0, 0x80],  // UTF-16 surrogate
      [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
      [0xF5, 0x80, 0x80, 0x80],  // invalid lead byte
      [0xFF],  // invalid byte
      [0xC3],  // truncated two-byte sequence
      [0xF0, 0x90, 0x80, 0x61],  // truncated four-byte sequence: repaired to U+FFFD + "a", same length
      [0x61, 0xE2, 0x82],  // truncated three-byte sequence at the end
    ]
  }

  /// A small deterministic generator (SplitMix64) for reproducible fuzzing.
  struct FuzzGenerator {
    private var random: SplitMix64

    init(seed: UInt64) {
      random = SplitMix64(seed: seed)
    }

    mutating func next() -> UInt64 { random.next() }

    mutating func next(below bound: Int) -> Int {
      Int(next() % UInt64(bound))
    }

    /// Applies one to four random edits: overwrite, bit flip, insert, delete or truncate.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
      var result = bytes
      for _ in 0...next(below: 4) {
        let position = result.isEmpty ? 0 : next(below: result.count)
        switch next(below: 6) {
        case 0 where !result.isEmpty:
          result[position] = UInt8(truncatingIfNeeded: next())
        case 1 where !result.isEmpty:
          result[position] ^= UInt8(1) << UInt8(next(below: 8))
        case 2 where !result.isEmpty:
          result[position] = [0x00, 0x01, 0x7F, 0x80, 0xFF][next(below: 5)]
        case 3:
          result.insert(UInt8(truncatingIfNeeded: next()), at: position)
        case 4 where !result.isEmpty:
          result.remove(at: position)
        default:
          result.removeLast(result.isEmpty ? 0 : next(below: min(result.count, 8)))
        }
      }
      return result
    }
  }
}
