import CSodium

/// BLAKE2b with a 32-byte digest (`crypto_generichash`, RFC 7693), plain or keyed.
///
/// Keyed BLAKE2b processes the key, zero-padded to one 128-byte block, before the message, so
/// `hash(message, key: k)` is the digest of `k ‖ padding ‖ message` with the key's length in the
/// parameter block: a chain value that keys each record's hash with the previous value commits
/// to both, in one call and without copying them together.
public enum BLAKE2b256 {
  /// The digest's length: 32 bytes.
  public static let length = 32
  /// The longest key: 64 bytes.
  public static let maximumKeyLength = 64

  /// Writes the digest of `message`, keyed with `key` (empty: unkeyed), into `digest`.
  /// - Parameters:
  ///   - message: the bytes to hash.
  ///   - key: at most 64 bytes.
  ///   - digest: exactly ``length`` bytes.
  /// - Complexity: O(`message.count`), about 1 GB/s with the vector implementations.
  public static func hash(
    _ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer
  ) {
    Sodium.ready()
    precondition(digest.count == length, "a BLAKE2b-256 digest is 32 bytes")
    precondition(key.count <= maximumKeyLength, "a BLAKE2b key is at most 64 bytes")
    guard let out = digest.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      preconditionFailure("a 32-byte digest buffer has an address")
    }
    let result = crypto_generichash(
      out, length, message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
      key.count == 0 ? nil : key.baseAddress?.assumingMemoryBound(to: UInt8.self), key.count)
    precondition(result == 0, "crypto_generichash failed with valid lengths")
  }

  /// The digest of `message`, keyed with `key` (empty: unkeyed).
  public static func hash(_ message: [UInt8], key: [UInt8] = []) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
      message.withUnsafeBytes { m in
        key.withUnsafeBytes { k in hash(m, key: k, into: UnsafeMutableRawBufferPointer(buffer)) }
      }
      count = length
    }
  }
}
