import Foundation

/// Number formatting for the table, the progress lines and the chart.
enum Format {
  /// 1,000 → "1k", 1,000,000 → "1M".
  static func count(_ value: Int) -> String {
    if value >= 1_000_000 && value % 1_000_000 == 0 { return "\(value / 1_000_000)M" }
    if value >= 1_000 && value % 1_000 == 0 { return "\(value / 1_000)k" }
    return "\(value)"
  }

  /// A rate with three significant digits and a k/M suffix.
  static func rate(_ value: Double) -> String {
    if value >= 1e6 { return significant(value / 1e6) + " M" }
    if value >= 1e3 { return significant(value / 1e3) + " k" }
    return significant(value)
  }

  static func significant(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
  }

  static func ratio(_ value: Double?) -> String {
    guard let value else { return "—" }
    if value >= 100 { return String(format: "%.0f×", value) }
    if value >= 10 { return String(format: "%.1f×", value) }
    if value >= 0.01 { return String(format: "%.2f×", value) }
    return String(format: "%.4f×", value)
  }

  static func bytes(_ value: Int) -> String {
    let mib = Double(value) / 1_048_576
    if mib >= 1024 { return String(format: "%.2f GiB", mib / 1024) }
    if mib >= 100 { return String(format: "%.0f MiB", mib) }
    return String(format: "%.1f MiB", mib)
  }

  static func seconds(_ value: Double) -> String {
    if value >= 1 { return String(format: "%.2f s", value) }
    if value >= 1e-3 { return String(format: "%.1f ms", value * 1e3) }
    return String(format: "%.0f µs", value * 1e6)
  }

  /// A short duration with three significant digits, down to nanoseconds (CPU time per operation).
  static func duration(_ value: Double) -> String {
    if value >= 1 { return significant(value) + " s" }
    if value >= 1e-3 { return significant(value * 1e3) + " ms" }
    if value >= 1e-6 { return significant(value * 1e6) + " µs" }
    return significant(value * 1e9) + " ns"
  }

  static func padded(_ text: String, _ width: Int, right: Bool = false) -> String {
    let count = text.count
    guard count < width else { return text }
    let padding = String(repeating: " ", count: width - count)
    return right ? padding + text : text + padding
  }
}

/// Standard error, for progress and warnings (standard output carries the table or, in a child,
/// the report).
enum Console {
  static func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
