/// Rows of fixed-width columns, written one at a time: a long listing (`log`) prints its header
/// once and every line in the same columns, however many there are and whatever is in them.
///
/// A cell longer than its column is cut, ending in `…`; the last column takes what is left; a
/// column of negative width is left out (a column only some listings show).
struct FixedColumns: Sendable {
  /// A column: its header, its width in characters, and whether it aligns right (numbers).
  struct Column: Sendable {
    var header: String
    var width: Int
    var rightAligned = false
  }

  let columns: [Column]

  /// The header line.
  var header: String { line(columns.map(\.header)) }

  /// One row: `cells` in the columns (control characters escaped, as every table shows them).
  func line(_ cells: [String]) -> String {
    var text = ""
    for (index, column) in columns.enumerated() where column.width >= 0 {
      var cell = index < cells.count ? Table.singleLine(cells[index]) : ""
      let isLast = index == columns.count - 1
      if !isLast && cell.count > column.width { cell = String(cell.prefix(max(0, column.width - 1))) + "…" }
      let padding = String(repeating: " ", count: max(0, column.width - cell.count))
      if isLast {
        text += column.rightAligned ? padding + cell : cell
      } else {
        text += (column.rightAligned ? padding + cell : cell + padding) + "  "
      }
    }
    return text
  }
}
