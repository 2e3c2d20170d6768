import EventLog
import Foundation
import TestKit
import Testing

/// The next build's table: `DiningTable` with an optional field added, and no version raised.
struct DiningTableWithShape: Entity {
  static let entityName = "DiningTable"
  var id: UUID
  var label: String
  var seats: Int
  var zone: String
  var active: Bool
  var shape: String?
}

enum FloorPlanWithShape {
  static let byLabel = TableIndex<DiningTableWithShape>("by-label", .caseInsensitive(\.label))
  static let byZone = TableIndex<DiningTableWithShape>("by-zone", .text(\.zone))
  static let schema = EntitySchema<DiningTableWithShape>(indexes: [byLabel, byZone])
}

/// A field added to an entity (its events and its row) without a new version: the tables stored
/// before are still listed, with the field `nil`; nothing vanishes; the previous build still reads
/// the environment, and refuses to write it.
@Suite("An entity that gains a field")
struct DiningTableEvolutionTests {
  let dir = TemporaryDirectory()

  func open(_ schema: AppSchema, readOnly: Bool = false) throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    options.readOnly = readOnly
    return try EventStore(path: dir.environment("floor.db"), schema: schema, options: options)
  }

  @Test(
    "old tables are still listed after a field is added; a new one joins them; the old build reads them all")
  func addedField() async throws {
    // The previous build: two tables, one of them changed.
    var store: EventStore? = try open(FloorPlan.schema.appSchema)
    let before = EventSourcedDiningTableRepository(store: try #require(store))
    let window = try await before.add(label: "Window 1", seats: 2, zone: "terrace")
    let bar = try await before.change(
      id: try await before.add(label: "bar 2", seats: 4, zone: "inside").id, label: nil, seats: 6, zone: nil)
    await store?.close()
    store = nil

    // The next build lists them, adds one with the new field, changes an old one's.
    store = try open(FloorPlanWithShape.schema.appSchema)
    let after = EntityRepository(store: try #require(store), schema: FloorPlanWithShape.schema)
    func widened(_ table: DiningTable, shape: String? = nil) -> DiningTableWithShape {
      DiningTableWithShape(
        id: table.id, label: table.label, seats: table.seats, zone: table.zone, active: table.active,
        shape: shape)
    }
    #expect(try await after.list(by: FloorPlanWithShape.byLabel) == [widened(bar), widened(window)])
    let round = try await after.create(
      DiningTableWithShape(
        id: .version7(), label: "Round 3", seats: 8, zone: "inside", active: true, shape: "round"))
    let reshaped = try await after.change(id: window.id) { $0.shape = "square" }
    #expect(reshaped == widened(window, shape: "square"))
    #expect(
      try await after.list(by: FloorPlanWithShape.byLabel) == [
        widened(bar), round, widened(window, shape: "square"),
      ])
    #expect(try await after.list(by: FloorPlanWithShape.byZone, prefix: .text("inside")).count == 2)
    let replay = try #require(store).replay()
    #expect(try #require(store).firstDifference(from: replay) == nil)
    await store?.close()
    store = nil

    // The previous build: refused for writing, naming the types; read-only, every table listed.
    do {
      _ = try open(FloorPlan.schema.appSchema)
      Issue.record("the previous build opened the environment for writing")
    } catch let EventStoreError.newerLayouts(_, types) {
      #expect(types.contains { $0.contains("'DiningTableCreated'") && $0.contains("'entity.shape'") })
      #expect(types.contains { $0.contains("'dining-table'") && $0.contains("'shape'") })
    }
    store = try open(FloorPlan.schema.appSchema, readOnly: true)
    let old = EventSourcedDiningTableRepository(store: try #require(store))
    #expect(try await old.tables(inZone: nil).map(\.label) == ["bar 2", "Round 3", "Window 1"])
    await store?.close()
  }
}
