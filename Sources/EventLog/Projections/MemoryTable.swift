/// One projection table held in memory, as replay builds it.
final class MemoryTable {
  var entries: [[UInt8]: [UInt8]] = [:]

  /// The entries in LMDB's key order (bytewise, shorter first on a common prefix).
  /// - Complexity: O(n log n).
  func sortedEntries() -> [(key: [UInt8], value: [UInt8])] {
    entries.map { (key: $0.key, value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
  }
}
