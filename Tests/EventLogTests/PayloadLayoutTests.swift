import Foundation
import TestKit
import Testing

@testable import EventLog

/// Payload layouts: what they learn from values (and where that goes wrong: `nil` optionals,
/// empty arrays, raw-value enums), that they render exactly the registry's JSON, and that JSON
/// comes back as the same bytes.
@Suite("Payload layouts")
struct PayloadLayoutTests {
  // MARK: Fixtures (at the bottom of the suite's concerns, but the tests need them first)

  enum Mood: String, Codable, Sendable, CaseIterable { case calm, busy, withSpace = "with space" }
  enum Level: Int16, Codable, Sendable, CaseIterable { case low = -3, mid = 0, high = 300 }

  struct Address: Codable, Equatable, Sendable {
    var street: String
    var number: Int32?
    var tags: [String]
  }

  struct Line: Codable, Equatable, Sendable {
    var sku: UUID
    var quantity: UInt16
    var mood: Mood?
  }

  /// Every kind a payload field can have.
  struct Order: EventPayload, Equatable {
    static let eventType = "Order"
    var id: UUID
    var at: Date
    var note: String?
    var mood: Mood
    var maybeMood: Mood?
    var level: Level
    var address: Address
    var shipping: Address?
    var lines: [Line]
    var optionalLines: [Line]?
    var flags: [Bool?]
    var raw: Data
    var bytes: [UInt8]
    var small: Int8
    var wide: Int64
    var unsigned: UInt
    var u8: UInt8
    var u32: UInt32
    var u64: UInt64
    var ratio: Double
    var half: Float
    var yes: Bool
    var dates: [Date]
    var matrix: [[Int]]
  }

  static func order(_ rng: inout SplitMix64) -> Order {
    func string() -> String {
      let alphabet = Array("ab\"\\/\n\t\u{1}é€😀 ")
      return String(
        (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }
    func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &rng) ? make() : nil }
    func address() -> Address {
      Address(
        street: string(), number: maybe { Int32.random(in: .min ... .max, using: &rng) },
        tags: (0..<Int.random(in: 0...2, using: &rng)).map { _ in string() })
    }
    func line() -> Line {
      Line(
        sku: rng.uuid(), quantity: UInt16.random(in: 0 ... .max, using: &rng),
        mood: maybe { Mood.allCases.randomElement(using: &rng)! })
    }
    return Order(
      id: rng.uuid(), at: randomDate(&rng), note: maybe(string),
      mood: Mood.allCases.randomElement(using: &rng)!,
      maybeMood: maybe { Mood.allCases.randomElement(using: &rng)! },
      level: Level.allCases.randomElement(using: &rng)!, address: address(), shipping: maybe(address),
      lines: (0..<Int.random(in: 0...3, using: &rng)).map { _ in line() },
      optionalLines: maybe { (0..<Int.random(in: 0...2, using: &rng)).map { _ in line() } },
      flags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in maybe { Bool.random(using: &rng) } },
      raw: Data((0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
      bytes: (0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) },
      small: Int8.random(in: .min ... .max, using: &rng), wide: Int64.random(in: .min ... .max, using: &rng),
      unsigned: UInt.random(in: 0 ... .max, using: &rng), u8: UInt8.random(in: 0 ... .max, using: &rng),
      u32: UInt32.random(in: 0 ... .max, using: &rng), u64: UInt64.random(in: 0 ... .max, using: &rng),
      ratio: randomDouble(&rng),
      half: Float(bitPattern: UInt32.random(in: 0 ... .max, using: &rng)).finiteOr(1.5),
      yes: Bool.random(using: &rng),
      dates: (0..<Int.random(in: 0...2, using: &rng)).map { _ in randomDate(&rng) },
      matrix: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
        (0..<Int.random(in: 0...2, using: &rng)).map { _ in Int.random(in: -1000...1000, using: &rng) }
      })
  }

  /// A date whose `Double` is anything a `Date` holds in the years 0000–9999: whole seconds,
  /// microseconds, and arbitrary bit patterns (`Date()` has sub-microsecond digits).
  static func randomDate(_ rng: inout SplitMix64) -> Date {
    switch Int.random(in: 0...3, using: &rng) {
    case 0:
      return Date(
        timeIntervalSinceReferenceDate: Double(Int.random(in: -2_000_000_000...2_000_000_000, using: &rng)))
    case 1:
      return Date(
        microsecondsSince1970: Int64.random(
          in: -60_000_000_000_000_000...250_000_000_000_000_000, using: &rng))
    case 2: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &rng))
    default:
      // Any bits in range: tiny, huge, negative, sub-nanosecond.
      let magnitude = pow(10, Double.random(in: -300...10.7, using: &rng))
      return Date(timeIntervalSinceReferenceDate: Bool.random(using: &rng) ? magnitude : -magnitude)
    }
  }

  static func randomDouble(_ rng: inout SplitMix64) -> Double {
    Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng)).finiteOr(-0.0)
  }

  // MARK: Dates

  @Test("payload dates: the exact text reads back to the identical Double (seeded, 100,000 dates)")
  func exactDates() throws {
    var rng = SplitMix64(seed: 0xDA7E)
    for _ in 0..<100_000 {
      let date = Self.randomDate(&rng)
      let text = try #require(ISO8601.exactString(from: date), "\(date.timeIntervalSinceReferenceDate)")
      let back = try #require(ISO8601.date(from: text), "\(text)")
      #expect(
        back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern,
        "\(date.timeIntervalSinceReferenceDate) → \(text) → \(back.timeIntervalSinceReferenceDate)")
    }
  }

  @Test("payload dates: a microsecond date shows its microseconds, Date() shows what its Double holds")
  func exactDateText() throws {
    #expect(
      ISO8601.exactString(from: Date(microsecondsSince1970: 1_800_000_000_123_456))
        == "2027-01-15T08:00:00.123456Z")
    #expect(ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
    #expect(
      ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: -0.25)) == "2000-12-31T23:59:59.75Z")
    #expect(
      ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: 1e-7)) == "2001-01-01T00:00:00.0000001Z")
    #expect(
      ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7))
        == "2026-10-29T20:53:20.1234567Z")
    // What has no exact text: not finite, negative zero, beyond year 9999.
    #expect(ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: .nan)) == nil)
    #expect(ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: -0.0)) == nil)
    #expect(ISO8601.exactString(from: Date(timeIntervalSinceReferenceDate: 3e11)) == nil)
    // The microsecond text of a recorded-at reads back to the same microsecond.
    var rng = SplitMix64(seed: 7)
    for _ in 0..<10_000 {
      let micros = Int64.random(in: 0...4_000_000_000_000_000, using: &rng)
      let date = try #require(ISO8601.date(from: ISO8601.string(from: Date(microsecondsSince1970: micros))))
      #expect(date.microsecondsSince1970 == micros)
    }
  }

  // MARK: Inference

  @Test("static types say the kind of a nil optional and an empty array of scalars")
  func staticKinds() throws {
    var rng = SplitMix64(seed: 1)
    var order = Self.order(&rng)
    order.note = nil
    order.flags = []
    order.dates = []
    order.matrix = []
    order.maybeMood = nil
    order.shipping = nil
    order.lines = []
    order.optionalLines = nil
    let layout = try PayloadLayout(observing: order)
    guard case .structure(let fields) = layout.root else { Issue.record("not a structure"); return }
    func kind(_ name: String) -> PayloadLayout.Kind? { fields.first { $0.name == name }?.kind }
    #expect(kind("note") == .optional(.string))
    #expect(kind("flags") == .array(.optional(.bool)))
    #expect(kind("dates") == .array(.date))
    #expect(kind("matrix") == .array(.array(.int)))
    #expect(kind("mood") == .string, "a raw-value enum is its raw value")
    #expect(kind("level") == .int16)
    #expect(kind("raw") == .data)
    #expect(kind("bytes") == .bytes)
    // Only a value says what a struct or an enum is: here inference cannot know.
    #expect(kind("maybeMood") == .optional(.unknown))
    #expect(kind("shipping") == .optional(.unknown))
    #expect(kind("lines") == .array(.unknown))
    #expect(kind("optionalLines") == .optional(.array(.unknown)))
    #expect(!layout.isComplete)
    // It still describes this payload (nothing is there), and renders it as the type does.
    let bytes = try BinaryEncoder().encode(order)
    #expect(layout.describes(bytes))
    #expect(try layout.json(ofPayload: bytes) == PayloadJSONEncoder().encode(order))
    // A payload with something where the kind is unknown is not described, until a layout that
    // saw such a value is merged in.
    var later = order
    later.maybeMood = .busy
    later.lines = [Line(sku: UUID(), quantity: 2, mood: nil)]
    let laterBytes = try BinaryEncoder().encode(later)
    #expect(!layout.describes(laterBytes))
    let merged = try #require(layout.merged(with: try PayloadLayout(observing: later)))
    #expect(merged.describes(laterBytes) && merged.describes(bytes))
    #expect(try merged.json(ofPayload: laterBytes) == PayloadJSONEncoder().encode(later))
    #expect(try merged.payload(fromJSON: PayloadJSONEncoder().encode(later)) == laterBytes)
  }

  @Test("layouts of two different shapes do not merge")
  func conflicts() throws {
    struct A: Encodable { var x: Int }
    struct B: Encodable { var x: String }
    struct C: Encodable { var y: Int }
    let a = try PayloadLayout(observing: A(x: 1))
    #expect(a.merged(with: try PayloadLayout(observing: B(x: ""))) == nil)
    #expect(a.merged(with: try PayloadLayout(observing: C(y: 1))) == nil)
    #expect(a.merged(with: a) == a)
    #expect(throws: PayloadLayoutError.self) { try PayloadLayout(observing: ["a": 1]) }
    struct Link: Encodable { var url: URL }
    #expect(throws: PayloadLayoutError.self) {
      try PayloadLayout(observing: Link(url: URL(string: "https://x")!))
    }
  }

  @Test("an optional encoded as a value renders nil as null, as the registry does")
  func explicitNull() throws {
    struct Explicit: Encodable {
      var name: String?
      var other: Int?
      func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeNil(forKey: .other)
      }
      enum CodingKeys: String, CodingKey { case name, other }
    }
    for value in [Explicit(name: nil), Explicit(name: "n")] {
      let layout = try PayloadLayout(observing: value)
      let bytes = try BinaryEncoder().encode(value)
      let json = try PayloadJSONEncoder().encode(value)
      #expect(try layout.json(ofPayload: bytes) == json, "\(String(decoding: json, as: UTF8.self))")
      #expect(try layout.payload(fromJSON: json) == bytes)
    }
  }

  @Test("layout text reads back")
  func text() throws {
    var rng = SplitMix64(seed: 3)
    let layout = try PayloadLayout(observing: Self.order(&rng))
    #expect(try PayloadLayout(jsonText: layout.jsonText) == layout)
    let recorded = RecordedLayout(type: "Order", schemaVersion: 2, revision: 3, sequence: 9, layout: layout)
    #expect(
      try RecordedLayout(type: "Order", schemaVersion: 2, sequence: 9, exportedJSON: recorded.exportedJSON)
        == recorded)
    #expect(
      String(
        decoding: try PayloadLayout(observing: Line(sku: UUID(), quantity: 1, mood: nil)).jsonText,
        as: UTF8.self)
        == #"{"fields":[{"kind":"uuid","name":"sku"},{"kind":"uint16","name":"quantity"},{"kind":{"optional":null},"name":"mood"}]}"#
    )
    for bad in [
      #"{"fields":[{"name":"a"}]}"#, #""float80""#, #"{"optional":1}"#,
      #"{"fields":[{"kind":"int","name":"a"},{"kind":"int","name":"a"}]}"#,
    ] {
      #expect(throws: (any Error).self) { try PayloadLayout(jsonText: Data(bad.utf8)) }
    }
  }

  // MARK: Lossless

  @Test(
    "binary → JSON → binary is identical, by the layout and by the registry, and both render the same JSON (seeded, 1,000 orders)"
  )
  func lossless() throws {
    var rng = SplitMix64(seed: 0x04DE)
    var learned: PayloadLayout?
    let registry = EventTypeRegistry([Order.self])
    for index in 0..<1_000 {
      let order = Self.order(&rng)
      let bytes = try BinaryEncoder().encode(order)
      let observed = try PayloadLayout(observing: order)
      let merged = (learned ?? observed).merged(with: observed)
      let layout = try #require(merged, "the orders' layouts disagree")
      learned = layout
      #expect(layout.describes(bytes))
      let event = RecordedEvent(
        sequence: UInt64(index + 1), id: UUID(), stream: "orders", version: 1, type: Order.eventType,
        schemaVersion: 1, recordedAt: Date(), metadata: EventMetadata(), payload: bytes)
      let registered = try #require(try registry.json(of: event))
      let byLayout = try layout.json(ofPayload: bytes)
      #expect(
        byLayout == registered,
        "\(String(decoding: byLayout, as: UTF8.self))\n\(String(decoding: registered, as: UTF8.self))")
      #expect(try layout.payload(fromJSON: byLayout) == bytes)
      #expect(try registry.payload(fromJSON: registered, type: Order.eventType).bytes == bytes)
    }
    #expect(learned?.isComplete == true)
  }
}

extension FloatingPoint {
  /// `self`, or `replacement` when `self` is not finite (JSON has no such number).
  func finiteOr(_ replacement: Self) -> Self { isFinite ? self : replacement }
}
