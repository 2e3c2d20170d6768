/// How much work each workload does: `--quick` (under two minutes on 2 cores) or the default
/// (under fifteen).
struct Scale: Sendable {
  var name: String
  var warmups = 1
  var runs: Int
  var batchedEvents: Int
  /// Events per durable commit in `append.batched` (GUIDE 3.3: 1000; `--batch-size`).
  var batchSize = Scale.guideBatchSize
  /// Events of `append.single`: as many as `append.concurrent`'s, so that one appender and eight
  /// fill the same log. A durable commit costs more as the log's B-trees grow (eventlog's single
  /// appends: 3.30 k events/s at 1,000 events against 3.05 k at 4,000, means of three alternating
  /// runs), and the target compares the two rates.
  var singleEvents: Int
  /// Events of `append.concurrent` in all (spread over 8 tasks).
  var concurrentEvents: Int
  var replaySizes: [Int]
  var syncSizes: [Int]
  var readRows: Int
  /// Events of `replicate.push` and `replicate.pull`.
  var replicateEvents: Int
  /// Events of the `audit.query` log.
  var auditEvents: Int
  /// `seed` at this many restaurants or more (O(R²)) runs once, without warm-up.
  var seedSingleRunFrom: Int
  /// When set (`--size`), every workload runs at this size only.
  var sizeOverride: Int?
  /// The fixtures' kind of event and booking ID (`--ids`).
  var ids = FixtureIDs.Version.timeOrdered

  /// `append.batched`'s commit size in GUIDE 3.3, which its targets are stated for.
  static let guideBatchSize = 1000

  static let quick = Scale(
    name: "quick", runs: 3, batchedEvents: 20_000, singleEvents: 1_600, concurrentEvents: 1_600,
    replaySizes: [1_000, 10_000, 100_000], syncSizes: [1_000, 10_000, 100_000], readRows: 50_000,
    replicateEvents: 20_000, auditEvents: 100_000,
    seedSingleRunFrom: 1_000_000)

  static let standard = Scale(
    name: "default", runs: 5, batchedEvents: 100_000, singleEvents: 4_000, concurrentEvents: 4_000,
    replaySizes: [10_000, 100_000, 1_000_000], syncSizes: [1_000, 10_000, 100_000], readRows: 250_000,
    replicateEvents: 100_000, auditEvents: 1_000_000,
    seedSingleRunFrom: 1_000_000)

  func sizes(for workload: Workload) -> [Int] {
    if let sizeOverride { return [sizeOverride] }
    return switch workload {
    case .appendBatched: [batchedEvents]
    case .appendSingle: [singleEvents]
    case .appendConcurrent: [concurrentEvents]
    case .replay: replaySizes
    case .syncDiff: syncSizes
    case .readAll: [readRows]
    case .replicatePush, .replicatePull: [replicateEvents]
    case .auditQuery: [auditEvents]
    }
  }

  /// Warm-ups and measured runs of one measurement.
  func repetitions(_ workload: Workload, _ system: SystemID, size: Int) -> (warmups: Int, runs: Int) {
    if system == .seed && size >= seedSingleRunFrom { return (0, 1) }
    return (warmups, runs)
  }
}
