import CSodium

/// Ed25519 signatures (`crypto_sign_detached`, RFC 8032).
public enum Ed25519 {
  /// A private key's seed: 32 bytes.
  public static let seedLength = 32
  /// A public key: 32 bytes.
  public static let publicKeyLength = 32
  /// A signature: 64 bytes.
  public static let signatureLength = 64

  /// A key pair, made from a 32-byte seed (the only secret to keep).
  public struct SigningKey: Sendable {
    /// libsodium's secret key: the seed, then the public key.
    private let secretKey: [UInt8]
    /// The public key, which anyone may hold to check signatures.
    public let publicKey: [UInt8]

    /// The key pair of `seed`.
    /// - Returns: `nil` when `seed` is not 32 bytes.
    public init?(seed: [UInt8]) {
      guard seed.count == Ed25519.seedLength else { return nil }
      Sodium.ready()
      var publicKey = [UInt8](repeating: 0, count: Ed25519.publicKeyLength)
      var secretKey = [UInt8](repeating: 0, count: Int(crypto_sign_secretkeybytes()))
      let result = crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
      guard result == 0 else { return nil }
      self.publicKey = publicKey
      self.secretKey = secretKey
    }

    /// A new key pair from a random seed, and the seed.
    public static func generate() -> (key: SigningKey, seed: [UInt8]) {
      let seed = SecureRandom.bytes(Ed25519.seedLength)
      guard let key = SigningKey(seed: seed) else { preconditionFailure("a 32-byte seed makes a key") }
      return (key, seed)
    }

    /// The signature of `message`.
    public func signature(of message: [UInt8]) -> [UInt8] {
      var signature = [UInt8](repeating: 0, count: Ed25519.signatureLength)
      let result = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
      precondition(result == 0, "crypto_sign_detached failed")
      return signature
    }
  }

  /// Whether `signature` is `publicKey`'s signature of `message`.
  public static func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
    guard signature.count == signatureLength, publicKey.count == publicKeyLength else { return false }
    Sodium.ready()
    return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
  }
}
