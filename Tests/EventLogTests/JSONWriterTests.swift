import Foundation
import Testing

@testable import EventLog

/// The package's one JSON string writer and its one UUID text form.
@Suite("JSON writer")
struct JSONWriterTests {
  @Test("every control character by the one rule; slashes, DEL and non-ASCII as they are")
  func escapingRule() throws {
    var text = ""
    for value in 0..<0x20 { text.unicodeScalars.append(try #require(Unicode.Scalar(value))) }
    text += "\"\\/\u{7F}é🍝"
    var output: [UInt8] = []
    JSONWriter.appendQuoted(text, to: &output)
    let expected =
      #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
      + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
      + "\\\"\\\\/\u{7F}é🍝\""
    #expect(String(decoding: output, as: UTF8.self) == expected)
    // A JSON parser reads the text back.
    let parsed = try JSONSerialization.jsonObject(with: Data(output), options: [.fragmentsAllowed])
    #expect(parsed as? String == text)
    // A payload's strings are written by the same rule.
    #expect(JSONNode(.string(text)).rendered == Data(output))
  }

  @Test("UUIDs in lower case, as uuidString in lower case", arguments: [UUID(), UUID(), UUID()])
  func uuidText(id: UUID) {
    #expect(id.lowercasedString == id.uuidString.lowercased())
    var output: [UInt8] = []
    JSONWriter.appendQuoted(id, to: &output)
    #expect(String(decoding: output, as: UTF8.self) == "\"\(id.uuidString.lowercased())\"")
  }
}
