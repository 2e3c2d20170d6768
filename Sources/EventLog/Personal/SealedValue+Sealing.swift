import Sodium

/// Sealing and opening a ``SealedValue`` (its format is the codec's): XChaCha20-Poly1305 under the
/// data subject's key, the header as associated data.
extension SealedValue {
  /// `plaintext` sealed under `key` behind `header` (a random nonce).
  static func seal(_ plaintext: [UInt8], header: [UInt8], key: [UInt8]) -> [UInt8] {
    header + XChaCha20Poly1305.seal(plaintext, key: key, associatedData: header)
  }

  /// The plaintext, or `nil` when `key` does not open it (another key, or altered bytes).
  func open(key: [UInt8]) -> [UInt8]? {
    // Read where they lie: copying the header and the sealed part out first was two arrays a value.
    bytes.withUnsafeBytes { bytes in
      XChaCha20Poly1305.open(
        UnsafeRawBufferPointer(rebasing: bytes[headerSize...]), key: key,
        associatedData: UnsafeRawBufferPointer(rebasing: bytes[..<headerSize]))
    }
  }
}
