import CSodium

/// Random bytes from the operating system's generator (`randombytes_buf`).
public enum SecureRandom {
  /// `count` random bytes.
  public static func bytes(_ count: Int) -> [UInt8] {
    Sodium.ready()
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      if let base = buffer.baseAddress { randombytes_buf(base, count) }
      initialized = count
    }
  }
}
