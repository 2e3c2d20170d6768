import Foundation
import Testing

@testable import EventLog

/// The package's one JSON reader: `JSONNode.parse` (after `StrictJSON`), its accessors, the text
/// each value was written as, and `PayloadJSONDecoder` on top of it.
@Suite("JSON reader")
struct JSONReaderTests {
  @Test(
    "a member's text as written, found after parsing",
    arguments: [
      (#"{"payload":{"a":1},"b":2}"#, #"{"a":1}"#),
      (
        #"  { "b" : "}" , "payload" :  { "s" : "x\"}]{" , "n" : [1, {"c": "]"}] }  }  "#,
        #"{ "s" : "x\"}]{" , "n" : [1, {"c": "]"}] }"#
      ),
      (#"{"a":{"payload":0},"payload":[true,null]}"#, "[true,null]"),
      (#"{"payload":-1.5e3}"#, "-1.5e3"),
      (#"{"payload":"a\\"}"#, #""a\\""#),
      (#"{"x":"\"payload\":1","payload":false}"#, "false"),
      ("{\"payload\":\r\n{}\t}", "{}"),
      // A key is compared after unescaping, as `StrictJSON` compares keys for duplicates.
      (#"{"pay\u006coad":null}"#, "null"),
    ])
  func memberText(text: String, value: String) throws {
    let data = Data(text.utf8)
    let member = try #require(try JSONNode.parse(data)["payload"])
    #expect(member.text(in: data).map { String(decoding: $0, as: UTF8.self) } == value)
  }

  @Test("the text of a member of a slice of a longer text")
  func slice() throws {
    let whole = Data(#"ignored{"payload":{"k":"v"}}ignored"#.utf8)
    let data = whole[7..<(whole.count - 7)]
    let member = try #require(try JSONNode.parse(data)["payload"])
    #expect(member.text(in: data) == Data(#"{"k":"v"}"#.utf8))
  }

  @Test("no text for a node built in memory")
  func builtInMemory() {
    #expect(JSONNode(.null).text(in: Data("null".utf8)) == nil)
  }

  @Test(
    "refuses what StrictJSON refuses, naming the place",
    arguments: [#"{"a":1,}"#, #"{"a":1,"a":2}"#, "01", #""\x""#, "1e400", "[", ""])
  func refuses(text: String) {
    #expect(throws: StrictJSON.SyntaxError.self) { try JSONNode.parse(Data(text.utf8)) }
  }

  @Test("strings unescaped: runs, escapes, surrogate pairs and non-ASCII")
  func strings() throws {
    let node = try JSONNode.parse(Data(#"["plain","a\nb\t\"c\"\\\/","\u00e9\ud83c\udf5d","é🍝 x"]"#.utf8))
    #expect(node.items?.compactMap(\.string) == ["plain", "a\nb\t\"c\"\\/", "é🍝", "é🍝 x"])
  }

  @Test("numbers keep their digits; integers are only those written as integers")
  func numbers() throws {
    let node = try JSONNode.parse(Data("[18446744073709551615, -0, 1.0, 1e2, 0.1, true]".utf8))
    let items = try #require(node.items)
    #expect(items.map(\.number) == ["18446744073709551615", "-0", "1.0", "1e2", "0.1", nil])
    #expect(items.map(\.integerText) == ["18446744073709551615", "-0", nil, nil, nil, nil])
    #expect(items[5].bool == true)
  }

  // MARK: - PayloadJSONDecoder

  struct Sample: Codable, Equatable {
    var id: UUID
    var when: Date
    var bytes: Data
    var big: UInt64
    var small: Int8
    var ratio: Double
    var single: Float
    var flag: Bool
    var maybe: String?
    var list: [Int]
    var byName: [String: Int]
    var link: URL
    var amount: Decimal
  }

  static let sample = Sample(
    id: UUID(
      uuid: (0x0D, 0x7E, 0x4A, 0x52, 0x1B, 0x9C, 0x4E, 0x0B, 0x8F, 0x3A, 0x6A, 0x2D, 0x1C, 0x9B, 0x8E, 0x02)),
    when: Date(timeIntervalSince1970: 1_800_000_000.25), bytes: Data([0, 1, 254]), big: .max, small: -8,
    ratio: 0.1, single: 1.5, flag: true, maybe: nil, list: [1, -2], byName: ["a": 1],
    link: URL(fileURLWithPath: "/tmp/x"),
    amount: Decimal(string: "12.34", locale: Locale(identifier: "en_US_POSIX"))
      ?? 0)

  @Test("reads back what PayloadJSONEncoder writes, value for value")
  func roundTrip() throws {
    let json = try PayloadJSONEncoder().encode(Self.sample)
    #expect(try PayloadJSONDecoder().decode(Sample.self, from: json) == Self.sample)
  }

  @Test("reads UUIDs in either case, as the encoder's rule allows")
  func uuidCase() throws {
    let id = try PayloadJSONDecoder().decode(
      UUID.self, from: Data(#""0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02""#.utf8))
    #expect(id == Self.sample.id)
  }

  @Test(
    "names the field and what it found",
    arguments: [
      (#"{"list":[1,"x"]}"#, "list.1", "expected an integer, found a string"),
      (#"{"list":[1.5]}"#, "list.0", "expected an integer, found the number 1.5"),
      (#"{"list":[300]}"#, "list.0", "300 does not fit in Int8"),
      (#"{"list":null}"#, "list", "expected an array, found null"),
    ])
  func errors(text: String, path: String, message: String) throws {
    struct Small: Decodable { var list: [Int8] }
    let error = try #require(throws: DecodingError.self) {
      try PayloadJSONDecoder().decode(Small.self, from: Data(text.utf8))
    }
    let context: DecodingError.Context
    switch error {
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): context = c
    case .keyNotFound(_, let c): context = c
    @unknown default: throw error
    }
    #expect(
      context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") == path
    )
    #expect(context.debugDescription == message)
  }

  @Test("a missing key is keyNotFound, a missing optional is nil, and a date must be ISO 8601")
  func missing() throws {
    struct Two: Decodable {
      var a: Int
      var b: String?
    }
    #expect(throws: DecodingError.self) {
      try PayloadJSONDecoder().decode(Two.self, from: Data(#"{"b":"x"}"#.utf8))
    }
    #expect(try PayloadJSONDecoder().decode(Two.self, from: Data(#"{"a":1}"#.utf8)).b == nil)
    #expect(throws: DecodingError.self) {
      try PayloadJSONDecoder().decode(Date.self, from: Data(#""yesterday""#.utf8))
    }
  }
}
