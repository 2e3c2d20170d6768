/// One projection table held in memory, as replay builds it.
final class MemoryTable {
  /// A key whose hash covers its bytes in one pass (`[UInt8]`'s own hash feeds the hasher one
  /// byte at a time, which dominated replay's profile).
  struct Key: Hashable {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
      bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
  }

  let name: String
  var entries: [Key: [UInt8]] = [:]

  init(name: String) { self.name = name }

  /// The entries in LMDB's key order (bytewise, shorter first on a common prefix).
  /// - Complexity: O(n log n).
  func sortedEntries() -> [(key: [UInt8], value: [UInt8])] {
    entries.map { (key: $0.key.bytes, value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
  }
}
