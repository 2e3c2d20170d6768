/// One projection table held in memory, as replay builds it: a hash table from byte keys to byte
/// values.
///
/// Open addressing with linear probing over three parallel arrays (hash, key, value). Each slot
/// keeps its key's 64-bit hash, so probing compares hashes before bytes, and neither a deletion
/// (backward shift, no tombstones) nor a resize ever hashes a key again. `Dictionary<[UInt8], …>`
/// hashes every key with SipHash and rehashes the keys it shifts on every deletion; that was most
/// of replay's folding time.
///
/// The hash is seeded once per process at random, so keys chosen to collide cannot be prepared in
/// advance. The load factor stays at or below one half.
final class MemoryTable {
  let name: String
  /// The slots, in one stored property without dynamic exclusivity checks (each costs a
  /// `swift_beginAccess` call). Unchecked is safe: every access is one call of a method below,
  /// which does not call back out except `withValue`, whose `body` must not change the table
  /// (``ProjectionState/withValue(forKey:in:_:)`` says so), and a table is used by one thread at a
  /// time (replay's folding thread, then its owner).
  @exclusivity(unchecked) private var storage = Storage()

  init(name: String) { self.name = name }

  /// The number of entries.
  var count: Int { storage.count }

  /// Makes room for `capacity` entries without growing.
  func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }

  /// The value stored under `key`, or `nil`.
  /// - Complexity: O(1) on average.
  func value(forKey key: [UInt8]) -> [UInt8]? { storage.value(forKey: key) }

  /// Calls `body` with the value stored under `key`, or returns `nil` when there is none.
  /// - Complexity: O(1) on average.
  func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
    try storage.withValue(forKey: key, body)
  }

  /// Stores `value` under `key`, replacing what was there.
  /// - Complexity: O(1) on average.
  func setValue(_ value: consuming [UInt8], forKey key: consuming [UInt8]) {
    storage.setValue(value, forKey: key)
  }

  /// Removes `key`.
  /// - Returns: whether it was there.
  /// - Complexity: O(1) on average.
  @discardableResult
  func removeValue(forKey key: [UInt8]) -> Bool { storage.removeValue(forKey: key) }

  /// The entries in LMDB's key order (bytewise, shorter first on a common prefix).
  /// - Complexity: O(n log n).
  func sortedEntries() -> [(key: [UInt8], value: [UInt8])] { storage.sortedEntries() }

  private struct Storage {
    /// Each slot's key hash with its lowest bit set; 0 marks an empty slot. The home slot of a
    /// hash is taken from its other bits.
    var hashes = [UInt64](repeating: 0, count: 16)
    var keys = [[UInt8]](repeating: [], count: 16)
    var values = [[UInt8]](repeating: [], count: 16)
    /// `hashes.count - 1`; the capacity is a power of two.
    var mask = 15
    var count = 0

    mutating func reserveCapacity(_ capacity: Int) {
      var slots = hashes.count
      while capacity * 2 > slots { slots *= 2 }
      if slots > hashes.count { resize(to: slots) }
    }

    func value(forKey key: [UInt8]) -> [UInt8]? {
      switch find(key, hash: MemoryTable.hash(key)) {
      case .found(let index): return values[index]
      case .vacant: return nil
      }
    }

    func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
      switch find(key, hash: MemoryTable.hash(key)) {
      case .found(let index): return try values[index].withUnsafeBytes(body)
      case .vacant: return nil
      }
    }

    mutating func setValue(_ value: consuming [UInt8], forKey key: consuming [UInt8]) {
      let hash = MemoryTable.hash(key)
      switch find(key, hash: hash) {
      case .found(let index):
        values[index] = value
      case .vacant(var index):
        if (count + 1) * 2 > hashes.count {
          resize(to: hashes.count * 2)
          guard case .vacant(let moved) = find(key, hash: hash) else { preconditionFailure("key appeared") }
          index = moved
        }
        hashes[index] = hash
        keys[index] = key
        values[index] = value
        count += 1
      }
    }

    mutating func removeValue(forKey key: [UInt8]) -> Bool {
      guard case .found(var hole) = find(key, hash: MemoryTable.hash(key)) else { return false }
      // Backward shift: pull each later member of the probe run into the hole, unless the hole
      // lies before that member's home slot (it would then be unreachable from its home).
      var next = (hole + 1) & mask
      while hashes[next] != 0 {
        let home = home(hashes[next])
        if (hole - home) & mask < (next - home) & mask {
          hashes[hole] = hashes[next]
          keys.swapAt(hole, next)
          values.swapAt(hole, next)
          hole = next
        }
        next = (next + 1) & mask
      }
      hashes[hole] = 0
      keys[hole] = []
      values[hole] = []
      count -= 1
      return true
    }

    func sortedEntries() -> [(key: [UInt8], value: [UInt8])] {
      var entries: [(key: [UInt8], value: [UInt8])] = []
      entries.reserveCapacity(count)
      for index in hashes.indices where hashes[index] != 0 { entries.append((keys[index], values[index])) }
      return entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    private enum Slot {
      case found(Int)
      case vacant(Int)
    }

    @inline(__always)
    private func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 1) & mask }

    @inline(__always)
    private func find(_ key: [UInt8], hash: UInt64) -> Slot {
      var index = home(hash)
      while true {
        let stored = hashes[index]
        if stored == 0 { return .vacant(index) }
        if stored == hash && MemoryTable.equal(keys[index], key) { return .found(index) }
        index = (index + 1) & mask
      }
    }

    /// Moves every entry into `slots` slots, by its stored hash.
    private mutating func resize(to slots: Int) {
      let oldHashes = hashes
      let oldKeys = keys
      let oldValues = values
      hashes = [UInt64](repeating: 0, count: slots)
      keys = [[UInt8]](repeating: [], count: slots)
      values = [[UInt8]](repeating: [], count: slots)
      mask = slots - 1
      for old in oldHashes.indices where oldHashes[old] != 0 {
        var index = home(oldHashes[old])
        while hashes[index] != 0 { index = (index + 1) & mask }
        hashes[index] = oldHashes[old]
        keys[index] = oldKeys[old]
        values[index] = oldValues[old]
      }
    }
  }

  @inline(__always)
  fileprivate static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in BinaryCodingSupport.bytesEqual(left, right) }
    }
  }

  /// The per-process seed of ``hash(_:)``.
  private static let seed: UInt64 = {
    var generator = SystemRandomNumberGenerator()
    return generator.next()
  }()

  /// A seeded 64-bit hash of `key`'s bytes, eight at a time (multiply–xorshift rounds, then
  /// MurmurHash3's finalizer), with the lowest bit set so that 0 can mark an empty slot.
  @inline(__always)
  static func hash(_ key: [UInt8]) -> UInt64 {
    key.withUnsafeBytes { bytes -> UInt64 in
      var state = seed ^ (UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15)
      var index = 0
      while bytes.count &- index >= 8 {
        state = (state ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
        state ^= state >> 31
        index &+= 8
      }
      if index < bytes.count {
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
          tail |= UInt64(bytes[index]) << shift
          shift &+= 8
          index &+= 1
        }
        state = (state ^ tail) &* 0xBF58_476D_1CE4_E5B9
        state ^= state >> 31
      }
      state ^= state >> 33
      state &*= 0xFF51_AFD7_ED55_8CCD
      state ^= state >> 33
      state &*= 0xC4CE_B9FE_1A85_EC53
      state ^= state >> 33
      return state | 1
    }
  }
}
