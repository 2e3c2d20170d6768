import Foundation
import Testing

/// The sync and import readers take RFC 8259 JSON only, and say what is wrong and where
/// (issue 14, item 4).
@Suite("import and sync refuse what is not JSON")
struct JSONInputTests {
  /// Invalid forms, each as the value of a key the readers ignore (or the whole member), with
  /// the reason the error must give.
  static let forms: [(member: String, reason: String)] = [
    (#""skip":-"#, "a '-' without digits"),
    (#""skip":1.2.3"#, "an invalid number '1.2.'"),
    (#""skip":01"#, "a number with a leading zero"),
    (#""skip":1e"#, "a number without digits in its exponent"),
    (#""skip":"\x""#, #"an invalid escape \x"#),
    (#""skip":"\uD800""#, "a lone surrogate \\uD800"),
    (#""skip":1e400"#, "the number '1e400' is out of range"),
    (#""skip":"a","skip":"b""#, #"the key "skip" appears twice in one object"#),
  ]

  @Test(
    "import: a bad form in an ignored key, a trailing comma, a duplicate key: refused naming line, column and offset"
  )
  func importForms() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let lines = try cli("export").stdout.split(separator: "\n").map(String.init)
    let other = cli.directory.appendingPathComponent("other.db").path
    var cases = Self.forms.map { form in
      (String(lines[1].dropLast()) + "," + form.member + "}", form.reason)
    }
    cases.append((String(lines[1].dropLast()) + ",}", "a trailing comma before '}'"))
    cases.append(
      (
        lines[1].replacingOccurrences(of: #""origin":"cli""#, with: #""origin":"cli","origin":"x""#),
        #"the key "origin" appears twice"#
      ))
    for (line, reason) in cases {
      let input = ([lines[0], line] + lines[2...]).joined(separator: "\n") + "\n"
      let run = try cli.run(["--db", other, "import", "-"], input: input, useDatabase: false)
      #expect(run.status == 1, "\(line): \(run)")
      #expect(run.stderr.hasPrefix("Error: line 2, column "), "\(run)")
      #expect(run.stderr.contains("not valid JSON: \(reason)"), "\(run)")
      let offset = lines[0].utf8.count + 1 + (StringOffset.column(in: run.stderr) ?? 1) - 1
      #expect(run.stderr.contains("(byte offset \(offset))"), "\(run)")
      #expect(!FileManager.default.fileExists(atPath: other))
    }
  }

  @Test(
    "sync: a bad form in an ignored key, a trailing comma in the array or a row: refused, nothing appended")
  func syncForms() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let row = #"{"id":"44444444-4444-4444-8444-444444444444","name":"Taco Town","cuisine":"Mexican""#
    var bodies = Self.forms.map { form in ("[" + row + "," + form.member + "}]", form.reason) }
    bodies.append(("[" + row + "},]", "a trailing comma before ']'"))
    bodies.append(("[" + row + ",}]", "a trailing comma before '}'"))
    for (body, reason) in bodies {
      let run = try cli("restaurants", "sync", "--from", try cli.file("bad.json", body))
      #expect(run.status == 1, "\(body): \(run)")
      #expect(run.stderr.contains("not valid JSON: line 1, column "), "\(run)")
      #expect(run.stderr.contains(reason), "\(run)")
      #expect(try cli.head() == 4)
    }
  }

  @Test(
    "sync: invalid UTF-8, a NUL and a lone surrogate in a name are named as such, not as a mistyped field")
  func syncBytes() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let prefix = Array(#"[{"id":"44444444-4444-4444-8444-444444444444","name":"Taco"#.utf8)
    let suffix = Array(#"","cuisine":"Mexican"}]"#.utf8)
    for (middle, reason) in [
      ([UInt8(0xFF)], "invalid UTF-8 (byte 0xFF begins no valid sequence)"),
      ([0x00], "a NUL byte in a string"),
      (Array(#"\uDBFF"#.utf8), "a lone surrogate \\uDBFF"),
    ] {
      let file = cli.directory.appendingPathComponent("bytes.json")
      try Data(prefix + middle + suffix).write(to: file)
      let run = try cli("restaurants", "sync", "--from", file.path)
      #expect(run.status == 1, "\(run)")
      #expect(run.stderr.contains("line 1, column 59 (byte offset 58): \(reason)"), "\(run)")
      #expect(!run.stderr.contains("is an object"), "\(run)")
      #expect(try cli.head() == 4)
    }
  }
}

/// The column an error message gives (`…, column N (…`).
enum StringOffset {
  static func column(in text: String) -> Int? {
    guard let range = text.range(of: ", column ") else { return nil }
    return Int(text[range.upperBound...].prefix { $0.isNumber })
  }
}
