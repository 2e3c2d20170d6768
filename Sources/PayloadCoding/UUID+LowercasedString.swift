import Foundation

extension UUID {
  /// The UUID as text in lower case (`2bdcaad7-44ad-5115-ae8a-a9acb7dac2fd`), as every output of
  /// the event log writes it: RFC 9562 asks for lower case on output and either case on input,
  /// which `UUID(uuidString:)` accepts. (`uuidString` is upper case.)
  ///
  /// The package's one UUID text form: `appendLowercased(to:)` writes the same characters.
  public var lowercasedString: String {
    var text: [UInt8] = []
    text.reserveCapacity(36)
    appendLowercased(to: &text)
    return String(decoding: text, as: UTF8.self)
  }

  /// Appends ``lowercasedString``'s characters, `8-4-4-4-12` lower-case hex digits, as UTF-8.
  ///
  /// Written digit by digit: `uuidString` formats through `snprintf` on Linux, a few percent of a
  /// push's client CPU time.
  package func appendLowercased(to output: inout [UInt8]) {
    let hexDigits = Hex.digits
    withUnsafeBytes(of: uuid) { bytes in
      for (index, byte) in bytes.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { output.append(UInt8(ascii: "-")) }
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0xF)])
      }
    }
  }
}
