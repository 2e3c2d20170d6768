/// Lower-case hexadecimal text of bytes and back: the package's one hex form (chain values,
/// keys in errors, the replication device key, UUID text).
package enum Hex {
  /// The sixteen digits, as UTF-8.
  package static let digits = Array("0123456789abcdef".utf8)

  /// Appends two lower-case digits per byte of `bytes` to `output`.
  package static func append(_ bytes: some Sequence<UInt8>, to output: inout [UInt8]) {
    for byte in bytes {
      output.append(digits[Int(byte >> 4)])
      output.append(digits[Int(byte & 0x0F)])
    }
  }

  /// Two lower-case digits per byte of `bytes`.
  package static func string(_ bytes: some Sequence<UInt8>) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    append(bytes, to: &text)
    return String(decoding: text, as: UTF8.self)
  }

  /// The bytes of `text`, two hexadecimal digits (either case) per byte.
  /// - Returns: `nil` when `text` holds an odd number of characters or a non-digit.
  package static func bytes(_ text: some StringProtocol) -> [UInt8]? {
    let characters = Array(text.utf8)
    guard characters.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(characters.count / 2)
    var index = 0
    while index < characters.count {
      guard let high = value(of: characters[index]), let low = value(of: characters[index + 1]) else {
        return nil
      }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  private static func value(of digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
