import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

extension EventStore.Options {
  /// Test options: no flush per commit.
  static var fast: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 16 << 20
    options.subscriptionPollInterval = .milliseconds(20)
    return options
  }
}

/// A store with the domain's projections in `dir`.
func makeStore(_ dir: TemporaryDirectory) throws -> EventStore {
  try EventStore(path: dir.environment(), projections: RestaurantBookingSchema.projections, options: .fast)
}

/// Expects the live projections to equal a replay of the whole log.
func expectProjectionsMatchReplay(
  _ store: EventStore, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let difference = try store.firstDifference(from: store.replay())
  #expect(
    difference == nil, "projections differ from a replay: \(String(describing: difference))",
    sourceLocation: sourceLocation)
}

/// The types of the events from `sequence` on.
func eventTypes(_ store: EventStore, after sequence: UInt64) throws -> [String] {
  try store.events(from: sequence + 1).map(\.type)
}

/// A clock fixed at a moment, for deterministic dates.
let fixedNow = Date(timeIntervalSince1970: 1_796_000_000)  // 2026-12-01

/// A future date `days` after ``fixedNow``.
func future(days: Double, hours: Double = 0) -> Date {
  fixedNow.addingTimeInterval(days * 86_400 + hours * 3_600)
}

// MARK: - Catalog fixtures

/// A row as PostgREST sends it (the tests' own wire struct).
struct WireRow: Encodable {
  var id: String
  var name: String
  var cuisine: String
}

/// A deterministic catalog of `count` rows, IDs ascending.
func catalog(_ count: Int, seed: UInt8 = 0, prefix: String = "Restaurant") -> [RemoteRestaurant] {
  let cuisines = ["Italian", "Japanese", "American", "Mexican", "Fusion", "Thai"]
  return (0..<count).map { index in
    RemoteRestaurant(
      id: uuid(index, seed: seed), name: "\(prefix) \(index)", cuisine: cuisines[index % cuisines.count])
  }
}

/// A UUID made of `index` and `seed`, ascending with `index`.
func uuid(_ index: Int, seed: UInt8 = 0) -> UUID {
  let value = UInt64(index)
  var bytes = [UInt8](repeating: 0, count: 16)
  bytes[0] = seed
  for shift in 0..<8 { bytes[15 - shift] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift))) }
  bytes[6] = 0x40 | (bytes[6] & 0x0F)
  bytes[8] = 0x80 | (bytes[8] & 0x3F)
  return UUID(
    uuid: (
      bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
      bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
    ))
}

/// The PostgREST body of `rows` (lower-case IDs, keys in PostgREST's order).
func body(_ rows: some Sequence<RemoteRestaurant>) throws -> Data {
  try JSONEncoder().encode(
    rows.map { WireRow(id: $0.id.uuidString.lowercased(), name: $0.name, cuisine: $0.cuisine) })
}

/// A source that hands out snapshots one after the other (tests of the sync's rules).
final class ScriptedSource: RestaurantSource, @unchecked Sendable {
  // @unchecked Sendable: `snapshots` is guarded by `lock`.
  private let lock = NSLock()
  private var snapshots: [[RemoteRestaurant]]
  let sourceDescription = "scripted"

  init(_ snapshots: [[RemoteRestaurant]]) { self.snapshots = snapshots }

  func push(_ snapshot: [RemoteRestaurant]) {
    lock.withLock { snapshots.append(snapshot) }
  }

  func fetchAll() async throws -> [RemoteRestaurant] {
    try lock.withLock {
      guard !snapshots.isEmpty else { throw RestaurantSyncError.transport(reason: "no snapshot", offset: 0) }
      return snapshots.removeFirst()
    }
  }
}

/// The result of an async throwing call.
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
  do {
    return .success(try await body())
  } catch {
    return .failure(error)
  }
}
