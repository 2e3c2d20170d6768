import Foundation
import Synchronization

/// Makes UUIDs of version 7 (RFC 9562, section 5.7): a 48-bit Unix time in milliseconds, then
/// random bits, so that IDs made later sort later, bytewise (as LMDB and PostgreSQL order them).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// |                         unix_ts_ms (48)                       |
/// |        unix_ts_ms             |  ver=7 |      rand_a (12)     |
/// |var|                       rand_b (62)                         |
/// |                            rand_b                             |
/// ```
///
/// Monotonic within one generator: the 74 bits of `rand_a` and `rand_b` are one counter. The
/// first ID of a millisecond draws it at random with its top bit clear (room for at least 2^41
/// more IDs in that millisecond); each further ID of the same millisecond adds a random step of
/// 1 to 2^32 (RFC 9562, section 6.2, method 2), so the next ID is neither guessable nor
/// equal. When the clock steps back, the generator keeps the last millisecond it used and goes on
/// counting until the clock catches up; a counter that would overflow moves the timestamp one
/// millisecond on. So every ID is greater than the one before, whatever the clock does.
///
/// `UUID.version7()` is the process's shared generator: IDs are increasing across threads in the
/// order they are made. Make a generator of your own with a clock and random source of your
/// choosing for deterministic IDs (tests, benchmark fixtures).
package struct UUIDv7Generator: Sendable {
  /// The timestamp of the last ID (milliseconds since 1970, 48 bits).
  public private(set) var lastMilliseconds: UInt64 = 0
  /// The 74-bit counter of the last ID: `rand_a` (12 bits) above `rand_b` (62 bits).
  private var high: UInt64 = 0  // rand_a, 12 bits
  private var low: UInt64 = 0  // rand_b, 62 bits
  private var started = false

  private static let timestampMask: UInt64 = (1 << 48) - 1
  private static let lowMask: UInt64 = (1 << 62) - 1
  private static let highMask: UInt64 = (1 << 12) - 1

  /// A generator that has made no ID yet.
  public init() {}

  /// A generator whose last ID had this timestamp and counter (tests reach the counter's end).
  init(lastMilliseconds: UInt64, counter high: UInt64, _ low: UInt64) {
    self.lastMilliseconds = lastMilliseconds & Self.timestampMask
    self.high = high & Self.highMask
    self.low = low & Self.lowMask
    started = true
  }

  /// The next ID for a clock reading of `milliseconds` since 1970, with random bits from `random`.
  ///
  /// The ID is greater (bytewise) than every ID this generator made before, even when
  /// `milliseconds` is earlier than the last reading.
  /// - Complexity: O(1).
  public mutating func next(
    milliseconds: UInt64, using random: inout some RandomNumberGenerator
  ) -> UUID {
    let now = milliseconds & Self.timestampMask
    if started && now <= lastMilliseconds {
      // The same millisecond, or the clock stepped back: count on from the last ID.
      // A step of 1 to 2^32 onto `low` < 2^62: the sum cannot overflow 64 bits.
      let sum = low + 1 + (random.next() & ((1 << 32) - 1))
      if sum <= Self.lowMask {
        low = sum
      } else if high < Self.highMask {
        high += 1
        low = sum & Self.lowMask
      } else {
        // The counter is spent: borrow the next millisecond.
        start(at: (lastMilliseconds + 1) & Self.timestampMask, using: &random)
      }
    } else {
      start(at: now, using: &random)
    }
    return Self.layout(milliseconds: lastMilliseconds, high: high, low: low)
  }

  /// The next ID now: the system clock and the system's random generator.
  public mutating func next() -> UUID {
    var random = SystemRandomNumberGenerator()
    return next(milliseconds: Self.currentMilliseconds(), using: &random)
  }

  /// The system clock's Unix time in milliseconds (0 before 1970).
  static func currentMilliseconds() -> UInt64 {
    let milliseconds = (Date().timeIntervalSince1970 * 1000).rounded(.down)
    return milliseconds > 0 ? UInt64(milliseconds) : 0
  }

  /// The Unix time in milliseconds of a version-7 UUID, or `nil` for another version.
  public static func milliseconds(of id: UUID) -> UInt64? {
    let bytes = id.uuid
    guard bytes.6 >> 4 == 7, bytes.8 >> 6 == 0b10 else { return nil }
    return [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5].reduce(0) { $0 << 8 | UInt64($1) }
  }

  private mutating func start(at milliseconds: UInt64, using random: inout some RandomNumberGenerator) {
    lastMilliseconds = milliseconds
    let bits = random.next()
    // The top bit of the counter is left clear: room to count on within the millisecond.
    high = (bits >> 53) & (Self.highMask >> 1)
    low = random.next() & Self.lowMask
    started = true
  }

  private static func layout(milliseconds: UInt64, high: UInt64, low: UInt64) -> UUID {
    let first = milliseconds << 16 | 0x7000 | high
    let second = 0x8000_0000_0000_0000 | low
    let bytes = (first.bigEndian, second.bigEndian)
    return UUID(uuid: unsafeBitCast(bytes, to: uuid_t.self))
  }
}

/// The process's generator behind ``UUID/version7()``.
private let sharedVersion7Generator = Mutex(UUIDv7Generator())

extension UUID {
  /// A new UUID of version 7 (RFC 9562): the current Unix time in milliseconds, then random bits.
  ///
  /// IDs made in one process increase: within a millisecond, across threads, and when the system
  /// clock steps back (`UUIDv7Generator`). Event IDs and the IDs of new bookings are made this
  /// way, so that the ID index and the by-ID tables take new keys near their ends instead of at
  /// random pages.
  /// - Complexity: O(1); one lock, two reads of the system's random generator.
  public static func version7() -> UUID {
    var random = SystemRandomNumberGenerator()
    let now = UUIDv7Generator.currentMilliseconds()
    return sharedVersion7Generator.withLock { $0.next(milliseconds: now, using: &random) }
  }
}
