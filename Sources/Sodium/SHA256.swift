import CSodium

/// SHA-256 (`crypto_hash_sha256`, FIPS 180-4): the hash PostgreSQL's `sha256()` computes, so a
/// device can check a chain the server keeps.
public enum SHA256 {
  /// The digest's length: 32 bytes.
  public static let length = 32

  /// The digest of `message`.
  /// - Complexity: O(`message.count`).
  public static func hash(_ message: [UInt8]) -> [UInt8] {
    Sodium.ready()
    return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
      guard let out = buffer.baseAddress else { preconditionFailure("a 32-byte buffer has an address") }
      let result = crypto_hash_sha256(out, message, UInt64(message.count))
      precondition(result == 0, "crypto_hash_sha256 failed")
      count = length
    }
  }
}
