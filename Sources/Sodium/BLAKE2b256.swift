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

  /// Writes the digest of `prefix` followed by `body` (unkeyed) into `digest`, without the
  /// caller copying them together: the hash chain's step, `prefix` being the value before.
  /// - Parameters:
  ///   - prefix: the first bytes (a few: the chain's previous value).
  ///   - body: the rest.
  ///   - digest: exactly ``length`` bytes.
  /// - Complexity: O(`prefix.count + body.count`); one copy of both into scratch memory (on the
  ///   stack for a record's size), then one call.
  public static func hash(
    prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer
  ) {
    let total = prefix.count + body.count
    withUnsafeTemporaryAllocation(byteCount: max(1, total), alignment: 16) { scratch in
      if prefix.count > 0 {
        UnsafeMutableRawBufferPointer(rebasing: scratch[0..<prefix.count]).copyMemory(from: prefix)
      }
      if body.count > 0 {
        UnsafeMutableRawBufferPointer(rebasing: scratch[prefix.count..<total]).copyMemory(from: body)
      }
      hash(
        UnsafeRawBufferPointer(rebasing: scratch[0..<total]),
        key: UnsafeRawBufferPointer(start: nil, count: 0), into: digest)
    }
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

extension BLAKE2b256 {
  /// A digest computed in pieces (`crypto_generichash_init`, `_update`, `_final`): for a long
  /// text written a line at a time, such as an export.
  ///
  /// Not `Sendable`: one hasher is fed by one task.
  public final class Hasher {
    /// libsodium's state, 64-byte aligned as it asks (`crypto_generichash_state` is declared with
    /// that alignment, which a Swift stack value would not promise).
    private let state: UnsafeMutableRawPointer
    private var finished = false

    /// A hasher, keyed with `key` (empty: unkeyed; at most 64 bytes).
    public init(key: [UInt8] = []) {
      Sodium.ready()
      precondition(key.count <= BLAKE2b256.maximumKeyLength, "a BLAKE2b key is at most 64 bytes")
      state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
      let result = key.withUnsafeBufferPointer { key in
        crypto_generichash_init(
          OpaquePointer(state), key.isEmpty ? nil : key.baseAddress, key.count, BLAKE2b256.length)
      }
      precondition(result == 0, "crypto_generichash_init failed with valid lengths")
    }

    deinit { state.deallocate() }

    /// Adds `bytes`.
    public func update(_ bytes: some Sequence<UInt8>) {
      precondition(!finished, "a BLAKE2b hasher was fed after its digest was taken")
      let copy = Array(bytes)
      let result = copy.withUnsafeBufferPointer {
        crypto_generichash_update(OpaquePointer(state), $0.baseAddress, UInt64($0.count))
      }
      precondition(result == 0, "crypto_generichash_update failed")
    }

    /// The digest of everything added (the hasher takes nothing more).
    public func finalize() -> [UInt8] {
      precondition(!finished, "a BLAKE2b hasher's digest was taken twice")
      finished = true
      var digest = [UInt8](repeating: 0, count: BLAKE2b256.length)
      let result = crypto_generichash_final(OpaquePointer(state), &digest, BLAKE2b256.length)
      precondition(result == 0, "crypto_generichash_final failed")
      return digest
    }
  }
}

@available(*, unavailable)
extension BLAKE2b256.Hasher: Sendable {}
