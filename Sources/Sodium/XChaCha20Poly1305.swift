import CSodium

/// Authenticated encryption with XChaCha20-Poly1305 (`crypto_aead_xchacha20poly1305_ietf`): a
/// 32-byte key, a random 24-byte nonce per message (192 bits: safe to draw at random on devices
/// that never coordinate), associated data that is authenticated but not encrypted.
public enum XChaCha20Poly1305 {
  /// A key: 32 bytes.
  public static let keyLength = 32
  /// A nonce: 24 bytes.
  public static let nonceLength = 24
  /// The authentication tag each ciphertext carries: 16 bytes.
  public static let tagLength = 16

  /// A new random key.
  public static func generateKey() -> [UInt8] { SecureRandom.bytes(keyLength) }

  /// Encrypts `plaintext` under `key` with a random nonce.
  /// - Returns: the nonce, then the ciphertext and its tag (`nonceLength + plaintext.count + tagLength` bytes).
  public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) -> [UInt8] {
    precondition(key.count == keyLength, "an XChaCha20-Poly1305 key is 32 bytes")
    let nonce = SecureRandom.bytes(nonceLength)
    var sealed = nonce + [UInt8](repeating: 0, count: plaintext.count + tagLength)
    var length: UInt64 = 0
    let result = sealed.withUnsafeMutableBufferPointer { out -> Int32 in
      guard let base = out.baseAddress else { return -1 }
      return crypto_aead_xchacha20poly1305_ietf_encrypt(
        base + nonceLength, &length, plaintext, UInt64(plaintext.count), associatedData,
        UInt64(associatedData.count), nil, nonce, key)
    }
    precondition(
      result == 0 && Int(length) == plaintext.count + tagLength, "XChaCha20-Poly1305 sealing failed")
    return sealed
  }

  /// Decrypts what ``seal(_:key:associatedData:)`` made.
  /// - Returns: the plaintext, or `nil` when the key, the associated data or a byte of `sealed`
  ///   is not what sealed it.
  public static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
    sealed.withUnsafeBytes { sealed in
      associatedData.withUnsafeBytes { associatedData in
        open(sealed, key: key, associatedData: associatedData)
      }
    }
  }

  /// Decrypts what ``seal(_:key:associatedData:)`` made, read where it lies: the form of
  /// the array `open` that copies nothing but the plaintext out (a read shows a
  /// sealed value from the stored bytes).
  /// - Returns: the plaintext, or `nil` when the key, the associated data or a byte of `sealed`
  ///   is not what sealed it.
  public static func open(
    _ sealed: UnsafeRawBufferPointer, key: [UInt8], associatedData: UnsafeRawBufferPointer
  ) -> [UInt8]? {
    guard key.count == keyLength, sealed.count >= nonceLength + tagLength, let base = sealed.baseAddress
    else { return nil }
    Sodium.ready()
    let ciphertextLength = sealed.count - nonceLength
    var opened = false
    // The plaintext is the ciphertext less its tag, exactly: one array, made at its size.
    let plaintext = [UInt8](unsafeUninitializedCapacity: ciphertextLength - tagLength) { out, count in
      var length: UInt64 = 0
      let result = crypto_aead_xchacha20poly1305_ietf_decrypt(
        out.baseAddress, &length, nil, base.assumingMemoryBound(to: UInt8.self) + nonceLength,
        UInt64(ciphertextLength), associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
        UInt64(associatedData.count), base.assumingMemoryBound(to: UInt8.self), key)
      opened = result == 0 && Int(length) == ciphertextLength - tagLength
      // A failed decryption leaves the output undefined: nothing of it is kept.
      count = opened ? Int(length) : 0
    }
    return opened ? plaintext : nil
  }

  /// Seals in place: `sealed` holds room for the nonce, then the plaintext, then room for the
  /// tag (`nonceLength + plaintext + tagLength` bytes); the nonce is drawn at random and the
  /// plaintext encrypted where it lies, with `associatedData` bound. The form of
  /// ``seal(_:key:associatedData:)`` that allocates nothing: an append seals a value in the
  /// payload it was encoded into.
  /// - Precondition: `key` is 32 bytes and `sealed` at least `nonceLength + tagLength` bytes.
  public static func sealInPlace(
    _ sealed: UnsafeMutableRawBufferPointer, key: [UInt8], associatedData: UnsafeRawBufferPointer
  ) {
    precondition(key.count == keyLength, "an XChaCha20-Poly1305 key is 32 bytes")
    precondition(sealed.count >= nonceLength + tagLength, "sealed value smaller than its nonce and tag")
    guard let base = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    Sodium.ready()
    NoncePool.fill(UnsafeMutableRawBufferPointer(start: base, count: nonceLength))
    let plaintextCount = sealed.count - nonceLength - tagLength
    let text = base + nonceLength
    // libsodium encrypts in place (the ciphertext's address may be the plaintext's): the stream
    // is XORed over the text, then the tag is computed over the ciphertext.
    var tagCount: UInt64 = 0
    let result = crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
      text, text + plaintextCount, &tagCount, text, UInt64(plaintextCount),
      associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count), nil,
      base, key)
    precondition(result == 0 && Int(tagCount) == tagLength, "XChaCha20-Poly1305 sealing failed")
  }
}
