import Foundation
import Testing

@testable import EventLogCLI

/// Untrusted text never reaches a terminal raw (issue 14, item 6).
@Suite("Terminal text is escaped")
struct TerminalTextTests {
  /// ESC with a colour sequence, CSI (U+009B) clearing the screen, U+202E (right-to-left
  /// override), a C1 control, the line and paragraph separators, an isolate, a newline.
  static let hostile = "a\u{1B}[31mb\u{9B}2Jc\u{202E}d\u{85}e\u{2028}f\u{2029}g\u{2066}h\u{7F}i\nj"
  static let escaped = #"a\u{1b}[31mb\u{9b}2Jc\u{202e}d\u{85}e\u{2028}f\u{2029}g\u{2066}h\u{7f}i\nj"#

  @Test("C0 and C1 controls, DEL, separators and bidirectional controls are escaped; other text is kept")
  func escaping() {
    #expect(TerminalText.escaped(Self.hostile) == Self.escaped)
    #expect(TerminalText.escaped("tab\there\r") == #"tab\there\r"#)
    for scalar in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x80, 0x9F] {
      let text = String(Character(Unicode.Scalar(UInt32(scalar))!))
      #expect(TerminalText.escaped(text) == "\\u{\(String(scalar, radix: 16))}")
    }
    let plain = "Zoë 日本 👩‍👩‍👧 \u{200D} \u{A0} é"
    #expect(TerminalText.escaped(plain) == plain)
    #expect(Table.singleLine(Self.hostile) == Self.escaped)
  }

  @Test("an error quoting a file's value carrying ESC, CSI and U+202E is escaped on standard error")
  func escapedError() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let body = #"[{"id":"\u001b[2J\u009b31m\u202eevil","name":"A","cuisine":"x"}]"#
    let run = try cli("restaurants", "sync", "--from", try cli.file("evil.json", body))
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr.contains(#"'\u{1b}[2J\u{9b}31m\u{202e}evil' is not a UUID"#), "\(run)")
    for raw in ["\u{1B}", "\u{9B}", "\u{202E}"] { #expect(!run.stderr.contains(raw), "\(run)") }
  }

  @Test("restaurant names with C1 controls, separators and bidirectional overrides are escaped in tables")
  func escapedTables() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let name = #"Evil\u009b2J\u202eeman\u2028x\u0085"#
    let body = #"[{"id":"\#(pastaID)","name":"\#(name)","cuisine":"It\u2066alian"}]"#
    try #require(try cli("restaurants", "sync", "--from", try cli.file("evil.json", body)).status == 0)
    for command in [["restaurants", "list"], ["log"], ["show", "1"]] {
      let run = try cli.run(command)
      #expect(run.status == 0, "\(run)")
      for raw in ["\u{9B}", "\u{202E}", "\u{2028}", "\u{85}", "\u{2066}"] {
        #expect(!run.stdout.contains(raw), "\(command): \(run.stdout.debugDescription)")
      }
    }
    #expect(try cli("restaurants", "list").stdout.contains(#"Evil\u{9b}2J\u{202e}eman\u{2028}x\u{85}"#))
  }
}
