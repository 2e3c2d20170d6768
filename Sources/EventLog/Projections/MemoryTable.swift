/// One projection table held in memory, as replay builds it: a hash table from byte keys to byte
/// values.
///
/// Open addressing with linear probing over an array of plain slots (hash, where the entry's
/// bytes are, their lengths); each entry's key and value bytes lie side by side in one arena.
/// A slot keeps its key's 64-bit hash, so probing compares hashes before bytes, and neither a
/// deletion (backward shift, no tombstones) nor a resize ever hashes a key again. No entry is an
/// object of its own: storing copies the bytes into the arena, removing only moves slots, and
/// nothing is retained, released or freed per entry (an array per key and value cost a third of
/// replay's folding time in retains, releases, allocations and frees). The space of replaced and
/// removed entries is reclaimed by compacting the arena when it is full and at least a third of
/// it is garbage, which copies each live byte at most once per byte appended since the last time.
///
/// The hash is seeded once per process at random, so keys chosen to collide cannot be prepared in
/// advance. The load factor stays at or below one half.
final class MemoryTable {
  let name: String
  /// The slots and the arena, in one stored property without dynamic exclusivity checks (each
  /// costs a `swift_beginAccess` call). Unchecked is safe: every access is one call of a method
  /// below, which does not call back out except `withValue`, whose `body` must not change the
  /// table (``ProjectionWriter/withValue(forKey:in:_:)`` says so), and a table is used by one
  /// thread at a time (replay's folding thread, then its owner).
  @exclusivity(unchecked) private var storage = Storage()

  /// The value each key had when ``startRecordingChanges()`` was called (`nil`: absent), for
  /// every key changed since; `nil` while not recording. Only the audit commands record (`diff`,
  /// `history`): a replay pays one check per write.
  private var firstValues: [[UInt8]: [UInt8]?]?

  init(name: String) { self.name = name }

  /// Starts noting, for each key changed from now on, the value it had before its first change.
  func startRecordingChanges() { firstValues = [:] }

  /// The keys changed since ``startRecordingChanges()`` whose value differs now, each with its
  /// value then and now (`nil`: absent), in key order; recording stops.
  func recordedChanges() -> [(key: [UInt8], before: [UInt8]?, after: [UInt8]?)] {
    guard let recorded = firstValues else { return [] }
    firstValues = nil
    var changes: [(key: [UInt8], before: [UInt8]?, after: [UInt8]?)] = []
    for (key, before) in recorded {
      let after = value(forKey: key)
      if after != before { changes.append((key, before, after)) }
    }
    return changes.sorted { $0.key.lexicographicallyPrecedes($1.key) }
  }

  /// Notes `key`'s value before its first change since recording started.
  private func noteChange(of key: UnsafeRawBufferPointer) {
    let key = ExactSizeBytes.copy(key)
    guard firstValues?.index(forKey: key) == nil else { return }
    firstValues?[key] = .some(value(forKey: key))
  }

  /// The number of entries.
  var count: Int { storage.count }

  /// Makes room for `capacity` entries without growing the slots.
  func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }

  /// A copy of the value stored under `key`, or `nil`.
  /// - Complexity: O(1) on average.
  func value(forKey key: [UInt8]) -> [UInt8]? {
    key.withUnsafeBytes { key in storage.withValue(forKey: key) { ExactSizeBytes.copy($0) } }
  }

  /// Calls `body` with the value stored under `key`, or returns `nil` when there is none. The
  /// bytes are valid only inside `body`, which must not change the table.
  /// - Complexity: O(1) on average.
  func withValue<R>(
    forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
  ) rethrows
    -> R?
  {
    try storage.withValue(forKey: key, body)
  }

  /// Calls `body` with the value stored under `key`, which it may change in place (not its
  /// length), or returns `nil` when there is none: one lookup for a read and a write. The bytes
  /// are valid only inside `body`, which must not change the table otherwise.
  /// - Complexity: O(1) on average.
  func withMutableValue<R>(
    forKey key: UnsafeRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) throws -> R
  ) rethrows -> R? {
    if firstValues != nil { noteChange(of: key) }
    return try storage.withMutableValue(forKey: key, body)
  }

  /// Stores a copy of `value` under a copy of `key`, replacing what was there.
  /// - Complexity: O(1) on average, amortized over the arena's growth and compactions.
  func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) {
    if firstValues != nil { noteChange(of: key) }
    storage.setValue(value, forKey: key)
  }

  /// Stores a copy of `value` under a copy of `key` unless `key` is present.
  /// - Returns: whether it stored them (`false`: the key was present, and nothing changed).
  /// - Complexity: O(1) on average, amortized over the arena's growth and compactions.
  func insertValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) -> Bool {
    if firstValues != nil { noteChange(of: key) }
    return storage.insertValue(value, forKey: key)
  }

  /// Stores `value` under `key`, replacing what was there.
  func setValue(_ value: [UInt8], forKey key: [UInt8]) {
    if firstValues != nil { key.withUnsafeBytes { noteChange(of: $0) } }
    value.withUnsafeBytes { value in key.withUnsafeBytes { key in storage.setValue(value, forKey: key) } }
  }

  /// Removes `key`.
  /// - Returns: whether it was there.
  /// - Complexity: O(1) on average.
  @discardableResult
  func removeValue(forKey key: UnsafeRawBufferPointer) -> Bool {
    if firstValues != nil { noteChange(of: key) }
    return storage.removeValue(forKey: key)
  }

  /// Removes `key`.
  /// - Returns: whether it was there.
  @discardableResult
  func removeValue(forKey key: [UInt8]) -> Bool {
    key.withUnsafeBytes { removeValue(forKey: $0) }
  }

  /// The entries in LMDB's key order (bytewise, shorter first on a common prefix), copied out.
  /// - Complexity: O(n log n).
  func sortedEntries() -> [(key: [UInt8], value: [UInt8])] { storage.sortedEntries() }

  /// Where an entry's bytes are: `keyCount` key bytes at `offset` in the arena, then
  /// `valueCount` value bytes. `hash` 0 marks an empty slot.
  private struct Slot {
    var hash: UInt64
    var offset: Int
    var keyCount: UInt32
    var valueCount: UInt32

    static let empty = Slot(hash: 0, offset: 0, keyCount: 0, valueCount: 0)

    var size: Int { Int(keyCount) + Int(valueCount) }
  }

  private struct Storage: ~Copyable {
    /// The slots; the capacity is a power of two.
    var slots: UnsafeMutablePointer<Slot>
    /// `capacity - 1`.
    var mask = 15
    var count = 0
    /// Every entry's key and value bytes, appended; `used` bytes are taken, `garbage` of them by
    /// entries replaced or removed since.
    var arena: UnsafeMutableRawPointer
    var arenaCapacity = 4_096
    var used = 0
    var garbage = 0

    init() {
      slots = .allocate(capacity: 16)
      slots.initialize(repeating: .empty, count: 16)
      arena = .allocate(byteCount: 4_096, alignment: 16)
    }

    deinit {
      slots.deallocate()
      arena.deallocate()
    }

    var capacity: Int { mask + 1 }

    mutating func reserveCapacity(_ entries: Int) {
      var slotCount = capacity
      while entries * 2 > slotCount { slotCount *= 2 }
      if slotCount > capacity { resize(to: slotCount) }
    }

    @inline(__always)
    func key(of slot: Slot) -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(start: arena + slot.offset, count: Int(slot.keyCount))
    }

    @inline(__always)
    func value(of slot: Slot) -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(start: arena + slot.offset + Int(slot.keyCount), count: Int(slot.valueCount))
    }

    func withValue<R>(
      forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R? {
      switch find(key, hash: MemoryTable.hash(key)) {
      case .found(let index): return try body(value(of: slots[index]))
      case .vacant: return nil
      }
    }

    func withMutableValue<R>(
      forKey key: UnsafeRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) throws -> R
    ) rethrows -> R? {
      switch find(key, hash: MemoryTable.hash(key)) {
      case .found(let index):
        let slot = slots[index]
        return try body(
          UnsafeMutableRawBufferPointer(
            start: arena + slot.offset + Int(slot.keyCount), count: Int(slot.valueCount)))
      case .vacant: return nil
      }
    }

    mutating func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) {
      precondition(key.count <= Int(UInt32.max) && value.count <= Int(UInt32.max), "entry too large")
      let hash = MemoryTable.hash(key)
      switch find(key, hash: hash) {
      case .found(let index):
        let old = slots[index]
        if Int(old.valueCount) == value.count {
          // The same length: overwrite in place.
          if value.count > 0 {
            (arena + old.offset + Int(old.keyCount)).copyMemory(
              from: value.baseAddress!, byteCount: value.count)
          }
          return
        }
        // Append the new entry first (a compaction meanwhile moves the old one, still live), then
        // count the old one as garbage.
        let offset = append(key, value)
        garbage += slots[index].size
        slots[index].offset = offset
        slots[index].valueCount = UInt32(value.count)
      case .vacant(let index):
        insert(value, forKey: key, hash: hash, at: index)
      }
    }

    mutating func insertValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) -> Bool {
      precondition(key.count <= Int(UInt32.max) && value.count <= Int(UInt32.max), "entry too large")
      let hash = MemoryTable.hash(key)
      guard case .vacant(let index) = find(key, hash: hash) else { return false }
      insert(value, forKey: key, hash: hash, at: index)
      return true
    }

    /// Stores a new entry in the vacant slot `index` that `find` gave for `key` (another one
    /// after growing the table, which moves every slot).
    @inline(__always)
    private mutating func insert(
      _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, hash: UInt64, at index: Int
    ) {
      var index = index
      if (count + 1) * 2 > capacity {
        resize(to: capacity * 2)
        guard case .vacant(let moved) = find(key, hash: hash) else { preconditionFailure("key appeared") }
        index = moved
      }
      let offset = append(key, value)
      slots[index] = Slot(
        hash: hash, offset: offset, keyCount: UInt32(key.count), valueCount: UInt32(value.count))
      count += 1
    }

    mutating func removeValue(forKey key: UnsafeRawBufferPointer) -> Bool {
      guard case .found(var hole) = find(key, hash: MemoryTable.hash(key)) else { return false }
      garbage += slots[hole].size
      // Backward shift: pull each later member of the probe run into the hole, unless the hole
      // lies before that member's home slot (it would then be unreachable from its home).
      var next = (hole + 1) & mask
      while slots[next].hash != 0 {
        let home = home(slots[next].hash)
        if (hole - home) & mask < (next - home) & mask {
          slots[hole] = slots[next]
          hole = next
        }
        next = (next + 1) & mask
      }
      slots[hole] = .empty
      count -= 1
      if count == 0 {
        used = 0
        garbage = 0
      }
      return true
    }

    func sortedEntries() -> [(key: [UInt8], value: [UInt8])] {
      var entries: [(key: [UInt8], value: [UInt8])] = []
      entries.reserveCapacity(count)
      for index in 0..<capacity where slots[index].hash != 0 {
        let slot = slots[index]
        entries.append((ExactSizeBytes.copy(key(of: slot)), ExactSizeBytes.copy(value(of: slot))))
      }
      return entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    private enum Place {
      case found(Int)
      case vacant(Int)
    }

    @inline(__always)
    private func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 1) & mask }

    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> Place {
      var index = home(hash)
      while true {
        let slot = slots[index]
        if slot.hash == 0 { return .vacant(index) }
        if slot.hash == hash && BinaryCodingSupport.bytesEqual(self.key(of: slot), key) {
          return .found(index)
        }
        index = (index + 1) & mask
      }
    }

    /// Copies `key` then `value` to the arena's end, making room first.
    /// - Returns: the offset of the copy.
    private mutating func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int {
      let size = key.count + value.count
      if used + size > arenaCapacity { makeRoom(for: size) }
      let offset = used
      if key.count > 0 { (arena + offset).copyMemory(from: key.baseAddress!, byteCount: key.count) }
      if value.count > 0 {
        (arena + offset + key.count).copyMemory(from: value.baseAddress!, byteCount: value.count)
      }
      used += size
      return offset
    }

    /// Grows the arena for `size` more bytes; when at least a third of it is garbage, compacts it
    /// into a new one instead, with room for as many live bytes again.
    private mutating func makeRoom(for size: Int) {
      let live = used - garbage
      if garbage * 2 >= live {
        let newCapacity = max(4_096, 2 * (live + size))
        let newArena = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        var offset = 0
        for index in 0..<capacity where slots[index].hash != 0 {
          let slotSize = slots[index].size
          if slotSize > 0 {
            (newArena + offset).copyMemory(from: arena + slots[index].offset, byteCount: slotSize)
          }
          slots[index].offset = offset
          offset += slotSize
        }
        arena.deallocate()
        arena = newArena
        arenaCapacity = newCapacity
        used = offset
        garbage = 0
      } else {
        let newCapacity = max(2 * arenaCapacity, used + size)
        let newArena = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newArena.copyMemory(from: arena, byteCount: used)
        arena.deallocate()
        arena = newArena
        arenaCapacity = newCapacity
      }
    }

    /// Moves every slot into `slotCount` slots, by its stored hash.
    private mutating func resize(to slotCount: Int) {
      let old = slots
      let oldCapacity = capacity
      slots = .allocate(capacity: slotCount)
      slots.initialize(repeating: .empty, count: slotCount)
      mask = slotCount - 1
      for index in 0..<oldCapacity where old[index].hash != 0 {
        var target = home(old[index].hash)
        while slots[target].hash != 0 { target = (target + 1) & mask }
        slots[target] = old[index]
      }
      old.deallocate()
    }
  }

  /// The per-process seed of ``hash(_:)``.
  private static let seed: UInt64 = {
    var generator = SystemRandomNumberGenerator()
    return generator.next()
  }()

  /// A seeded 64-bit hash of `key`'s bytes.
  static func hash(_ key: [UInt8]) -> UInt64 { key.withUnsafeBytes { hash($0) } }

  /// A seeded 64-bit hash of `bytes`, eight at a time (multiply–xorshift rounds, then
  /// MurmurHash3's finalizer), with the lowest bit set so that 0 can mark an empty slot.
  @inline(__always)
  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
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
