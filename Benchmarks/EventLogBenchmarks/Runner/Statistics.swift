/// The median and the spread of a run's measurements.
struct Summary: Sendable {
  var median: Double
  var minimum: Double
  var maximum: Double

  init(_ values: [Double]) {
    precondition(!values.isEmpty, "no values to summarise")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    minimum = sorted[0]
    maximum = sorted[sorted.count - 1]
  }
}
