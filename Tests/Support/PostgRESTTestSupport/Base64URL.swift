import Foundation

/// base64url without padding (RFC 4648 §5, as RFC 7515 §2 uses it for JSON Web Tokens): Foundation's
/// base64 with `+/` mapped to `-_` and the `=` padding dropped (encoding) or restored (decoding).
public enum Base64URL {
  /// The unpadded base64url text of `bytes`.
  public static func encode(_ bytes: some Sequence<UInt8>) -> String {
    Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// The bytes of unpadded base64url `text`; `nil` when it is not that (padding, `+`, `/` or any
  /// other character outside the alphabet, or a length no encoding has).
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    guard text.utf8.count % 4 != 1,
      text.utf8.allSatisfy({ byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
          true
        default: false
        }
      })
    else { return nil }
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
    return Data(base64Encoded: base64).map { Array($0) }
  }
}
