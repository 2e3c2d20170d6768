/// UUIDs in the store's and the server's text about events (`verify`'s problems and skipped
/// events, the replication server's reasons) in lower case, as every output writes them.
///
/// The store and the domain write their own messages with lower-case UUIDs; this catches a stored
/// stream name quoted in such a text. It is not for text that may hold a path (error messages):
/// a path is the user's and is shown as it is.
enum UUIDText {
  /// `text` with every UUID in it (8-4-4-4-12 hexadecimal digits) in lower case.
  static func lowercased(_ text: String) -> String {
    var bytes = Array(text.utf8)
    guard bytes.count >= 36 else { return text }
    var changed = false
    var start = 0
    while start + 36 <= bytes.count {
      if isUUID(bytes, at: start) {
        for index in start..<(start + 36) where (0x41...0x46).contains(bytes[index]) {
          bytes[index] |= 0x20
          changed = true
        }
        start += 36
      } else {
        start += 1
      }
    }
    return changed ? String(decoding: bytes, as: UTF8.self) : text
  }

  /// Whether the 36 bytes at `start` are a UUID's text.
  private static func isUUID(_ bytes: [UInt8], at start: Int) -> Bool {
    for offset in 0..<36 {
      let byte = bytes[start + offset]
      if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
        guard byte == UInt8(ascii: "-") else { return false }
      } else {
        guard (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        else { return false }
      }
    }
    return true
  }
}
