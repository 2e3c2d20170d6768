import CSodium
import Synchronization

#if canImport(Glibc)
  import Glibc  // pthread_atfork
#elseif canImport(Darwin)
  import Darwin
#endif

/// Random nonces handed out from a buffer of the operating system's random bytes, refilled 4 KiB
/// at a time: one `getrandom` call per 170 XChaCha20-Poly1305 nonces instead of one per nonce
/// (the system call was about a tenth of a sealed append's cost, measured with `perf` on the
/// `append.batched` benchmark). Every nonce is still 24 fresh bytes of the system's generator,
/// used once. A forked child (whose copy of the buffer its parent also holds) refills before it
/// takes a nonce: a fork handler counts forks, and the buffer remembers the count it was filled at
/// (asking the process ID instead is a system call per nonce, another tenth of the sealing cost).
enum NoncePool {
  private struct State {
    var bytes: [UInt8] = []
    var used = 0
    var forks = -1
  }

  private static let refill = 4_096
  /// Forks of this process since the pool was first used: counted in each child.
  private static let forks = Atomic<Int>(0)
  private static let state: Mutex<State> = {
    _ = forks.load(ordering: .relaxed)  // initialized before a child can touch it
    pthread_atfork(nil, nil) { NoncePool.forks.add(1, ordering: .relaxed) }
    return Mutex(State())
  }()

  /// Writes `output.count` random bytes (at most 4 KiB) into `output`.
  static func fill(_ output: UnsafeMutableRawBufferPointer) {
    precondition(output.count <= refill, "a nonce of at most 4 KiB")
    state.withLock { state in
      let forks = Self.forks.load(ordering: .relaxed)
      if state.forks != forks || state.used + output.count > state.bytes.count {
        state.bytes = SecureRandom.bytes(refill)
        state.used = 0
        state.forks = forks
      }
      state.bytes.withUnsafeBytes { bytes in
        output.copyMemory(
          from: UnsafeRawBufferPointer(rebasing: bytes[state.used..<(state.used + output.count)]))
      }
      // Each nonce is handed out once; the bytes it came from are cleared.
      for index in state.used..<(state.used + output.count) { state.bytes[index] = 0 }
      state.used += output.count
    }
  }
}
