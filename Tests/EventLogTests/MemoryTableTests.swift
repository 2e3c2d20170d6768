import TestKit
import Testing

@testable import EventLog

@Suite("In-memory projection table")
struct MemoryTableTests {
  @Test("random puts, overwrites and removals agree with a Dictionary", arguments: [1, 2, 3, 4])
  func modelCheck(seed: UInt64) {
    var generator = SplitMix64(seed: seed)
    let table = MemoryTable(name: "t")
    var model: [[UInt8]: [UInt8]] = [:]
    // Few distinct keys, so probe runs collide, wrap around and are shifted back by removals.
    let keySpace = 3_000
    for step in 0..<60_000 {
      let key = Self.key(Int(generator.next() % UInt64(keySpace)))
      switch generator.next() % 10 {
      case 0..<5:
        let value = [UInt8](repeating: UInt8(step & 0xFF), count: Int(generator.next() % 5))
        table.setValue(value, forKey: key)
        model[key] = value
      case 5..<9:
        #expect(table.removeValue(forKey: key) == (model.removeValue(forKey: key) != nil))
      default:
        #expect(table.value(forKey: key) == model[key])
      }
      #expect(table.count == model.count)
    }
    for index in 0..<keySpace {
      let key = Self.key(index)
      #expect(table.value(forKey: key) == model[key], "key \(index)")
    }
    let sorted = table.sortedEntries()
    #expect(sorted.map(\.key) == model.keys.sorted { $0.lexicographicallyPrecedes($1) })
    #expect(sorted.allSatisfy { model[$0.key] == $0.value })
  }

  @Test("a value changed in place reads back changed; an absent key is not handed to the body")
  func mutableValue() {
    let table = MemoryTable(name: "t")
    table.setValue([1, 2, 3], forKey: [9])
    table.setValue([4], forKey: [8])
    let found = [UInt8]([9]).withUnsafeBytes { key in
      table.withMutableValue(forKey: key) { value in
        value[1] = 7
        return value.count
      }
    }
    #expect(found == 3)
    #expect(table.value(forKey: [9]) == [1, 7, 3])
    #expect(table.value(forKey: [8]) == [4])
    #expect([UInt8]([7]).withUnsafeBytes { key in table.withMutableValue(forKey: key) { _ in true } } == nil)
  }

  @Test("keys of every length up to 40 bytes, and the empty key, are told apart")
  func keyLengths() {
    let table = MemoryTable(name: "t")
    table.reserveCapacity(100)
    for length in 0...40 {
      table.setValue([UInt8(length)], forKey: [UInt8](repeating: 7, count: length))
    }
    #expect(table.count == 41)
    for length in 0...40 {
      #expect(table.value(forKey: [UInt8](repeating: 7, count: length)) == [UInt8(length)])
    }
    #expect(table.value(forKey: [7, 7, 7, 8]) == nil)
    #expect(MemoryTable.hash([]) & 1 == 1, "a hash is never 0, the empty-slot mark")
  }

  /// Keys like a projection's: a shared prefix and a varying tail (big-endian).
  static func key(_ index: Int) -> [UInt8] {
    Array("booking-".utf8) + withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
  }
}
