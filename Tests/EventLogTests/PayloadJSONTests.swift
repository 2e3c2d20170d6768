import Foundation
import Testing

@testable import EventLog

/// The JSON of payloads in audit output and exports.
@Suite("Payload JSON")
struct PayloadJSONTests {
  struct Inner: Codable, Equatable {
    var old: String
    var new: String
  }

  struct Everything: EventPayload, Equatable {
    static let eventType = "Everything"
    var id: UUID
    var ids: [UUID]
    var when: Date
    var text: String
    var count: Int
    var big: UInt64
    var small: Int8
    var ratio: Double
    var flag: Bool
    var maybe: String?
    var absent: UUID?
    var change: Inner?
    var bytes: Data
  }

  static let sample = Everything(
    id: UUID(uuidString: "0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02")!,
    ids: [UUID(uuidString: "5B0E8B0C-6F43-4C3A-9E55-0C1C5B6F7A01")!],
    when: Date(timeIntervalSince1970: 1_800_000_000.25),
    text: "a \"quoted\" \\ line\nwith\ttabs, é, / and \u{1}",
    count: -3, big: .max, small: -8, ratio: 0.1, flag: true, maybe: "here", absent: nil,
    change: Inner(old: "a", new: "b"), bytes: Data([0, 1, 254]))

  @Test("keys sorted, UUIDs lower case, dates ISO 8601, nil left out, strings escaped as JSONEncoder does")
  func shape() throws {
    let json = String(decoding: try PayloadJSONEncoder().encode(Self.sample), as: UTF8.self)
    #expect(
      json
        == #"{"big":18446744073709551615,"bytes":"AAH+","change":{"new":"b","old":"a"},"count":-3,"flag":true,"#
        + #""id":"0d7e4a52-1b9c-4e0b-8f3a-6a2d1c9b8e02","ids":["5b0e8b0c-6f43-4c3a-9e55-0c1c5b6f7a01"],"#
        + #""maybe":"here","ratio":0.1,"small":-8,"text":"a \"quoted\" \\ line\nwith\ttabs, é, / and \u0001","#
        + #""when":"2027-01-15T08:00:00.25Z"}"#)
    // JSONEncoder with the same settings writes the same bytes, but for the UUIDs' case.
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(try #require(ISO8601.exactString(from: date)))
    }
    var plain = Self.sample
    plain.ratio = 0.5
    let foundation = String(decoding: try encoder.encode(plain), as: UTF8.self)
    let ours = String(decoding: try PayloadJSONEncoder().encode(plain), as: UTF8.self)
    #expect(ours == foundation.lowercasedUUIDs(Self.sample.id, Self.sample.ids[0]))
  }

  @Test("the registry's JSON reads back, UUIDs in either case, to the same payload")
  func roundTrip() throws {
    let registry = EventTypeRegistry([Everything.self])
    let event = RecordedEvent(
      sequence: 1, id: UUID(), stream: "s", version: 1, type: Everything.eventType, schemaVersion: 1,
      recordedAt: Date(), metadata: EventMetadata(), payload: try BinaryEncoder().encode(Self.sample))
    let json = try #require(try registry.json(of: event))
    let upper = Data(
      String(decoding: json, as: UTF8.self).replacingOccurrences(of: "0d7e4a52", with: "0D7E4A52").utf8)
    for text in [json, upper] {
      let (_, bytes) = try registry.payload(fromJSON: text, type: Everything.eventType)
      #expect(try BinaryDecoder().decode(Everything.self, from: bytes) == Self.sample)
    }
  }

  @Test("a number JSON cannot hold is refused")
  func nonFinite() {
    var sample = Self.sample
    sample.ratio = .infinity
    #expect(throws: EncodingError.self) { try PayloadJSONEncoder().encode(sample) }
  }
}

extension String {
  fileprivate func lowercasedUUIDs(_ ids: UUID...) -> String {
    ids.reduce(self) { $0.replacingOccurrences(of: $1.uuidString, with: $1.uuidString.lowercased()) }
  }
}
