import Foundation
import TestKit
import Testing

@testable import EventLog

@Suite("UUID version 7")
struct UUIDv7Tests {
  @Test("the layout of RFC 9562: 48-bit milliseconds, version 7, variant 10, random bits")
  func layout() {
    var generator = UUIDv7Generator()
    var random = SplitMix64(seed: 7)
    let milliseconds: UInt64 = 0x0123_4567_89AB
    let id = generator.next(milliseconds: milliseconds, using: &random)
    let bytes = bytes(of: id)
    #expect(Array(bytes[0..<6]) == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB])
    #expect(bytes[6] >> 4 == 7)
    #expect(bytes[8] >> 6 == 0b10)
    #expect(UUIDv7Generator.milliseconds(of: id) == milliseconds)
    let text = id.uuidString
    #expect(text.hasPrefix("01234567-89AB-7"))
    #expect("89AB".contains(text[text.index(text.startIndex, offsetBy: 19)]))
    // The first ID of a millisecond leaves the counter's top bit clear: room to count on.
    #expect(bytes[6] & 0x08 == 0)
    // Different random sources give different IDs for the same millisecond.
    var other = SplitMix64(seed: 8)
    var second = UUIDv7Generator()
    #expect(second.next(milliseconds: milliseconds, using: &other) != id)
  }

  @Test("a version-4 UUID has no version-7 timestamp")
  func otherVersions() {
    #expect(UUIDv7Generator.milliseconds(of: UUID()) == nil)
    #expect(
      UUIDv7Generator.milliseconds(of: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))) == nil)
  }

  @Test("UUID.version7() carries the system clock's millisecond")
  func systemClock() {
    let before = UUIDv7Generator.currentMilliseconds()
    let id = UUID.version7()
    let after = UUIDv7Generator.currentMilliseconds()
    let stamp = UUIDv7Generator.milliseconds(of: id)
    #expect(
      stamp.map { before <= $0 && $0 <= after } == true,
      "\(String(describing: stamp)) not in \(before)...\(after)")
  }

  @Test("within one millisecond, each ID is greater than the one before, with the same timestamp")
  func monotonicWithinAMillisecond() {
    var generator = UUIDv7Generator()
    var random = SplitMix64(seed: 1)
    let ids = (0..<100_000).map { _ in generator.next(milliseconds: 1_800_000_000_000, using: &random) }
    #expect(isStrictlyIncreasing(ids))
    #expect(ids.allSatisfy { UUIDv7Generator.milliseconds(of: $0) == 1_800_000_000_000 })
    #expect(Set(ids).count == ids.count)
  }

  @Test("later milliseconds sort later, and the upper-case strings sort as the bytes do")
  func timeOrder() {
    var generator = UUIDv7Generator()
    var random = SplitMix64(seed: 2)
    let ids = (0..<1_000).map {
      generator.next(milliseconds: 1_800_000_000_000 + UInt64($0 / 3), using: &random)
    }
    #expect(isStrictlyIncreasing(ids))
    #expect(ids.map(\.uuidString) == ids.map(\.uuidString).sorted())
  }

  @Test("after the clock steps back, IDs keep increasing on the last timestamp until the clock catches up")
  func clockStepsBack() {
    var generator = UUIDv7Generator()
    var random = SplitMix64(seed: 3)
    let readings: [UInt64] = [5_000, 5_001, 4_000, 0, 4_999, 5_001, 5_001, 5_002, 3_000, 5_003]
    let ids = readings.map { generator.next(milliseconds: $0, using: &random) }
    #expect(isStrictlyIncreasing(ids))
    let stamps = ids.map { UUIDv7Generator.milliseconds(of: $0) ?? 0 }
    #expect(stamps == [5_000, 5_001, 5_001, 5_001, 5_001, 5_001, 5_001, 5_002, 5_002, 5_003])
  }

  @Test("a counter that runs out moves the timestamp one millisecond on")
  func counterOverflow() {
    // The last ID had the counter at its very end (every bit of rand_a and rand_b set).
    var generator = UUIDv7Generator(lastMilliseconds: 9_000, counter: 0xFFF, (1 << 62) - 1)
    var random = SplitMix64(seed: 4)
    let last = layoutOfLast(milliseconds: 9_000)
    let next = generator.next(milliseconds: 9_000, using: &random)
    #expect(UUIDv7Generator.milliseconds(of: next) == 9_001)
    #expect(precedes(last, next))
    // rand_b running out carries into rand_a.
    var carrying = UUIDv7Generator(lastMilliseconds: 9_000, counter: 0x123, (1 << 62) - 1)
    let carried = carrying.next(milliseconds: 8_999, using: &random)
    #expect(UUIDv7Generator.milliseconds(of: carried) == 9_000)
    let bytes = bytes(of: carried)
    #expect(UInt16(bytes[6] & 0x0F) << 8 | UInt16(bytes[7]) == 0x124)
  }

  @Test("IDs made by many threads at once are unique, and each thread's are increasing")
  func concurrent() async {
    let perTask = 5_000
    let lists = await withTaskGroup(of: [UUID].self) { group in
      for _ in 0..<8 {
        group.addTask { (0..<perTask).map { _ in UUID.version7() } }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    for list in lists { #expect(isStrictlyIncreasing(list)) }
    #expect(Set(lists.flatMap { $0 }).count == 8 * perTask)
  }

  @Test("a new event's default ID is a version-7 UUID, later than the one before")
  func newEventDefault() throws {
    let first = try NewEvent(NoteAdded(noteID: UUID(), text: "a", priority: 1))
    let second = try NewEvent(NoteAdded(noteID: UUID(), text: "b", priority: 2))
    #expect(UUIDv7Generator.milliseconds(of: first.id) != nil)
    #expect(precedes(first.id, second.id))
  }
}

// MARK: - Helpers

private func bytes(of id: UUID) -> [UInt8] {
  withUnsafeBytes(of: id.uuid) { Array($0) }
}

/// Bytewise order: LMDB's and PostgreSQL's order of UUID keys.
private func precedes(_ a: UUID, _ b: UUID) -> Bool {
  bytes(of: a).lexicographicallyPrecedes(bytes(of: b))
}

private func isStrictlyIncreasing(_ ids: [UUID]) -> Bool {
  zip(ids, ids.dropFirst()).allSatisfy { precedes($0, $1) }
}

/// The ID a generator at the very end of its counter made last, at `milliseconds`.
private func layoutOfLast(milliseconds: UInt64) -> UUID {
  let first = milliseconds << 16 | 0x7FFF
  let second = UInt64.max
  return UUID(uuid: unsafeBitCast((first.bigEndian, second.bigEndian), to: uuid_t.self))
}
