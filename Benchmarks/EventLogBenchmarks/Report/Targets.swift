import Foundation

/// One target of issues 15 and 17, evaluated on a run's results; or, without a threshold, a ratio
/// shown with the reason it has no target.
struct TargetCheck: Codable, Sendable {
  var workload: String
  var size: Int
  /// The target as the issue states it.
  var target: String
  /// The measured value (a ratio, a rate or an exponent).
  var value: Double
  /// `nil`: shown only (see `note`).
  var threshold: Double?
  /// `true`: the value must be at least the threshold; `false`: at most.
  var atLeast: Bool
  /// `nil` when there is no threshold.
  var met: Bool?
  /// Why a ratio is shown without a target.
  var note: String?

  init(
    _ workload: Workload, size: Int, _ target: String, value: Double, threshold: Double?,
    atLeast: Bool = true, note: String? = nil
  ) {
    self.workload = workload.rawValue
    self.size = size
    self.target = target
    self.value = value
    self.threshold = threshold
    self.atLeast = atLeast
    met = threshold.map { atLeast ? value >= $0 : value <= $0 }
    self.note = note
  }

  var line: String {
    let shown = target.contains("events/s") ? Format.rate(value) : String(format: "%.2f", value)
    guard let threshold, let met else { return "shown  \(target): \(shown) (\(note ?? "no target"))" }
    let limit = target.contains("events/s") ? Format.rate(threshold) : Format.significant(threshold)
    return "\(met ? "met   " : "MISSED") \(target): \(shown) (target \(atLeast ? "≥" : "≤") \(limit))"
  }
}

/// `append.batched` at a commit size other than GUIDE's 1000 against `append.single` of the same
/// system: how much one commit of `batchSize` events gains over as many single commits. At 8 per
/// commit this is the ceiling of a group commit of 8 appenders on the machine's disk, with no
/// waiting and no hand-over.
struct BatchComparison: Codable, Sendable {
  var system: String
  var batchSize: Int
  /// The events of the `append.batched` and `append.single` runs compared.
  var batchedSize: Int
  var singleSize: Int
  /// The batched rate over the single rate.
  var ratio: Double

  var line: String {
    let sizes =
      batchedSize == singleSize
      ? ""
      : " (batched at \(Format.count(batchedSize)) events, single at \(Format.count(singleSize)): see --size)"
    return "\(system): \(String(format: "%.2f", ratio))× its append.single rate" + sizes
  }

  static func evaluate(_ results: [Measurement], batchSize: Int) -> [BatchComparison] {
    guard batchSize != Scale.guideBatchSize, let batchedSize = results.sizes(of: .appendBatched).last,
      let singleSize = results.sizes(of: .appendSingle).last
    else { return [] }
    return SystemID.allCases.compactMap { system in
      guard let batched = results.result(.appendBatched, system, size: batchedSize),
        let single = results.result(.appendSingle, system, size: singleSize)
      else { return nil }
      return BatchComparison(
        system: system.rawValue, batchSize: batchSize, batchedSize: batchedSize, singleSize: singleSize,
        ratio: batched.opsPerSecond / single.opsPerSecond)
    }
  }
}

/// The targets of issues 15 and 17, evaluated at the largest size measured (sync.diff: at 100,000
/// restaurants when measured). The batched targets are stated for GUIDE's 1000 events per commit
/// and are not checked at another `batchSize`; nor is pull's against `append.batched`, whose
/// 1000-event commits it matches with its 1000-event pages. Replay's targets hold on CPU time per
/// event as well as on the wall-clock rate: on two shared cores, a neighbour slows a two-thread
/// replay more than a one-thread baseline, and CPU time says what the code costs.
enum Targets {
  /// The size of issue 17's "a first pull of 100k events finishes in well under a minute".
  static let firstPullSize = 100_000

  /// Why `eventlog-https`'s ratios have no target, shown beside them.
  static let httpsNote =
    "shown, no target: measured and stated; HTTP on loopback to the PostgREST stand-in, in this process"

  /// Why `append.single` has no target against SQLite, shown beside the ratio.
  static let singleAgainstSQLite =
    "shown, no target: a SQLite WAL commit is one fsync, an LMDB commit two (data pages, then the meta page)"

  static func evaluate(_ results: [Measurement], batchSize: Int = Scale.guideBatchSize) -> [TargetCheck] {
    var checks: [TargetCheck] = []
    func rate(_ workload: Workload, _ system: SystemID, _ size: Int) -> Double? {
      results.result(workload, system, size: size)?.opsPerSecond
    }
    func cpu(_ workload: Workload, _ system: SystemID, _ size: Int) -> Double? {
      results.result(workload, system, size: size)?.cpuSecondsPerOperation
    }
    func versus(_ workload: Workload, _ other: SystemID, _ threshold: Double?, note: String? = nil) {
      guard let size = results.sizes(of: workload).last, let ours = rate(workload, .eventlog, size),
        let theirs = rate(workload, other, size)
      else { return }
      let name =
        threshold.map { "eventlog ≥ \(Format.significant($0))× \(other.rawValue)" }
        ?? "eventlog ÷ \(other.rawValue)"
      checks.append(
        TargetCheck(workload, size: size, name, value: ours / theirs, threshold: threshold, note: note))
    }
    /// The same ratio on CPU time per operation: the other's CPU per operation over ours.
    func versusOnCPU(_ workload: Workload, _ other: SystemID, _ threshold: Double) {
      guard let size = results.sizes(of: workload).last, let ours = cpu(workload, .eventlog, size),
        let theirs = cpu(workload, other, size), ours > 0
      else { return }
      checks.append(
        TargetCheck(
          workload, size: size, "eventlog ≥ \(Format.significant(threshold))× \(other.rawValue) on CPU time",
          value: theirs / ours, threshold: threshold))
    }

    /// `eventlog-https` against `other`, on the wall rate and on CPU time: shown, no target.
    func https(_ workload: Workload, _ other: SystemID) {
      guard let size = results.sizes(of: workload).last,
        let ours = results.result(workload, .eventlogHTTPS, size: size),
        let theirs = results.result(workload, other, size: size)
      else { return }
      let name = "\(SystemID.eventlogHTTPS.rawValue) ÷ \(other.rawValue)"
      checks.append(
        TargetCheck(
          workload, size: size, name, value: ours.opsPerSecond / theirs.opsPerSecond, threshold: nil,
          note: httpsNote))
      if ours.cpuSecondsPerOperation > 0 {
        checks.append(
          TargetCheck(
            workload, size: size, name + " on CPU time",
            value: theirs.cpuSecondsPerOperation / ours.cpuSecondsPerOperation, threshold: nil,
            note: httpsNote))
      }
    }

    if batchSize == Scale.guideBatchSize {
      versus(.appendBatched, .sqlite, 1.5)
      versus(.appendBatched, .lmdbRaw, 0.7)
    }
    versus(.appendSingle, .lmdbRaw, 0.9)
    versus(.appendSingle, .sqlite, nil, note: singleAgainstSQLite)
    if let size = results.sizes(of: .appendConcurrent).last,
      let concurrent = rate(.appendConcurrent, .eventlog, size),
      let singleSize = results.sizes(of: .appendSingle).last,
      let single = rate(.appendSingle, .eventlog, singleSize)
    {
      checks.append(
        TargetCheck(
          .appendConcurrent, size: size, "eventlog ≥ 3.5× its own append.single rate",
          value: concurrent / single, threshold: 3.5))
    }
    versus(.appendConcurrent, .sqlite, 2)
    versus(.replay, .sqlite, 1)
    versusOnCPU(.replay, .sqlite, 1)
    versus(.replay, .lmdbRaw, 0.6)
    versusOnCPU(.replay, .lmdbRaw, 0.6)
    let replaySizes = results.sizes(of: .replay)
    if let size = replaySizes.last, let ours = results.result(.replay, .eventlog, size: size) {
      checks.append(
        TargetCheck(.replay, size: size, "eventlog ≥ 2 M events/s", value: ours.opsPerSecond, threshold: 2e6))
      if ours.cpuSecondsPerOperation > 0 {
        checks.append(
          TargetCheck(
            .replay, size: size, "eventlog ≥ 2 M events/s on CPU time (events per CPU second)",
            value: 1 / ours.cpuSecondsPerOperation, threshold: 2e6))
      }
    }
    if replaySizes.count >= 2,
      let large = results.result(.replay, .eventlog, size: replaySizes[replaySizes.count - 1]),
      let small = results.result(.replay, .eventlog, size: replaySizes[replaySizes.count - 2])
    {
      checks.append(
        TargetCheck(
          .replay, size: large.size,
          "eventlog peak heap flat as the log grows \(large.size / max(1, small.size))× (peak ratio)",
          value: Double(large.peakAnonBytes) / Double(max(1, small.peakAnonBytes)), threshold: 1.5,
          atLeast: false))
    }
    let syncSizes = results.sizes(of: .syncDiff)
    let sqliteSize = syncSizes.contains(100_000) ? 100_000 : syncSizes.last
    if let size = sqliteSize, let ours = rate(.syncDiff, .eventlog, size),
      let theirs = rate(.syncDiff, .sqlite, size)
    {
      checks.append(
        TargetCheck(
          .syncDiff, size: size, "eventlog ≥ 2.5× sqlite at \(Format.count(size))", value: ours / theirs,
          threshold: 2.5))
    }
    if syncSizes.count >= 2, let exponent = growthExponent(results, .syncDiff, .eventlog, syncSizes) {
      checks.append(
        TargetCheck(
          .syncDiff, size: syncSizes[syncSizes.count - 1],
          "eventlog linear in R (time ∝ R^k between the two largest sizes: k)", value: exponent,
          threshold: 1.2,
          atLeast: false))
    }
    versus(.readAll, .lmdbRaw, 0.5)
    versus(.readAll, .sqlite, 2)
    versus(.replicatePush, .libpqRaw, 0.5)
    versus(.replicatePull, .libpqRaw, 0.5)
    for workload in [Workload.replicatePush, .replicatePull] {
      for other in [SystemID.libpqRaw, .eventlog] { https(workload, other) }
    }
    if batchSize == Scale.guideBatchSize, let size = results.sizes(of: .replicatePull).last,
      let pull = rate(.replicatePull, .eventlog, size),
      let batchedSize = results.sizes(of: .appendBatched).last,
      let batched = rate(.appendBatched, .eventlog, batchedSize)
    {
      checks.append(
        TargetCheck(
          .replicatePull, size: size,
          "eventlog ≥ 0.8× eventlog's append.batched rate (1000 events a page, 1000 a commit; batched at "
            + "\(Format.count(batchedSize)))",
          value: pull / batched, threshold: 0.8))
    }
    if let first = results.result(.replicatePull, .eventlog, size: firstPullSize) {
      checks.append(
        TargetCheck(
          .replicatePull, size: first.size,
          "eventlog's first pull of \(Format.count(firstPullSize)) events, seconds (well under a minute: ≤ 30)",
          value: first.seconds, threshold: 30, atLeast: false))
    }
    return checks
  }

  /// k in time ∝ size^k between the two largest sizes.
  static func growthExponent(
    _ results: [Measurement], _ workload: Workload, _ system: SystemID, _ sizes: [Int]
  ) -> Double? {
    guard sizes.count >= 2, let large = results.result(workload, system, size: sizes[sizes.count - 1]),
      let small = results.result(workload, system, size: sizes[sizes.count - 2])
    else { return nil }
    return log(large.seconds / small.seconds) / log(Double(large.size) / Double(small.size))
  }
}
