import EventLog
import Foundation

/// The event and booking IDs of the fixtures: version 7, as the library makes them
/// (``UUIDv7Generator``, `UUID.version7()`), from a simulated clock and a seeded generator, so that
/// every system and every child process gets the same IDs. `--ids 4` makes them random
/// (version 4) instead, as the library made them before, to measure what the order buys.
///
/// The simulated clock starts at 2026-05-28 (the fixtures' `createdAt`) and moves one
/// millisecond every eight IDs, so IDs come both within a millisecond and across them.
struct FixtureIDs {
  /// Which kind of ID the fixtures use.
  enum Version: Int, Codable, Sendable {
    /// Random (RFC 9562 version 4): what the library made before issue 15.
    case random = 4
    /// Time-ordered (version 7): what the library makes.
    case timeOrdered = 7
  }

  /// The kind of ID of this process's fixtures: set by ``ChildMain`` from the request, before any
  /// fixture is made.
  // nonisolated(unsafe): written once, at the start of a child process, before any task or thread
  // that reads it exists (ChildMain.run); only read afterwards.
  nonisolated(unsafe) static var version = Version.timeOrdered

  private var generator = UUIDv7Generator()
  private var random: SplitMix64
  private var milliseconds: UInt64 = 1_780_000_000_000
  private var made = 0

  /// A sequence of IDs; each seed gives its own.
  init(seed: UInt64) { random = SplitMix64(seed: seed ^ 0x1D5) }

  /// An ID made now, as the library makes it (`UUID.version7()`, the system clock), or a random
  /// one under `--ids 4`: for events a measured run creates, like eventlog's `refresh()` does.
  static func now() -> UUID {
    version == .random ? UUID() : UUID.version7()
  }

  /// The next ID.
  mutating func next() -> UUID {
    switch Self.version {
    case .random:
      return random.uuid()
    case .timeOrdered:
      made += 1
      if made % 8 == 0 { milliseconds += 1 }
      return generator.next(milliseconds: milliseconds, using: &random)
    }
  }
}
