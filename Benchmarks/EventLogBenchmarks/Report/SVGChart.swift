import Foundation

/// The `--svg` chart: for each workload and size, one horizontal bar per system, its rate relative
/// to eventlog's on a logarithmic axis (eventlog = 1×: bars to the right are faster than
/// eventlog, to the left slower). Hand-written SVG, no dependency.
enum SVGChart {
  static let colors: [String: String] = [
    "lmdb-raw": "#1f77b4", "lmdb-append": "#7f7f7f", "sqlite": "#d62728", "seed": "#ff7f0e",
    "libpq-raw": "#2ca02c", "eventlog-https": "#9467bd",
  ]

  static func render(_ results: [Measurement], environment: BenchmarkEnvironment) -> String {
    struct Bar {
      var label: String
      var system: String
      var ratio: Double
    }
    var groups: [(title: String, bars: [Bar])] = []
    for workload in Workload.allCases {
      for size in results.sizes(of: workload) {
        let bars = results.filter {
          $0.workload == workload.rawValue && $0.size == size && $0.system != SystemID.eventlog.rawValue
        }
        .compactMap { row in row.ratioToEventlog.map { Bar(label: row.system, system: row.system, ratio: $0) }
        }
        if !bars.isEmpty { groups.append(("\(workload.rawValue) @ \(Format.count(size))", bars)) }
      }
    }
    let ratios = groups.flatMap { $0.bars.map(\.ratio) }.filter { $0 > 0 }
    let low = floor(log10(min(ratios.min() ?? 0.1, 0.1)))
    let high = ceil(log10(max(ratios.max() ?? 10, 10)))
    let left = 250.0
    let plotWidth = 620.0
    let barHeight = 16.0
    let groupGap = 14.0
    let top = 70.0
    func x(_ ratio: Double) -> Double { left + (log10(ratio) - low) / (high - low) * plotWidth }
    let rowCount = Double(groups.reduce(0) { $0 + $1.bars.count })
    let height = top + rowCount * (barHeight + 4) + Double(groups.count) * groupGap + 60
    let width = left + plotWidth + 40
    var svg: [String] = []
    svg.append(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
        + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">"
    )
    svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")
    svg.append(
      "<text x=\"\(Int(width / 2))\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">"
        + "Rate relative to eventlog (log scale; right of 1× = faster than eventlog)</text>")
    svg.append(
      "<text x=\"\(Int(width / 2))\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">"
        + escape(
          "\(environment.mode) run, \(environment.date), \(environment.cpuModel), \(environment.cores) cores")
        + "</text>")
    let axisBottom = height - 40
    var decade = low
    while decade <= high {
      let position = x(pow(10, decade))
      let label = decade >= 0 ? "\(Int(pow(10, decade)))×" : String(format: "%g×", pow(10, decade))
      svg.append(
        "<line x1=\"\(f(position))\" y1=\"\(f(top - 10))\" x2=\"\(f(position))\" y2=\"\(f(axisBottom))\" "
          + "stroke=\"\(decade == 0 ? "#000" : "#ddd")\" stroke-width=\"\(decade == 0 ? 1.5 : 1)\"/>")
      svg.append(
        "<text x=\"\(f(position))\" y=\"\(f(axisBottom + 16))\" text-anchor=\"middle\">\(escape(label))</text>"
      )
      decade += 1
    }
    svg.append(
      "<text x=\"\(f(x(1)))\" y=\"\(f(top - 14))\" text-anchor=\"middle\" font-weight=\"bold\">eventlog</text>"
    )
    var y = top
    for group in groups {
      svg.append(
        "<text x=\"8\" y=\"\(f(y + barHeight - 3))\" font-weight=\"bold\">\(escape(group.title))</text>")
      for bar in group.bars {
        let start = x(1)
        let end = x(max(bar.ratio, pow(10, low)))
        let color = colors[bar.system] ?? "#9467bd"
        svg.append(
          "<text x=\"\(f(left - 8))\" y=\"\(f(y + barHeight - 3))\" text-anchor=\"end\">\(escape(bar.label))</text>"
        )
        svg.append(
          "<rect x=\"\(f(min(start, end)))\" y=\"\(f(y))\" width=\"\(f(max(1, abs(end - start))))\" height=\"\(f(barHeight))\" "
            + "fill=\"\(color)\"><title>\(escape("\(group.title) \(bar.system): \(Format.ratio(bar.ratio)) eventlog"))</title></rect>"
        )
        let textX = end >= start ? end + 4 : end - 4
        svg.append(
          "<text x=\"\(f(textX))\" y=\"\(f(y + barHeight - 3))\" text-anchor=\"\(end >= start ? "start" : "end")\" "
            + "fill=\"#333\">\(escape(Format.ratio(bar.ratio)))</text>")
        y += barHeight + 4
      }
      y += groupGap
    }
    svg.append("</svg>")
    return svg.joined(separator: "\n") + "\n"
  }

  private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

  private static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }
}
