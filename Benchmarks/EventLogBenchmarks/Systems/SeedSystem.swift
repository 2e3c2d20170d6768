import Foundation
import RestaurantBooking

/// `seed`: the naive refresh of the reference app (`data-management-patterns.txt`,
/// `RestaurantListViewModel.fetchRestaurants`): arrays of class objects, `first(where:)` for each
/// fetched row, then a `filter` to drop the missing ones. O(R²).
///
/// Two differences, both in the seed's favour: rows are matched by their remote ID (a 16-byte
/// compare) rather than by name (a string compare, which would also turn a rename into a removal
/// and an addition), and nothing is persisted (the reference then calls `modelContext.save()`).
struct SeedSystem: BenchmarkSystem {
  /// The reference app's `@Model class Restaurant`.
  final class SeedRestaurant {
    let id: UUID
    var name: String
    var cuisine: String

    init(id: UUID, name: String, cuisine: String) {
      self.id = id
      self.name = name
      self.cuisine = cuisine
    }
  }

  /// The reference loop, with counts so that the outcome can be checked against the other systems.
  static func refresh(_ restaurants: inout [SeedRestaurant], fetched: [SeedRestaurant]) -> String {
    var added = 0
    var updated = 0
    for fetchedRestaurant in fetched {
      if let existing = restaurants.first(where: { $0.id == fetchedRestaurant.id }) {
        if existing.name != fetchedRestaurant.name || existing.cuisine != fetchedRestaurant.cuisine {
          updated += 1
        }
        existing.name = fetchedRestaurant.name
        existing.cuisine = fetchedRestaurant.cuisine
      } else {
        let newRestaurant = SeedRestaurant(
          id: fetchedRestaurant.id, name: fetchedRestaurant.name, cuisine: fetchedRestaurant.cuisine)
        restaurants.append(newRestaurant)
        added += 1
      }
    }
    let fetchedIDs = Set(fetched.map { $0.id })
    let before = restaurants.count
    restaurants = restaurants.filter { fetchedIDs.contains($0.id) }
    let removed = before - restaurants.count
    return "added=\(added) updated=\(updated) removed=\(removed) unchanged=\(fetched.count - added - updated)"
  }

  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    throw UnsupportedWorkload(workload: workload, system: .seed)
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    guard workload == .syncDiff else { throw UnsupportedWorkload(workload: workload, system: .seed) }
    let scenario = SyncScenario(size: size)
    let state = SeedState(
      restaurants: scenario.local.map { SeedRestaurant(id: $0.id, name: $0.name, cuisine: $0.cuisine) },
      fetched: scenario.remote.map { SeedRestaurant(id: $0.id, name: $0.name, cuisine: $0.cuisine) })
    return PreparedRun(operations: size) {
      state.check = Self.refresh(&state.restaurants, fetched: state.fetched)
    } finish: {
      let catalog = state.restaurants.sorted { ReadModelFingerprint.precedes($0.id, $1.id) }.map {
        Restaurant(id: $0.id, name: $0.name, cuisine: Cuisine(rawValue: $0.cuisine))
      }
      return state.check + " " + ReadModelFingerprint.outcome(restaurants: catalog)
    }
  }
}

final class SeedState {
  var restaurants: [SeedSystem.SeedRestaurant]
  let fetched: [SeedSystem.SeedRestaurant]
  var check = ""

  init(restaurants: [SeedSystem.SeedRestaurant], fetched: [SeedSystem.SeedRestaurant]) {
    self.restaurants = restaurants
    self.fetched = fetched
  }
}
