import Foundation
import TestKit
import Testing

@testable import EventLog

/// The table projection (issue 16, item 1): indexes kept in step by the engine through create,
/// update and delete, live and in replay; reads by key, in an index's order, ranges, prefixes,
/// counts; a model check against a dictionary with sorted orders.
@Suite("Table projections")
struct TableProjectionTests {
  @Test(
    "every index follows create, an update of an indexed field, a replacement and delete, live and in replay")
  func indexesInStep() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: .fast)
    let (a, b, c) = (uuid(1), uuid(2), uuid(3))
    try await store.append(
      [
        try NewEvent(ThingAdded(id: a, name: "pear", group: 2, due: day(3))),
        try NewEvent(ThingAdded(id: b, name: "Apple", group: 1, due: day(5))),
        try NewEvent(ThingAdded(id: c, name: "fig", group: 2, due: day(1))),
      ], to: "items")
    try expectState(store, [a: ("pear", 2, 3), b: ("Apple", 1, 5), c: ("fig", 2, 1)])
    try await store.append(
      [
        try NewEvent(ThingRenamed(id: a, name: "Banana")),  // by-name moves
        try NewEvent(ThingMoved(id: c, group: 1, due: day(9))),  // by-group-due moves
        try NewEvent(ThingRenamed(id: b, name: "APPLE")),  // the same name key: by-name stays
      ], to: "items")
    try expectState(store, [a: ("Banana", 2, 3), b: ("APPLE", 1, 5), c: ("fig", 1, 9)])
    try await store.append(
      [
        try NewEvent(ThingAdded(id: b, name: "cherry", group: 3, due: day(2))),  // a create replaces
        try NewEvent(ThingRemoved(id: a)),
        try NewEvent(ThingRemoved(id: uuid(9))),  // nothing to delete
      ], to: "items")
    try expectState(store, [b: ("cherry", 3, 2), c: ("fig", 1, 9)])
    #expect(try store.verify().isClean)
  }

  @Test("an update of a missing row fails the append by default, naming the projection and the key")
  func missingRow() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: .fast)
    do {
      try await store.append([try NewEvent(ThingRenamed(id: uuid(4), name: "x"))], to: "items")
      Issue.record("no error")
    } catch EventStoreError.projectionFailed(let projection, _, let underlying) {
      #expect(projection == "items")
      #expect(underlying as? TableError == .missingRow(projection: "items", key: .uuid(uuid(4))))
    }
    #expect(try store.head() == 0)
    // An update that is told to ignore a missing row does not fail.
    try await store.append([try NewEvent(ThingMoved(id: uuid(4), group: 1, due: day(1)))], to: "items")
    #expect(try store.head() == 1)
  }

  @Test("reads: by key, in each order, ranges, prefixes, limits and counts", arguments: [false, true])
  func reads(replayed: Bool) async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: .fast)
    let names = ["apricot", "Apple", "banana", "avocado", "Blueberry", "cherry"]
    for (index, name) in names.enumerated() {
      try await store.append(
        [
          try NewEvent(
            ThingAdded(id: uuid(index), name: name, group: index % 3, due: day(Double(10 - index))))
        ],
        to: "items")
    }
    let replay = try store.replay()
    try store.read { snapshot in
      let items =
        replayed ? try Things.projection.reader(in: replay) : try Things.projection.reader(in: snapshot)
      #expect(try items.count() == 6)
      #expect(try items.row(forKey: .uuid(uuid(2)))?.name == "banana")
      #expect(try items.row(forKey: .uuid(uuid(8))) == nil)
      #expect(try items.rows().map(\.id) == (0..<6).map(uuid))
      #expect(
        try items.rows(in: Things.byName).map(\.name)
          == ["Apple", "apricot", "avocado", "banana", "Blueberry", "cherry"])
      #expect(
        try items.rows(in: Things.byName, prefix: .caseInsensitivePrefix("A")).map(\.name)
          == ["Apple", "apricot", "avocado"])
      #expect(
        try items.rows(in: Things.byName, prefix: .caseInsensitivePrefix("ap"), limit: 1).map(\.name) == [
          "Apple"
        ])
      #expect(try items.count(in: Things.byName, prefix: .caseInsensitivePrefix("b")) == 2)
      #expect(
        try items.rows(in: Things.byName, from: .caseInsensitive("b"), to: .caseInsensitive("c")).map(\.name)
          == ["banana", "Blueberry"])
      // The compound index: group 1, then by due date.
      #expect(
        try items.rows(in: Things.byGroupDue, from: .int(1), to: .int(2)).map(\.name) == [
          "Blueberry", "Apple",
        ])
      #expect(
        try items.rows(in: Things.byGroupDue, prefix: TableKey(.int(2), .date(day(5)))).map(\.name) == [
          "cherry"
        ])
      #expect(try items.count(in: Things.byGroupDue) == 6)
      // The projection with a primary key of varying width: its keys-only index holds the key.
      let labels = replayed ? try Things.labels.reader(in: replay) : try Things.labels.reader(in: snapshot)
      #expect(try labels.rows(in: Things.labelsByDue).map(\.name) == names.reversed())
      #expect(
        try labels.rows(in: Things.labelsByDue, to: .date(day(6.5))).map(\.name) == ["cherry", "Blueberry"])
    }
    #expect(try store.firstDifference(from: replay) == nil)
  }

  @Test("a model check against a dictionary with sorted orders, live and in replay", arguments: 0..<4)
  func modelCheck(seed: UInt64) async throws {
    var random = SplitMix64(seed: 0x7AB1E + seed)
    let dir = TemporaryDirectory()
    var options = EventStore.Options.fast
    options.replayChunkSize = 7
    let store = try EventStore(path: dir.environment(), projections: Things.all, options: options)
    var model: [UUID: Thing] = [:]
    let ids = (0..<24).map { _ in random.uuid() }
    let words = ["a", "A", "ab", "Ab", "b", "é", "É", "ba", "", "zz", String(repeating: "q", count: 450)]
    for step in 0..<240 {
      let id = ids[Int(random.next() % UInt64(ids.count))]
      let name = words[Int(random.next() % UInt64(words.count))] + (random.next() % 2 == 0 ? "" : "x")
      let group = Int(random.next() % 4) - 1
      let due = day(Double(random.next() % 50) - 25)
      var events: [any EventPayload] = []
      switch random.next() % 4 {
      case 0:
        events.append(ThingAdded(id: id, name: name, group: group, due: due))
        model[id] = Thing(id: id, name: name, group: group, due: due)
      case 1 where model[id] != nil:
        events.append(ThingRenamed(id: id, name: name))
        model[id]?.name = name
      case 2:
        events.append(ThingMoved(id: id, group: group, due: due))  // ignored for a missing row
        model[id]?.group = group
        model[id]?.due = due
      default:
        events.append(ThingRemoved(id: id))
        model[id] = nil
      }
      try await store.append(events.map { try NewEvent($0) }, to: "items")
      if step % 40 == 39 { try expectModel(store, model) }
    }
    try expectModel(store, model)
    #expect(try store.verify().isClean)
  }

  @Test("events the store skips never reach a table projection, live, after a catch-up and in replay")
  func skippedEvents() async throws {
    let dir = TemporaryDirectory()
    let admission = ThingAdmission()
    var store: EventStore? = try EventStore(
      path: dir.environment(), projections: Things.all, admission: admission, options: .fast)
    let outcomes = try await store?.ingest([
      IngestedEvent(
        stream: "items", event: try NewEvent(ThingAdded(id: uuid(1), name: "kept", group: 0, due: day(1)))),
      IngestedEvent(
        stream: "items",
        event: try NewEvent(ThingAdded(id: uuid(2), name: "forbidden", group: 0, due: day(2)))),
      IngestedEvent(stream: "items", event: try NewEvent(ThingRemoved(id: uuid(1)))),
      IngestedEvent(
        stream: "items", event: try NewEvent(ThingAdded(id: uuid(3), name: "also", group: 0, due: day(3)))),
    ])
    #expect(outcomes?[1] == .skipped(sequence: 2, kind: .invalid, reason: "no forbidden items"))
    #expect(outcomes?[2] == .skipped(sequence: 3, kind: .invalid, reason: "no removals"))
    func names(_ store: EventStore?) throws -> [String] {
      try store?.read { try Things.projection.reader(in: $0).rows(in: Things.byName).map(\.name) } ?? []
    }
    #expect(try names(store) == ["also", "kept"])
    let replay = try #require(try store?.replay())
    #expect(try Things.projection.reader(in: replay).rows(in: Things.byName).map(\.name) == ["also", "kept"])
    #expect(try store?.firstDifference(from: replay) == nil)
    // Rebuilt on open with a new version: a catch-up skips them too.
    await close(&store)
    store = try EventStore(
      path: dir.environment(), projections: [Things.make(version: 2), Things.labels], admission: admission,
      options: .fast)
    #expect(try names(store) == ["also", "kept"])
    #expect(try store?.verify().isClean == true)
  }

  @Test("a key longer than LMDB's limit is refused, naming the table; nothing is stored")
  func keyTooLong() async throws {
    let dir = TemporaryDirectory()
    let long = TableProjection<Thing>(
      name: "long", version: 1, primaryKey: .uuid(\.id),
      indexes: [TableIndex("by-two-names", .compound(.text(\.name), .text(\.name)))],
      handlers: [.create(ThingAdded.self) { Thing(id: $0.id, name: $0.name, group: $0.group, due: $0.due) }])
    let store = try EventStore(path: dir.environment(), projections: [long], options: .fast)
    let name = String(repeating: "n", count: 300)
    do {
      try await store.append(
        [try NewEvent(ThingAdded(id: uuid(1), name: name, group: 0, due: day(0)))], to: "s")
      Issue.record("no error")
    } catch EventStoreError.projectionFailed(_, _, let underlying) {
      #expect(
        underlying as? TableError == .invalidKey(projection: "long", table: "by-two-names", length: 512))
    }
    #expect(try store.head() == 0)
  }

  @Test("the key encodings sort as their values do")
  func keyOrder() {
    let dates = [-1e9, -1.5, -0.0, 0, 1e-9, 1, 1.7e9].map { Date(timeIntervalSince1970: $0) }
    #expect(dates.map { TableKey.date($0) } == dates.map { TableKey.date($0) }.sorted())
    let ints: [Int64] = [.min, -2, -1, 0, 1, 255, 256, .max]
    #expect(ints.map(TableKey.int) == ints.map(TableKey.int).sorted())
    let uints: [UInt64] = [0, 1, 255, 256, .max]
    #expect(uints.map(TableKey.uint) == uints.map(TableKey.uint).sorted())
    #expect(TableKey(.text("ab"), .uuid(uuid(9))) < TableKey(.text("abc"), .uuid(uuid(0))))
    #expect(TableKey.caseInsensitive("ÉCOLE") == .caseInsensitive("école"))
    #expect(TableKey.caseInsensitive("Zebra").bytes == Array("zebra".utf8) + [0])
    #expect(TableKey.text(String(repeating: "x", count: 500)).bytes.count == TableKey.maximumTextBytes + 1)
    let id = uuid(7)
    #expect(TableKey.uuid(id).bytes.withUnsafeBytes { TableKey.uuid(suffixOf: $0) } == id)
    for date in dates {
      #expect(TableKey.date(date).bytes.withUnsafeBytes { TableKey.date(sortable: $0) } == date)
    }
  }

  @Test("rows written with RowWriter read back with RowReader; the writer grows past its scratch")
  func rowCoding() throws {
    let long = String(repeating: "é", count: 3_000)
    let bytes = try RowWriter.withRow(
      { writer in
        writer.byte(3)
        writer.uuid(uuid(5))
        writer.string(long)
        writer.optionalString(nil)
        writer.optionalString("x")
        writer.int(-42)
        writer.bool(true)
        writer.date(day(2))
      }, { Array($0) })
    #expect(bytes.count == 1 + 16 + RowWriter.size(of: long) + 1 + 3 + 8 + 1 + 8)
    try bytes.withUnsafeBytes { buffer in
      var reader = RowReader(buffer, row: "test")
      try reader.format(3)
      #expect(try reader.uuid() == uuid(5))
      #expect(try reader.string() == long)
      #expect(try reader.optionalString() == nil)
      #expect(try reader.optionalString() == "x")
      #expect(try reader.int() == -42)
      #expect(try reader.bool())
      #expect(try reader.date() == day(2))
      try reader.finish()
      #expect(throws: RowError.unreadable(row: "test", reason: "truncated at byte \(buffer.count)")) {
        try reader.skip(1)
      }
    }
  }

  // MARK: Helpers

  /// The live state and a replay's equal `expected` (id: name, group, due day), in every order.
  func expectState(
    _ store: EventStore, _ expected: [UUID: (String, Int, Double)],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    var model: [UUID: Thing] = [:]
    for (id, (name, group, due)) in expected {
      model[id] = Thing(id: id, name: name, group: group, due: day(due))
    }
    try expectModel(store, model, sourceLocation: sourceLocation)
  }

  /// The live projections and a replay of them read as `model` does, in every order and range.
  func expectModel(
    _ store: EventStore, _ model: [UUID: Thing], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let byID = model.values.sorted { TableKey.uuid($0.id) < TableKey.uuid($1.id) }
    let byName = model.values.sorted {
      TableKey(.caseInsensitive($0.name), .uuid($0.id)) < TableKey(.caseInsensitive($1.name), .uuid($1.id))
    }
    let byGroupDue = model.values.sorted {
      TableKey(.int(Int64($0.group)), .date($0.due), .uuid($0.id))
        < TableKey(.int(Int64($1.group)), .date($1.due), .uuid($1.id))
    }
    let replay = try store.replay()
    try store.read { snapshot in
      for items in [try Things.projection.reader(in: snapshot), try Things.projection.reader(in: replay)] {
        #expect(try items.count() == model.count, sourceLocation: sourceLocation)
        #expect(try items.rows() == byID, sourceLocation: sourceLocation)
        #expect(try items.rows(in: Things.byName) == byName, sourceLocation: sourceLocation)
        #expect(try items.rows(in: Things.byGroupDue) == byGroupDue, sourceLocation: sourceLocation)
        #expect(try items.count(in: Things.byName) == model.count, sourceLocation: sourceLocation)
        for group in -1...2 {
          #expect(
            try items.rows(in: Things.byGroupDue, from: .int(Int64(group)), to: .int(Int64(group + 1)))
              == byGroupDue.filter { $0.group == group }, sourceLocation: sourceLocation)
        }
        #expect(
          try items.rows(in: Things.byName, prefix: .caseInsensitivePrefix("a"))
            == byName.filter { $0.name.lowercased().hasPrefix("a") }, sourceLocation: sourceLocation)
        for item in model.values.prefix(5) {
          #expect(try items.row(forKey: .uuid(item.id)) == item, sourceLocation: sourceLocation)
        }
      }
      for labels in [try Things.labels.reader(in: snapshot), try Things.labels.reader(in: replay)] {
        let byDue = model.values.sorted {
          TableKey(.date($0.due), .text($0.id.uuidString)) < TableKey(.date($1.due), .text($1.id.uuidString))
        }
        #expect(try labels.rows(in: Things.labelsByDue) == byDue, sourceLocation: sourceLocation)
      }
    }
    #expect(try store.firstDifference(from: replay) == nil, sourceLocation: sourceLocation)
  }
}

// MARK: - Fixtures

/// A row stored with the binary coder (`Codable`).
struct Thing: Codable, Hashable, TableRow {
  var id: UUID
  var name: String
  var group: Int
  var due: Date
}

struct ThingAdded: EventPayload {
  static let eventType = "ThingAdded"
  var id: UUID
  var name: String
  var group: Int
  var due: Date
}

struct ThingRenamed: EventPayload {
  static let eventType = "ThingRenamed"
  var id: UUID
  var name: String
}

struct ThingMoved: EventPayload {
  static let eventType = "ThingMoved"
  var id: UUID
  var group: Int
  var due: Date
}

struct ThingRemoved: EventPayload {
  static let eventType = "ThingRemoved"
  var id: UUID
}

enum Things {
  static let byName = TableIndex<Thing>("by-name", .caseInsensitive(\.name))
  static let byGroupDue = TableIndex<Thing>(
    "by-group-due", .compound(.int(\.group), .date(\.due)), storesRows: true)
  static let handlers: [TableHandler<Thing>] = [
    .create(ThingAdded.self) { Thing(id: $0.id, name: $0.name, group: $0.group, due: $0.due) },
    .update(ThingRenamed.self, key: \.id) { item, event in item.name = event.name },
    .update(ThingMoved.self, key: \.id, ifMissing: .ignore) { item, event in
      item.group = event.group
      item.due = event.due
    },
    .delete(ThingRemoved.self, key: \.id),
  ]

  static func make(version: UInt32) -> TableProjection<Thing> {
    TableProjection(
      name: "items", version: version, primaryKey: .uuid(\.id), indexes: [byName, byGroupDue],
      handlers: handlers)
  }

  static let projection = make(version: 1)

  /// The same rows under a primary key of varying width (text): its keys-only index stores it.
  static let labelsByDue = TableIndex<Thing>("by-due", .date(\.due))
  static let labels = TableProjection<Thing>(
    name: "labels", version: 1, rowTable: "by-label", primaryKey: .text { $0.id.uuidString },
    indexes: [labelsByDue],
    handlers: [
      .create(ThingAdded.self) { Thing(id: $0.id, name: $0.name, group: $0.group, due: $0.due) },
      .update(ThingRenamed.self, key: { .text($0.id.uuidString) }) { item, event in item.name = event.name },
      .update(ThingMoved.self, key: { .text($0.id.uuidString) }, ifMissing: .ignore) { item, event in
        item.group = event.group
        item.due = event.due
      },
      .delete(ThingRemoved.self, key: { .text($0.id.uuidString) }),
    ])

  static let all: [any Projection] = [projection, labels]
}

/// Refuses items named "forbidden" and every removal.
struct ThingAdmission: EventAdmission {
  func verdict(for event: RecordedEvent) -> EventVerdict {
    switch event.type {
    case ThingAdded.eventType:
      (try? event.decode(ThingAdded.self))?.name == "forbidden"
        ? .invalid(reason: "no forbidden items") : .admitted
    case ThingRemoved.eventType: .invalid(reason: "no removals")
    default: .admitted
    }
  }
}

func uuid(_ index: Int) -> UUID {
  UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", index)) ?? UUID()
}

func day(_ days: Double) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + days * 86_400) }
