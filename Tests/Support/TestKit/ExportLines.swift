/// What an export holds but its manifest (its last line, which names the time of the export and
/// the device it came from): the part that `import` then `export` gives back byte for byte.
public func exportedEvents(_ text: String) -> String {
  var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  if lines.last == "" { lines.removeLast() }
  if let last = lines.last, last.hasPrefix(#"{"manifest":"#) { lines.removeLast() }
  return lines.map { $0 + "\n" }.joined()
}
