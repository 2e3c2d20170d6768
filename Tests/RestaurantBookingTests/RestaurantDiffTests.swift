import Foundation
import RestaurantBooking
import Testing

@Suite("Restaurant diff")
struct RestaurantDiffTests {
  @Test("adds, updates, removes and unchanged rows are found by remote id")
  func diffByID() {
    let current = catalog(4).map(Restaurant.init)
    var fetched = catalog(4)
    fetched[1].name = "Renamed"
    fetched[2].cuisine = "Nordic"
    fetched.remove(at: 3)
    let extra = RemoteRestaurant(id: uuid(99), name: "New", cuisine: "Thai")
    fetched.append(extra)
    let diff = RestaurantDiff.compute(current: current, fetched: fetched)
    #expect(diff.added == [extra])
    #expect(diff.updated.map(\.old.id) == [uuid(1), uuid(2)])
    #expect(diff.removed.map(\.id) == [uuid(3)])
    #expect(diff.unchanged == 1)
    #expect(diff.summary == RefreshSummary(added: 1, updated: 2, removed: 1, unchanged: 1))
  }

  @Test("an unknown cuisine is kept verbatim and compares by its spelling")
  func unknownCuisine() {
    let fusion = Cuisine(rawValue: "Fusion")
    #expect(fusion == .other("Fusion"))
    #expect(fusion.rawValue == "Fusion")
    #expect(Cuisine(rawValue: "Italian") == .italian)
    #expect(Cuisine(rawValue: "italian") == .other("italian"))
    let current = [Restaurant(id: uuid(1), name: "A", cuisine: .other("italian"))]
    let same = RestaurantDiff.compute(
      current: current, fetched: [RemoteRestaurant(id: uuid(1), name: "A", cuisine: "italian")])
    #expect(same.isEmpty)
    let changed = RestaurantDiff.compute(
      current: current, fetched: [RemoteRestaurant(id: uuid(1), name: "A", cuisine: "Italian")])
    #expect(changed.updated.count == 1)
  }

  @Test("an empty snapshot removes everything; an empty catalog adds everything")
  func emptySides() {
    let rows = catalog(3)
    #expect(RestaurantDiff.compute(current: rows.map(Restaurant.init), fetched: []).removed.count == 3)
    #expect(RestaurantDiff.compute(current: [], fetched: rows).added == rows)
  }

  @Test("the diff of 100,000 rows is a single linear pass")
  func linear() {
    let rows = catalog(100_000)
    let current = rows.map(Restaurant.init)
    var fetched = rows
    for index in stride(from: 0, to: fetched.count, by: 100) { fetched[index].name += " (new)" }
    let clock = ContinuousClock()
    let start = clock.now
    let diff = RestaurantDiff.compute(current: current, fetched: fetched)
    let elapsed = clock.now - start
    #expect(diff.updated.count == 1_000)
    #expect(diff.unchanged == 99_000)
    #expect(elapsed < .seconds(5), "took \(elapsed)")
  }

  @Test("the events of a diff: the changes, then one RestaurantsRefreshed with the counts")
  func events() throws {
    var fetched = catalog(2)
    fetched[0].name = "Renamed"
    let diff = RestaurantDiff.compute(current: catalog(2).map(Restaurant.init), fetched: fetched)
    let events = try diff.events(source: "test", fetchedAt: fixedNow, metadata: .init(origin: "test"))
    #expect(events.map(\.type) == ["RestaurantUpdated", "RestaurantsRefreshed"])
  }
}

@Suite("Restaurant diff: merge path")
struct RestaurantDiffMergeTests {
  /// Sorts like PostgREST's `order=id.asc` and the `by-id` table: bytewise.
  static func sortedByID<T>(_ items: [T], _ id: (T) -> UUID) -> [T] {
    items.sorted { a, b in
      withUnsafeBytes(of: id(a).uuid) { x in
        withUnsafeBytes(of: id(b).uuid) { y in x.lexicographicallyPrecedes(y) }
      }
    }
  }

  @Test(
    "sorted inputs (the merge) and shuffled inputs (the hash tables) give the same diff", arguments: 0..<20)
  func mergeAgreesWithHashing(seed: Int) {
    var random = SystemRandomNumberGenerator()
    let ids = (0..<300).map { _ in UUID() }
    let current = ids.prefix(200).map { Restaurant(id: $0, name: "R\($0)", cuisine: .init(rawValue: "Thai")) }
    var fetched: [RemoteRestaurant] = []
    for (index, id) in ids.enumerated() where index >= 50 {  // 0..<50 removed, 200..<300 added
      let cuisine = index % 7 == 0 ? "Nordic" : "Thai"  // some updated
      fetched.append(RemoteRestaurant(id: id, name: "R\(id)", cuisine: cuisine))
    }
    let merged = RestaurantDiff.compute(
      current: Self.sortedByID(current, \.id), fetched: Self.sortedByID(fetched, \.id))
    let hashed = RestaurantDiff.compute(
      current: current.shuffled(using: &random), fetched: fetched.shuffled(using: &random))
    #expect(merged.summary == hashed.summary)
    #expect(Set(merged.added) == Set(hashed.added))
    #expect(Set(merged.removed.map(\.id)) == Set(hashed.removed.map(\.id)))
    #expect(Set(merged.updated.map(\.new)) == Set(hashed.updated.map(\.new)))
    #expect(merged.summary.removed == 50 && merged.summary.added == 100)
  }
}
