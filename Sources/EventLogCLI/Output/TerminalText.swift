/// Text from outside (a server's message, a row's value, a file's content, a payload, a path)
/// made safe to show on a terminal: every character that a terminal acts on or that reorders
/// what is shown is written as an escape, so the text can neither spoof output nor send the
/// terminal commands.
///
/// Escaped: the C0 controls and DEL (newline as `\n`, tab as `\t`, carriage return as `\r`,
/// the others as `\u{1b}`), the C1 controls U+0080–U+009F (among them CSI, U+009B, which
/// terminals read like `ESC [`), the line and paragraph separators U+2028 and U+2029, and the
/// bidirectional embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069.
///
/// Tables escape every cell with it, and the program every error message; use it for any other
/// untrusted text written to a terminal. JSON output is data and is not escaped.
public enum TerminalText {
  /// `text` with the characters above escaped; itself when it has none.
  /// - Complexity: O(n) in the length of `text`.
  public static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 16)
    for scalar in text.unicodeScalars {
      guard needsEscape(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      default: result += "\\u{\(String(scalar.value, radix: 16))}"
      }
    }
    return result
  }

  /// Whether a terminal would act on `scalar` or reorder text around it.
  public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
