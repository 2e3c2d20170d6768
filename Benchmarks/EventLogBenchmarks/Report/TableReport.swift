/// The table on standard output: per workload and size, each system's rate, spread, ratios to
/// eventlog and to lmdb-append, memory; then the targets, met or missed.
enum TableReport {
  static func render(
    _ results: [Measurement], failures: [FailedMeasurement], targets: [TargetCheck],
    comparisons: [BatchComparison] = [], environment: BenchmarkEnvironment
  ) -> String {
    var lines: [String] = []
    lines.append(
      "eventlog-benchmarks (\(environment.mode), \(environment.buildConfiguration)) — \(environment.cpuModel), "
        + "\(environment.cores) cores, \(Format.bytes(Int(environment.memoryBytes))), \(environment.os)")
    lines.append(
      "\(environment.swiftVersion); SQLite \(environment.sqliteVersion); \(environment.lmdbVersion); libpq "
        + "\(environment.libpqVersion)"
        + (environment.postgresVersion.map { "; server \($0), fsync off (replicate.*)" } ?? ""))
    lines.append(
      "load average \(environment.loadAverageAtStart) at start, \(environment.loadAverageAtEnd) at end")
    let header =
      Format.padded("system", 15) + Format.padded("rate/s", 11, right: true)
      + Format.padded("spread (min–max)", 22, right: true)
      + Format.padded("×eventlog", 11, right: true) + Format.padded("×lmdb-append", 14, right: true)
      + Format.padded("median", 11, right: true) + Format.padded("CPU/op", 10, right: true)
      + Format.padded("CPU spread", 20, right: true) + Format.padded("×ev CPU", 9, right: true)
      + Format.padded("peak RSS", 11, right: true)
      + Format.padded("peak heap", 11, right: true) + Format.padded("runs", 6, right: true)
    for workload in Workload.allCases {
      for size in results.sizes(of: workload) {
        let rows = results.filter { $0.workload == workload.rawValue && $0.size == size }
        guard !rows.isEmpty else { continue }
        lines.append("")
        lines.append("\(workload.rawValue) @ \(Format.count(size)) \(workload.unit) — \(workload.summary)")
        lines.append("  " + header)
        for row in rows {
          let spread =
            "\(Format.rate(row.spread.minOpsPerSecond)) – \(Format.rate(row.spread.maxOpsPerSecond))"
          lines.append(
            "  " + Format.padded(row.system, 15)
              + Format.padded(Format.rate(row.opsPerSecond), 11, right: true)
              + Format.padded(spread, 22, right: true)
              + Format.padded(Format.ratio(row.ratioToEventlog), 11, right: true)
              + Format.padded(Format.ratio(row.ratioToLMDBAppend), 14, right: true)
              + Format.padded(Format.seconds(row.seconds), 11, right: true)
              + Format.padded(Format.duration(row.cpuSecondsPerOperation), 10, right: true)
              + Format.padded(
                "\(Format.duration(row.cpuSpread.minSecondsPerOperation)) – \(Format.duration(row.cpuSpread.maxSecondsPerOperation))",
                20, right: true)
              + Format.padded(Format.ratio(row.cpuRatioToEventlog), 9, right: true)
              + Format.padded(Format.bytes(row.peakRSSBytes), 11, right: true)
              + Format.padded(Format.bytes(row.peakAnonBytes), 11, right: true)
              + Format.padded(row.warmups > 0 ? "\(row.runs)" : "\(row.runs)*", 6, right: true))
        }
        let server = rows.compactMap { row in
          row.serverCPUSecondsPerOperation.map { "\(row.system) \(Format.duration($0))" }
        }
        if !server.isEmpty {
          lines.append(
            "  of CPU/op, the PostgreSQL server's backends (fsync off): " + server.joined(separator: ", "))
        }
        for failure in OutcomeCheck.disagreements(rows) {
          lines.append("  FAILED: \(failure.error)")
        }
      }
    }
    if results.contains(where: { $0.warmups == 0 }) {
      lines.append("")
      lines.append("* no warm-up (O(R²) seed at its largest size, measured once)")
    }
    lines.append("")
    lines.append("×eventlog = this system's rate / eventlog's rate (above 1: faster than eventlog).")
    lines.append(
      "CPU/op = the child's CPU time (user + system, all its threads) per operation, median run; "
        + "×ev CPU = eventlog's CPU/op / this system's (above 1: cheaper than eventlog).")
    lines.append("")
    lines.append("Targets (Docs/Benchmarks.md, \"Targets\"):")
    for check in targets {
      lines.append("  [\(check.workload) @ \(Format.count(check.size))] " + check.line)
    }
    if let size = environment.sizeOverride {
      lines.append(
        "  (every workload ran at \(Format.count(size)) (--size): the targets are stated for the default sizes)"
      )
    }
    if environment.idVersion != FixtureIDs.Version.timeOrdered.rawValue {
      lines.append(
        "  (the fixtures' event and booking IDs were version \(environment.idVersion) (--ids), not the library's version 7)"
      )
    }
    if environment.batchSize != Scale.guideBatchSize {
      lines.append(
        "  (append.batched ran at \(environment.batchSize) events per commit: its targets, stated for "
          + "\(Scale.guideBatchSize), are not checked)")
    }
    if let first = comparisons.first {
      lines.append("")
      lines.append("append.batched at \(first.batchSize) per commit against append.single, same system:")
      for comparison in comparisons { lines.append("  " + comparison.line) }
    }
    for failure in failures {
      lines.append(
        "FAILED \(failure.workload) \(failure.system) \(Format.count(failure.size)): \(failure.error)")
    }
    return lines.joined(separator: "\n")
  }
}
