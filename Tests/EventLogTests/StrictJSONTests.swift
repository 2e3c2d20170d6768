import EventLog
import Foundation
import Testing

/// RFC 8259, strictly (issue 14, item 4).
@Suite("Strict JSON validation")
struct StrictJSONTests {
  @Test(
    "valid JSON texts pass",
    arguments: [
      "[]", "{}", " [ 1 , 2 ] ", "0", "-0", "-0.5e-3", "1E+2", "123456789012345678901234567890", "1e308",
      "1e-400", #""""#, #""\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00""#, "true", "false", "null",
      #"{"a":{"a":[{"a":1}]},"b":[[],{}]}"#, "\t\r\n[\"é日本\"]\n", #"{"a":1,"A":2,"\u0062":3}"#,
    ])
  func valid(text: String) throws {
    try StrictJSON.validate(Data(text.utf8))
    try StrictJSON.validate(Substring(text))
  }

  @Test(
    "what is not JSON is refused, saying what is wrong and where",
    arguments: [
      (#"[{"a":1},]"#, 8, "a trailing comma before ']'"),
      (#"{"a":1,}"#, 6, "a trailing comma before '}'"),
      (#"{"a":1,"skip":-}"#, 14, "a '-' without digits"),
      (#"{"skip":1.2.3,"a":1}"#, 8, "an invalid number '1.2.'"),
      (#"{"skip":01}"#, 8, "a number with a leading zero"),
      (#"{"skip":1e}"#, 8, "a number without digits in its exponent"),
      (#"{"skip":1.}"#, 8, "a number without digits after its decimal point"),
      (#"{"skip":"\x"}"#, 9, #"an invalid escape \x in a string"#),
      (#"{"skip":"\u12"}"#, 9, "an invalid \\u escape"),
      (#"["\uD800"]"#, 2, "a lone surrogate \\uD800"),
      (#"["\uDC00\uD800"]"#, 2, "a lone surrogate \\uDC00"),
      (#"["\uD800\u0041"]"#, 2, "a lone surrogate \\uD800"),
      (#"[1e400]"#, 1, "the number '1e400' is out of range"),
      (#"[-1e400]"#, 1, "out of range"),
      (#"{"a":1,"a":2}"#, 7, #"the key "a" appears twice in one object"#),
      (#"{"a":1,"\u0061":2}"#, 7, #"the key "a" appears twice"#),
      ("[tru]", 1, "an invalid literal 'tru'"),
      ("[nul", 1, "an invalid literal"),
      ("[1 2]", 3, "'2' where ',' or ']' was expected"),
      (#"{"a" 1}"#, 5, "where ':' was expected"),
      ("{1:2}", 1, "where a key in double quotes was expected"),
      ("[1]x", 3, "'x' after the end of the JSON value"),
      ("[1]]", 3, "']' after the end"),
      ("[", 1, "the text ends where a value was expected"),
      (#"{"a":1"#, 6, "the text ends where ',' or '}' was expected"),
      (#"["abc"#, 1, "a string that is not closed"),
      ("", 0, "no JSON value"),
      ("  \n ", 4, "no JSON value"),
      ("[,1]", 1, "',' where a value was expected"),
      ("['a']", 1, "''' where a value was expected"),
      ("[NaN]", 1, "'N' where a value was expected"),
      ("[+1]", 1, "'+' where a value was expected"),
      ("[\"tab\there\"]", 5, "an unescaped control character U+0009"),
    ])
  func invalid(text: String, offset: Int, reason: String) throws {
    let error = try #require(throws: StrictJSON.SyntaxError.self) { try StrictJSON.validate(Data(text.utf8)) }
    #expect(error.offset == offset, "\(error)")
    #expect(error.reason.contains(reason), "\(error)")
    let again = try #require(throws: StrictJSON.SyntaxError.self) { try StrictJSON.validate(Substring(text)) }
    #expect(again == error)
  }

  @Test("bytes that are not text: invalid UTF-8, a NUL, a byte order mark, a raw byte outside strings")
  func bytes() throws {
    let cases: [([UInt8], Int, String)] = [
      (Array(#"{"name":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8), 10, "invalid UTF-8 (byte 0xFF"),
      (Array(#"[""#.utf8) + [0xC3] + Array(#""]"#.utf8), 2, "invalid UTF-8"),
      // An encoded surrogate, an overlong form.
      (Array(#"[""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""]"#.utf8), 2, "invalid UTF-8"),
      (Array(#"[""#.utf8) + [0xC0, 0x80] + Array(#""]"#.utf8), 2, "invalid UTF-8"),
      (Array(#"{"name":"a"#.utf8) + [0x00] + Array(#""}"#.utf8), 10, "a NUL byte in a string"),
      (Array("[1,".utf8) + [0x00] + Array("]".utf8), 3, "a NUL byte where a value was expected"),
      ([0xEF, 0xBB, 0xBF] + Array("[]".utf8), 0, "a byte order mark"),
      (Array("[1]".utf8) + [0xE2, 0x80, 0xA8], 3, "byte 0xE2 after the end"),
    ]
    for (bytes, offset, reason) in cases {
      let error = try #require(throws: StrictJSON.SyntaxError.self) { try StrictJSON.validate(Data(bytes)) }
      #expect(error.offset == offset, "\(error)")
      #expect(error.reason.contains(reason), "\(error)")
    }
  }

  @Test("long strings, read eight bytes at a time: a special byte is found at every position")
  func longStrings() throws {
    for length in [7, 8, 9, 15, 16, 17, 31, 40] {
      for position in 0..<length {
        var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
        let valid = ["\\\"", "\\\\", "é", "\u{7F}", " ", "~"]
        for replacement in valid {
          var text = bytes
          text.replaceSubrange(position...position, with: Array(replacement.utf8))
          try StrictJSON.validate(Data(Array("[\"".utf8) + text + Array("\"]".utf8)))
        }
        for bad: UInt8 in [0x00, 0x01, 0x1F, 0x80, 0xFF] {
          bytes[position] = bad
          let error = try #require(throws: StrictJSON.SyntaxError.self) {
            try StrictJSON.validate(Data(Array("[\"".utf8) + bytes + Array("\"]".utf8)))
          }
          #expect(error.offset == 2 + position, "length \(length), byte \(bad) at \(position): \(error)")
          bytes[position] = UInt8(ascii: "a")
        }
        // A quote ends the string early: what follows is not JSON.
        bytes[position] = UInt8(ascii: "\"")
        let text = Array("[\"".utf8) + bytes + Array("\"]".utf8)
        #expect(throws: StrictJSON.SyntaxError.self, "length \(length), quote at \(position)") {
          try StrictJSON.validate(Data(text))
        }
      }
    }
  }

  @Test("the line and column of the error, counting from 1")
  func position() throws {
    let text = "[\n  {\"a\": 1},\n  {\"b\": 2,}\n]"
    let error = try #require(throws: StrictJSON.SyntaxError.self) { try StrictJSON.validate(Data(text.utf8)) }
    #expect(error.line == 3)
    #expect(error.column == 10)
    #expect(error.description == "line 3, column 10 (byte offset 23): a trailing comma before '}'")
  }

  @Test("nesting: 512 levels pass, 513 fail, and a million open brackets neither recurse nor pass")
  func nesting() throws {
    let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    try StrictJSON.validate(Data(deepest.utf8))
    let deeper = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
    let error = try #require(throws: StrictJSON.SyntaxError.self) {
      try StrictJSON.validate(Data(deeper.utf8))
    }
    #expect(error.reason == "nesting deeper than 512 levels")
    #expect(throws: StrictJSON.SyntaxError.self) {
      try StrictJSON.validate(Data(repeating: UInt8(ascii: "["), count: 1_000_000))
    }
  }

  @Test("duplicate keys are found in large objects too, and per object")
  func largeObjects() throws {
    let members = (0..<1_000).map { #""k\#($0)":\#($0)"# }
    try StrictJSON.validate(Data(("{" + members.joined(separator: ",") + "}").utf8))
    let repeated = "{" + (members + [#""k\u0035\u0030\u0030":1"#]).joined(separator: ",") + "}"
    let error = try #require(throws: StrictJSON.SyntaxError.self) {
      try StrictJSON.validate(Data(repeated.utf8))
    }
    #expect(error.reason.contains(#"the key "k500" appears twice"#), "\(error)")
    // The same key in sibling and nested objects is no duplicate.
    try StrictJSON.validate(Data(#"[{"a":1,"b":{"a":2}},{"a":3}]"#.utf8))
  }
}
