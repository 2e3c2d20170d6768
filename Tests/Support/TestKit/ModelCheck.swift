import Foundation

/// How the model checks run: quick in CI, long with `EVENTLOG_FULL=1`, and one seed again with
/// `EVENTLOG_SEED=N`, which their failure messages name.
public enum ModelCheck {
  /// Whether `EVENTLOG_FULL=1` is set.
  public static let full = ProcessInfo.processInfo.environment["EVENTLOG_FULL"] == "1"

  /// `EVENTLOG_SEED` alone when it is set, else `count` random seeds below one million.
  public static func randomSeeds(count: Int) -> [UInt64] {
    if let seed = chosenSeed { return [seed] }
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in generator.next() % 1_000_000 }
  }

  /// `EVENTLOG_SEED` alone when it is set, else `seeds`.
  public static func seeds(_ seeds: [UInt64]) -> [UInt64] { chosenSeed.map { [$0] } ?? seeds }

  private static var chosenSeed: UInt64? {
    ProcessInfo.processInfo.environment["EVENTLOG_SEED"].flatMap { UInt64($0) }
  }

  /// What one run of a model check did, for its failure message.
  public final class Trace: CustomStringConvertible, @unchecked Sendable {
    // @unchecked Sendable: appended to by one test on one task at a time.
    /// The run's seed.
    public let seed: UInt64
    /// Its steps so far.
    public var steps: [String] = []

    /// A trace of the run with `seed`.
    public init(seed: UInt64) { self.seed = seed }

    /// The seed, how to replay it, and the last 25 steps.
    public var description: String {
      "seed \(seed) (EVENTLOG_SEED=\(seed) replays it); last steps:\n  "
        + steps.suffix(25).joined(separator: "\n  ")
    }
  }
}
