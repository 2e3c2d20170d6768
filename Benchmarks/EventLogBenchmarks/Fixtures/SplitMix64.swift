import Foundation

/// A small, fast, seeded pseudo-random generator (SplitMix64): the same seed gives the same data
/// on every machine and in every process, so all systems see identical fixtures.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<bound`.
  mutating func below(_ bound: Int) -> Int {
    precondition(bound > 0, "bound must be positive")
    return Int(next() % UInt64(bound))
  }

  /// A version-4 UUID made of generator output.
  mutating func uuid() -> UUID {
    var bytes = withUnsafeBytes(of: (next(), next())) { $0.loadUnaligned(as: uuid_t.self) }
    bytes.6 = (bytes.6 & 0x0F) | 0x40
    bytes.8 = (bytes.8 & 0x3F) | 0x80
    return UUID(uuid: bytes)
  }
}
