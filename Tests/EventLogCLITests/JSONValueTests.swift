import Testing

@testable import EventLogCLI

/// `JSONValue.topLevelValue(ofKey:in:)` finds a value's text in an import line, so that the
/// payload is decoded from what was written instead of from a re-serialised object.
@Suite("JSONValue.topLevelValue")
struct JSONValueTests {
  @Test(
    "finds the value as written",
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
    ])
  func finds(text: String, value: String) {
    #expect(JSONValue.topLevelValue(ofKey: "payload", in: Substring(text)) == Substring(value))
  }

  @Test(
    "nil when the key is absent, only nested, repeated or written with escapes",
    arguments: [
      #"{"a":1}"#, #"{"a":{"payload":1}}"#, #"{"payload":1,"payload":2}"#, #"{"pay\u006coad":1}"#, "[]", "{}",
    ])
  func absent(text: String) {
    #expect(JSONValue.topLevelValue(ofKey: "payload", in: Substring(text)) == nil)
  }

  @Test("works on a slice of a longer text")
  func slice() {
    let text = #"ignored{"payload":{"k":"v"}}ignored"#
    let start = text.index(text.startIndex, offsetBy: 7)
    let end = text.index(text.endIndex, offsetBy: -7)
    #expect(JSONValue.topLevelValue(ofKey: "payload", in: text[start..<end]) == #"{"k":"v"}"#)
  }
}
