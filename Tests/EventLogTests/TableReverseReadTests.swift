import Foundation
import TestKit
import Testing

@testable import EventLog

/// `TableReader` backward: every order, range and prefix gives the forward rows last first, live
/// and in replay, and a limit reads from the end.
@Suite("Table reads backward")
struct TableReverseReadTests {
  @Test("newest first: the last rows of an index by date, of a range, of a prefix", arguments: [false, true])
  func newestFirst(replayed: Bool) async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: .fast)
    let names = ["apricot", "Apple", "banana", "avocado", "Blueberry", "cherry"]
    for (index, name) in names.enumerated() {
      let event = ThingAdded(id: uuid(index), name: name, group: index % 3, due: day(Double(10 - index)))
      try await store.append([try NewEvent(event)], to: "items")
    }
    let replay = try store.replay()
    try store.read { snapshot in
      let labels = replayed ? try Things.labels.reader(in: replay) : try Things.labels.reader(in: snapshot)
      // The keys-only index by due date: the latest two, then those due before day 6.5.
      #expect(
        try labels.rows(in: Things.labelsByDue, direction: .backward, limit: 2).map(\.name)
          == names.prefix(2).map { $0 })
      #expect(
        try labels.rows(in: Things.labelsByDue, to: .date(day(6.5)), direction: .backward).map(\.name)
          == ["Blueberry", "cherry"])
      let items =
        replayed ? try Things.projection.reader(in: replay) : try Things.projection.reader(in: snapshot)
      #expect(try items.rows(direction: .backward).map(\.id) == (0..<6).reversed().map(uuid))
      #expect(
        try items.rows(in: Things.byName, prefix: .caseInsensitivePrefix("A"), direction: .backward).map(
          \.name)
          == ["avocado", "apricot", "Apple"])
      #expect(
        try items.rows(
          in: Things.byName, from: .caseInsensitive("b"), to: .caseInsensitive("c"), direction: .backward
        )
        .map(\.name) == ["Blueberry", "banana"])
      // The index that stores rows: group 2 by due date, latest first.
      #expect(
        try items.rows(in: Things.byGroupDue, prefix: TableKey(.int(2)), direction: .backward).map(\.name)
          == ["banana", "cherry"])
    }
  }

  @Test(
    "backward is forward reversed, for random rows and random ranges and prefixes (seeded)", arguments: 0..<3)
  func modelCheck(seed: UInt64) async throws {
    var random = SplitMix64(seed: 0x8E7E_45E + seed)
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: .fast)
    let words = ["a", "A", "ab", "b", "é", "ba", "", "zz", "\u{FF}", "zzz"]
    for index in 0..<60 {
      let name = words[Int(random.next() % UInt64(words.count))] + String(index % 3)
      let event = ThingAdded(
        id: random.uuid(), name: name, group: Int(random.next() % 4) - 1,
        due: day(Double(random.next() % 40) - 20))
      try await store.append([try NewEvent(event)], to: "items")
    }
    let replay = try store.replay()
    func bound() -> TableKey? {
      switch random.next() % 4 {
      case 0: nil
      case 1: .caseInsensitive(words[Int(random.next() % UInt64(words.count))])
      case 2: .caseInsensitivePrefix(words[Int(random.next() % UInt64(words.count))])
      default: TableKey(bytes: [0xFF, 0xFF])
      }
    }
    try store.read { snapshot in
      for view in [try Things.projection.reader(in: snapshot), try Things.projection.reader(in: replay)] {
        for _ in 0..<200 {
          let (from, to, prefix) = (bound(), bound(), random.next() % 2 == 0 ? nil : bound())
          let limit = Int(random.next() % 5) + 1
          for index in [Things.byName, Things.byGroupDue] {
            let forward = try view.rows(in: index, from: from, to: to, prefix: prefix).map(\.id)
            let backward = try view.rows(in: index, from: from, to: to, prefix: prefix, direction: .backward)
            #expect(
              backward.map(\.id) == forward.reversed(),
              "\(index.name) \(String(describing: from)) \(String(describing: to)) \(String(describing: prefix))"
            )
            let last = try view.rows(
              in: index, from: from, to: to, prefix: prefix, direction: .backward, limit: limit)
            #expect(last.map(\.id) == Array(forward.reversed().prefix(limit)))
          }
        }
      }
    }
  }
}
