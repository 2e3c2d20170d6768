import Foundation

/// The package's one writer of JSON strings: payloads (``JSONNode``), the command line's output
/// and exports (`JSONValue`), and the transports' request bodies all quote text through it, so
/// the same string is the same bytes wherever it is written.
///
/// The escaping rule: `"` and `\` take a backslash; U+0008, U+0009, U+000A, U+000C and U+000D
/// are written `\b`, `\t`, `\n`, `\f` and `\r`; the other control characters below U+0020 are
/// written `\u00xx` with lower-case hex digits; everything else (`/`, U+007F, every non-ASCII
/// character) is written as its UTF-8 bytes. It is the rule of PostgreSQL's `jsonb` output, so a
/// payload the server sends back reads as the text that was pushed.
package enum JSONWriter {
  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends `text` as a JSON string literal, quotes included, by the rule above.
  /// - Complexity: O(n) in the UTF-8 length of `text`.
  package static func appendQuoted(_ text: String, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    let utf8 = text.utf8
    if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
      output.append(contentsOf: utf8)
      output.append(UInt8(ascii: "\""))
      return
    }
    for byte in utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
      case 0x08: output.append(contentsOf: #"\b"#.utf8)
      case 0x09: output.append(contentsOf: #"\t"#.utf8)
      case 0x0A: output.append(contentsOf: #"\n"#.utf8)
      case 0x0C: output.append(contentsOf: #"\f"#.utf8)
      case 0x0D: output.append(contentsOf: #"\r"#.utf8)
      case ..<0x20:
        output.append(contentsOf: #"\u00"#.utf8)
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0xF)])
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }

  /// Appends `id` as a JSON string literal: its ``Foundation/UUID/lowercasedString`` in quotes.
  package static func appendQuoted(_ id: UUID, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    id.appendLowercased(to: &output)
    output.append(UInt8(ascii: "\""))
  }
}
