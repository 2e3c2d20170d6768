import CSodium

/// libsodium, initialized once for the process (`sodium_init`, which is thread-safe and may be
/// called again). Every entry point of this module calls ``ready()`` first.
///
/// This module is the only code that touches libsodium's C API (`CSodium`): the hashes of the
/// audit chain (``BLAKE2b256``, ``SHA256``), signatures (``Ed25519``), the authenticated
/// encryption of sealed fields (``XChaCha20Poly1305``) and random bytes (``SecureRandom``).
enum Sodium {
  /// `sodium_init()`'s verdict: 0 (initialized now) or 1 (already); -1 when the library could
  /// not initialize (it found no source of randomness), which nothing here can work without.
  private static let initialization: Int32 = sodium_init()

  /// Makes sure libsodium is initialized.
  static func ready() {
    precondition(initialization >= 0, "libsodium could not initialize (sodium_init failed)")
  }
}
