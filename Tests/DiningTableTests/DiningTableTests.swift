import EventLog
import Foundation
import TestKit
import Testing

/// An entity in one short file (`DiningTable.swift`): the package's generic events, table and
/// repository, the app's own protocol and rules.
@Suite("An entity of the common shape")
struct DiningTableTests {
  let dir = TemporaryDirectory()

  func open(_ name: String = "floor.db") throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: dir.environment(name), schema: FloorPlan.schema.appSchema, options: options)
  }

  @Test("add, change fields, retire, list by an index, observe")
  func commonShape() async throws {
    let store = try open()
    let floor: any DiningTableRepository = EventSourcedDiningTableRepository(store: store)
    var observed = floor.observeTables().makeAsyncIterator()
    #expect(try await observed.next() == [])
    let window = try await floor.add(label: "Window 1", seats: 2, zone: "terrace")
    #expect(try await observed.next() == [window])
    let bar = try await floor.add(label: "bar 2", seats: 4, zone: "inside")
    let changed = try await floor.change(id: window.id, label: nil, seats: 4, zone: nil)
    #expect(changed.seats == 4 && changed.label == "Window 1" && changed.zone == "terrace")
    let retired = try await floor.retire(id: bar.id)
    #expect(!retired.active)
    // By label ignoring case; by zone through its index.
    #expect(try await floor.tables(inZone: nil).map(\.label) == ["bar 2", "Window 1"])
    #expect(try await floor.tables(inZone: "terrace") == [changed])
    #expect(try await floor.tables(inZone: "garden").isEmpty)
    var last: [DiningTable] = []
    while last != [retired, changed] { last = try #require(try await observed.next()) }
    // The events are the package's, named for the entity; a change records only its fields.
    let events = try store.events(from: 1)
    #expect(
      events.map(\.type) == [
        "DiningTableCreated", "DiningTableCreated", "DiningTableChanged", "DiningTableChanged",
      ])
    #expect(try events[2].decode(EntityChanged<DiningTable>.self).fields == ["seats"])
    #expect(events[0].stream == StreamID("dining-table-\(window.id.lowercasedString)"))
    // A change that changes nothing appends nothing.
    _ = try await floor.change(id: window.id, label: "Window 1", seats: nil, zone: nil)
    #expect(try store.head() == 4)
    let replay = try store.replay()
    #expect(try store.firstDifference(from: replay) == nil)
  }

  @Test("the app's rules and the repository's errors name the entity")
  func errors() async throws {
    let store = try open()
    let floor = EventSourcedDiningTableRepository(store: store)
    await #expect(throws: DiningTableError.invalidSeats(0)) {
      try await floor.add(label: "A", seats: 0, zone: "x")
    }
    let stranger = UUID()
    await #expect(throws: EntityError.notFound(entity: "DiningTable", id: stranger)) {
      try await floor.retire(id: stranger)
    }
    let table = try await floor.add(label: "A", seats: 2, zone: "x")
    await #expect(throws: EntityError.alreadyExists(entity: "DiningTable", id: table.id)) {
      try await floor.entities.create(table)
    }
    await #expect(throws: EntityError.idChanged(entity: "DiningTable", id: table.id)) {
      try await floor.entities.change(id: table.id) { $0.id = UUID() }
    }
    try await floor.entities.delete(id: table.id)
    await #expect(throws: EntityError.notFound(entity: "DiningTable", id: table.id)) {
      try await floor.entities.delete(id: table.id)
    }
    #expect(
      EntityError.notFound(entity: "DiningTable", id: table.id).description.contains(
        table.id.lowercasedString))
    #expect(try store.head() == 2)
  }

  @Test("concurrent changes of one table on one device land: a change is tried again on what it lost to")
  func retried() async throws {
    let store = try open()
    let floor = EventSourcedDiningTableRepository(store: store)
    let table = try await floor.add(label: "A", seats: 2, zone: "x")
    try await withThrowingTaskGroup(of: Void.self) { group in
      for seats in 3...4 {
        group.addTask { _ = try await floor.change(id: table.id, label: nil, seats: seats, zone: nil) }
      }
      group.addTask { _ = try await floor.change(id: table.id, label: "B", seats: nil, zone: nil) }
      try await group.waitForAll()
    }
    let final = try #require(try await floor.entities.get(id: table.id))
    #expect(final.label == "B" && (3...4).contains(final.seats))
    #expect(try store.head() == 4)
  }

  @Test("two devices change different fields at once: each device ends with both; one field: the later")
  func devicesConverge() async throws {
    let phone = try open("phone.db")
    let tablet = try open("tablet.db")
    let onPhone = EventSourcedDiningTableRepository(store: phone)
    let onTablet = EventSourcedDiningTableRepository(store: tablet)
    let table = try await onPhone.add(label: "A", seats: 2, zone: "inside")
    try await Self.send(from: phone, after: 0, to: tablet)
    // Both change from version 1, before seeing the other's change.
    _ = try await onPhone.change(id: table.id, label: "Phone", seats: 6, zone: nil)
    _ = try await onTablet.change(id: table.id, label: "Tablet", seats: nil, zone: "terrace")
    try await Self.send(from: phone, after: 1, to: tablet)
    try await Self.send(from: tablet, after: 1, to: phone)
    let phoneRow = try #require(try await onPhone.entities.get(id: table.id))
    #expect(try await onTablet.entities.get(id: table.id) == phoneRow)
    #expect(phoneRow.seats == 6 && phoneRow.zone == "terrace" && phoneRow.label == "Tablet")
  }

  /// Hands `source`'s events after `sequence` to `target`, as a pull would (their IDs and times).
  static func send(from source: EventStore, after sequence: UInt64, to target: EventStore) async throws {
    let events = try source.events(from: sequence + 1).map { event in
      EventStore.IngestedEvent(
        stream: event.stream,
        event: NewEvent(
          id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
          metadata: event.metadata, recordedAt: event.recordedAt),
        provenance: event.provenance)
    }
    _ = try await target.ingest(events)
  }

  @Test("the entity is one file of at most 60 lines, and AddingAnEntity.md shows it as it is")
  func oneShortFile() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let source = try String(contentsOf: folder.appendingPathComponent("DiningTable.swift"), encoding: .utf8)
    #expect(source.split(separator: "\n", omittingEmptySubsequences: false).dropLast().count <= 60)
    let guide = try String(
      contentsOf: folder.appendingPathComponent("../../Docs/AddingAnEntity.md").standardized, encoding: .utf8)
    #expect(guide.contains("```swift\n" + source + "```\n"))
  }
}
