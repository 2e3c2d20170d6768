import EventLog
import Foundation

/// A table of a restaurant's floor plan: the whole entity, on the package's generic events, table
/// and repository (`Entity`, `EntitySchema`, `EntityRepository`).
struct DiningTable: Entity {
  static let entityName = "DiningTable"
  var id: UUID
  var label: String
  var seats: Int
  var zone: String
  var active: Bool
}

/// The floor plan's table: rows by ID, by label (ignoring case), by zone.
enum FloorPlan {
  static let byLabel = TableIndex<DiningTable>("by-label", .caseInsensitive(\.label))
  static let byZone = TableIndex<DiningTable>("by-zone", .text(\.zone))
  static let schema = EntitySchema<DiningTable>(indexes: [byLabel, byZone])
}

/// What the floor plan's view model depends on.
protocol DiningTableRepository: Sendable {
  func add(label: String, seats: Int, zone: String) async throws -> DiningTable
  func change(id: UUID, label: String?, seats: Int?, zone: String?) async throws -> DiningTable
  func retire(id: UUID) async throws -> DiningTable
  func tables(inZone zone: String?) async throws -> [DiningTable]
  func observeTables() -> AsyncThrowingStream<[DiningTable], any Error>
}
enum DiningTableError: Error, Equatable { case invalidSeats(Int) }

/// The floor plan in the event store; the composition root makes it.
struct EventSourcedDiningTableRepository: DiningTableRepository {
  let entities: EntityRepository<DiningTable>
  init(store: EventStore) { entities = EntityRepository(store: store, schema: FloorPlan.schema) }

  func add(label: String, seats: Int, zone: String) async throws -> DiningTable {
    guard (1...20).contains(seats) else { throw DiningTableError.invalidSeats(seats) }
    return try await entities.create(
      .init(id: .version7(), label: label, seats: seats, zone: zone, active: true))
  }
  func change(id: UUID, label: String?, seats: Int?, zone: String?) async throws -> DiningTable {
    if let seats, !(1...20).contains(seats) { throw DiningTableError.invalidSeats(seats) }
    return try await entities.change(id: id) { table in
      table.label = label ?? table.label
      table.seats = seats ?? table.seats
      table.zone = zone ?? table.zone
    }
  }
  func retire(id: UUID) async throws -> DiningTable {
    try await entities.change(id: id) { $0.active = false }
  }
  func tables(inZone zone: String?) async throws -> [DiningTable] {
    guard let zone else { return try await entities.list(by: FloorPlan.byLabel) }
    return try await entities.list(by: FloorPlan.byZone, prefix: .text(zone))
  }
  func observeTables() -> AsyncThrowingStream<[DiningTable], any Error> {
    entities.observeAll(by: FloorPlan.byLabel)
  }
}
