/// A plain-text table with aligned columns, for human output.
public struct Table: Sendable {
  /// The column headers.
  public var headers: [String]
  /// The rows; each has as many cells as there are headers.
  public var rows: [[String]] = []
  /// The columns to align right (numbers).
  public var rightAligned: Set<Int> = []

  /// Creates an empty table with `headers`.
  public init(_ headers: [String], rightAligned: Set<Int> = []) {
    self.headers = headers
    self.rightAligned = rightAligned
  }

  /// Adds a row.
  public mutating func append(_ row: [String]) { rows.append(row) }

  /// The table as lines joined by newlines, with a trailing newline.
  public func rendered() -> String {
    let cells = [headers] + rows.map { row in row.map(Self.singleLine) }
    var widths = [Int](repeating: 0, count: headers.count)
    for row in cells {
      for (index, cell) in row.enumerated() where index < widths.count {
        widths[index] = max(widths[index], cell.count)
      }
    }
    var output = ""
    for row in cells {
      var line = ""
      for (index, cell) in row.enumerated() where index < widths.count {
        let padding = String(repeating: " ", count: widths[index] - cell.count)
        let isLast = index == widths.count - 1
        line += rightAligned.contains(index) ? padding + cell : (isLast ? cell : cell + padding)
        if !isLast { line += "  " }
      }
      output += line + "\n"
    }
    return output
  }

  /// Control characters (newlines, tabs, escapes) would break the alignment and could spoof the
  /// terminal, and so could C1 controls, separators and bidirectional overrides: show them
  /// escaped (``TerminalText/escaped(_:)``).
  static func singleLine(_ text: String) -> String { TerminalText.escaped(text) }
}
