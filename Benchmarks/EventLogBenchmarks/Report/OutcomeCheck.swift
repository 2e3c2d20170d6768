/// The parent's check that the systems of a workload did the same work: at each size, every
/// field of the outcome line (`key=value …`: counts, a ``ReadModelFingerprint``) that more than
/// one system reports must have one value. A system may report fewer fields (`lmdb-append` keeps
/// no read model, so its append outcome has no `bookings=`).
enum OutcomeCheck {
  /// The fields of an outcome line, in order.
  static func fields(of check: String) -> [(key: Substring, value: Substring)] {
    check.split(separator: " ").compactMap { field in
      guard let equals = field.firstIndex(of: "=") else { return nil }
      return (field[..<equals], field[field.index(after: equals)...])
    }
  }

  /// One failure for each (workload, size, field) on which the systems disagree.
  static func disagreements(_ results: [Measurement]) -> [FailedMeasurement] {
    var failures: [FailedMeasurement] = []
    for workload in Workload.allCases {
      for size in results.sizes(of: workload) {
        let rows = results.filter { $0.workload == workload.rawValue && $0.size == size }
        var keys: [Substring] = []
        var values: [Substring: [(system: String, value: Substring)]] = [:]
        for row in rows {
          for (key, value) in fields(of: row.check) {
            if values[key] == nil { keys.append(key) }
            values[key, default: []].append((row.system, value))
          }
        }
        for key in keys {
          guard let reported = values[key], Set(reported.map(\.value)).count > 1 else { continue }
          failures.append(
            FailedMeasurement(
              workload: workload.rawValue, system: reported.map(\.system).joined(separator: ","), size: size,
              error: "the systems disagree on \(key): "
                + reported.map { "\($0.system) \($0.value)" }.joined(separator: ", ")))
        }
      }
    }
    return failures
  }
}
