/// FNV-1a, 64 bits: the payload and log fingerprints that `eventlog-stress` prints and the
/// reliability tests recompute. One definition, so that both sides always hash alike.
public struct FNV1a64: Sendable {
  /// The hash of what was added so far.
  public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  /// An empty hash.
  public init() {}

  /// The hash of `bytes`.
  public init<Bytes: Sequence<UInt8>>(hashing bytes: Bytes) {
    add(bytes)
  }

  /// Adds bytes.
  public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
    for byte in bytes {
      value ^= UInt64(byte)
      value = value &* 0x0000_0100_0000_01b3
    }
  }

  /// Adds an integer's eight little-endian bytes.
  public mutating func add(_ integer: UInt64) {
    withUnsafeBytes(of: integer.littleEndian) { add($0) }
  }

  /// Adds a string's UTF-8 length, then its bytes (so that two strings cannot run together).
  public mutating func add(_ text: String) {
    add(UInt64(text.utf8.count))
    add(text.utf8)
  }

  /// The hash of `bytes`.
  public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
    FNV1a64(hashing: bytes).value
  }

  /// The value as 16 lower-case hexadecimal digits.
  public var hex: String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
