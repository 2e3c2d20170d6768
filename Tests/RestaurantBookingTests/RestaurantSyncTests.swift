import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

@Suite("Restaurant sync as diff events")
struct RestaurantSyncTests {
  /// A→B: one renamed, one re-cuisined, one removed, one added.
  static let snapshotA = catalog(6)
  static let snapshotB: [RemoteRestaurant] = {
    var rows = catalog(6)
    rows[1].name = "Renamed 1"
    rows[2].cuisine = "Nordic"
    rows.remove(at: 4)
    rows.append(RemoteRestaurant(id: uuid(50), name: "Newcomer", cuisine: "Greek"))
    return rows
  }()

  @Test("snapshots A, A, B, B, A give all-added, nothing, the A→B diff, nothing, the B→A diff")
  func snapshotSequence() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let source = ScriptedSource([
      Self.snapshotA, Self.snapshotA, Self.snapshotB, Self.snapshotB, Self.snapshotA,
    ])
    let repository = EventSourcedRestaurantRepository(store: store, source: source, now: { fixedNow })

    func sync(_ expected: RefreshSummary, types: [String]) async throws {
      let head = try store.head()
      #expect(try await repository.refresh() == expected)
      #expect(try eventTypes(store, after: head).sorted() == (types + ["RestaurantsRefreshed"]).sorted())
      try expectProjectionsMatchReplay(store)
    }

    try await sync(.init(added: 6), types: Array(repeating: "RestaurantAdded", count: 6))
    #expect(try await repository.getAll().map(\.id) == Self.snapshotA.map(\.id))
    try await sync(.init(unchanged: 6), types: [])
    try await sync(
      .init(added: 1, updated: 2, removed: 1, unchanged: 3),
      types: ["RestaurantAdded", "RestaurantUpdated", "RestaurantUpdated", "RestaurantRemoved"])
    #expect(
      Set(
        try await repository.getAll().map {
          RemoteRestaurant(id: $0.id, name: $0.name, cuisine: $0.cuisine.rawValue)
        }) == Set(Self.snapshotB))
    try await sync(.init(unchanged: 6), types: [])
    try await sync(
      .init(added: 1, updated: 2, removed: 1, unchanged: 3),
      types: ["RestaurantAdded", "RestaurantUpdated", "RestaurantUpdated", "RestaurantRemoved"])
    #expect(try await repository.getAll().map(\.id) == Self.snapshotA.map(\.id))

    // RestaurantUpdated carries old and new values of what changed only.
    let updates = try store.events(from: 1).filter { $0.is(RestaurantUpdated.self) }.map {
      try $0.decode(RestaurantUpdated.self)
    }
    let rename = try #require(updates.first { $0.restaurantID == uuid(1) })
    #expect(rename.name == .init(old: "Restaurant 1", new: "Renamed 1"))
    #expect(rename.cuisine == nil)
    let recuisine = try #require(updates.first { $0.restaurantID == uuid(2) })
    #expect(recuisine.cuisine == .init(old: "American", new: "Nordic"))
    #expect(recuisine.name == nil)
  }

  @Test("a row whose key order or white space changed is unchanged")
  func layoutDoesNotMatter() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let id = uuid(7)
    let first = #"[{"id":"\#(id.uuidString.lowercased())","name":"Sushi Sensation","cuisine":"Japanese"}]"#
    let second = """
      [
        { "cuisine" : "Japanese",   "extra": [1, {"x": null}],
          "name":"Sushi Sensation",
          "id":   "\(id.uuidString.uppercased())" }
      ]
      """
    let firstPath = try dir.file("first.json", Data(first.utf8))
    let secondPath = try dir.file("second.json", Data(second.utf8))
    let one = EventSourcedRestaurantRepository(store: store, source: FileRestaurantSource(path: firstPath))
    let two = EventSourcedRestaurantRepository(store: store, source: FileRestaurantSource(path: secondPath))
    #expect(try await one.refresh() == RefreshSummary(added: 1))
    let head = try store.head()
    #expect(try await two.refresh() == RefreshSummary(unchanged: 1))
    #expect(try eventTypes(store, after: head) == ["RestaurantsRefreshed"])
    try expectProjectionsMatchReplay(store)
  }

  @Test("1% of 100,000 rows changed gives exactly those events")
  func largeSnapshot() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let base = catalog(100_000)
    var changed = base
    var renamed: Set<UUID> = []
    var removed: Set<UUID> = []
    var added: Set<UUID> = []
    for index in stride(from: 0, to: 100_000, by: 100) {
      switch (index / 100) % 5 {
      case 0, 1, 2:
        changed[index].name += " renamed"
        renamed.insert(changed[index].id)
      case 3:
        changed[index].cuisine = "Changed"
        renamed.insert(changed[index].id)
      default:
        removed.insert(changed[index].id)
      }
    }
    changed.removeAll { removed.contains($0.id) }
    for index in 0..<200 {
      let row = RemoteRestaurant(id: uuid(index, seed: 9), name: "Added \(index)", cuisine: "Thai")
      changed.append(row)
      added.insert(row.id)
    }
    let firstPath = try dir.file("a.json", try body(base))
    let secondPath = try dir.file("b.json", try body(changed))
    let initial = EventSourcedRestaurantRepository(
      store: store, source: FileRestaurantSource(path: firstPath))
    #expect(try await initial.refresh() == RefreshSummary(added: 100_000))
    let head = try store.head()
    let repository = EventSourcedRestaurantRepository(
      store: store, source: FileRestaurantSource(path: secondPath))
    // How fast is the benchmark's question (sync.diff), not a test's.
    let summary = try await repository.refresh()
    #expect(summary == RefreshSummary(added: 200, updated: 800, removed: 200, unchanged: 99_000))
    let events = try store.events(from: head + 1)
    #expect(events.count == 1_201)
    #expect(
      Set(
        try events.filter { $0.is(RestaurantUpdated.self) }.map {
          try $0.decode(RestaurantUpdated.self).restaurantID
        }) == renamed)
    #expect(
      Set(
        try events.filter { $0.is(RestaurantRemoved.self) }.map {
          try $0.decode(RestaurantRemoved.self).restaurantID
        }) == removed)
    #expect(
      Set(
        try events.filter { $0.is(RestaurantAdded.self) }.map {
          try $0.decode(RestaurantAdded.self).restaurantID
        }) == added)
    #expect(events.last?.type == RestaurantsRefreshed.eventType)
    #expect(try await repository.getAll().count == 100_000)
    try expectProjectionsMatchReplay(store)
  }

  @Test("the events of one sync share a correlation ID and the origin; the source has no credentials")
  func metadata() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let repository = EventSourcedRestaurantRepository(
      store: store, source: ScriptedSource([catalog(3), catalog(4)]), origin: "sync-test", now: { fixedNow })
    _ = try await repository.refresh()
    _ = try await repository.refresh()
    let events = try store.events(from: 1)
    let first = Set(events.prefix(4).map(\.metadata.correlationID))
    let second = Set(events.suffix(2).map(\.metadata.correlationID))
    #expect(first.count == 1 && first.first! != nil)
    #expect(second.count == 1 && second != first)
    #expect(events.allSatisfy { $0.metadata.origin == "sync-test" })
    #expect(events.allSatisfy { $0.stream == RestaurantBookingStreams.catalog })
    let refreshed = try events[3].decode(RestaurantsRefreshed.self)
    #expect(
      refreshed
        == RestaurantsRefreshed(
          source: "scripted", fetchedAt: fixedNow, fetched: 3, added: 3, updated: 0, removed: 0, unchanged: 0)
    )
  }

  @Test("the table's reader reads a replay as of any event: time travel")
  func timeTravel() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let repository = EventSourcedRestaurantRepository(
      store: store, source: ScriptedSource([Self.snapshotA, Self.snapshotB]))
    _ = try await repository.refresh()
    let afterA = try store.head()
    _ = try await repository.refresh()
    let replayA = try store.replay(through: afterA)
    // Every catalog event through the first refresh's last, and none after it: the catalog as of
    // version `afterA` (the log holds catalog events only).
    #expect(replayA.throughSequence == afterA && replayA.eventCount == Int(afterA))
    // The catalog as snapshot A made it, every field: B's rename, cuisine change, removal and
    // addition are not in it.
    let thenAll = try RestaurantsProjection.table.reader(in: replayA)
      .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    #expect(thenAll == Self.snapshotA.map(Restaurant.init))
    let live = try await repository.getAll()
    #expect(live != thenAll)
    let replayed = try RestaurantsProjection.table.reader(in: store.replay())
      .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    #expect(live == replayed)
    #expect(try await repository.restaurant(id: uuid(50))?.name == "Newcomer")
    #expect(try await repository.restaurant(id: uuid(4)) == nil)
  }

  @Test("restaurants are listed by name, case-insensitively, then by id")
  func nameOrder() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let rows = [
      RemoteRestaurant(id: uuid(3), name: "banana", cuisine: "Thai"),
      RemoteRestaurant(id: uuid(1), name: "Apple", cuisine: "Thai"),
      RemoteRestaurant(id: uuid(2), name: "apple", cuisine: "Thai"),
      RemoteRestaurant(id: uuid(0), name: "Cherry", cuisine: "Thai"),
    ]
    let repository = EventSourcedRestaurantRepository(store: store, source: ScriptedSource([rows]))
    _ = try await repository.refresh()
    #expect(try await repository.getAll().map(\.id) == [uuid(1), uuid(2), uuid(3), uuid(0)])
  }

  @Test(
    "an invalid file body fails naming the row and field, and appends nothing",
    arguments: [
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","cuisine":"Thai"},{"id":"00000000-0000-4000-8000-000000000002","cuisine":"Thai"}]"#,
        "row 1 (id 00000000-0000-4000-8000-000000000002): field 'name' is missing"
      ),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","cuisine":5}]"#,
        "row 0 (id 00000000-0000-4000-8000-000000000001): field 'cuisine' is a number, not a string"
      ),
      (#"[{"id":"not-a-uuid","name":"A","cuisine":"Thai"}]"#, "row 0: field 'id' 'not-a-uuid' is not a UUID"),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"  ","cuisine":"Thai"}]"#,
        "row 0 (id 00000000-0000-4000-8000-000000000001): field 'name' is empty"
      ),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","cuisine":"Thai"},{"id":"00000000-0000-4000-8000-000000000001","name":"B","cuisine":"Thai"}]"#,
        "row 1 (id 00000000-0000-4000-8000-000000000001): duplicate id, first seen at row 0"
      ),
      (
        #"[{"id":"00000000-0000-4000-8000-000000000001","name":"A","#,
        "the page at offset 0 is not a JSON array of rows"
      ),
      (#"{"rows": []}"#, "the page at offset 0 is not a JSON array of rows"),
      ("null", "the page at offset 0 is not a JSON array of rows: the body is not a JSON array (it is null)"),
      (#"[1]"#, "row 0: field '(row)' is not a JSON object"),
    ])
  func invalidBody(body: String, message: String) async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    _ = try await EventSourcedRestaurantRepository(store: store, source: ScriptedSource([catalog(2)]))
      .refresh()
    let head = try store.head()
    let path = try dir.file("body.json", Data(body.utf8))
    let repository = EventSourcedRestaurantRepository(store: store, source: FileRestaurantSource(path: path))
    let error = try await #require(throws: RestaurantSyncError.self) { try await repository.refresh() }
    #expect(error.description.hasPrefix(message), "\(error)")
    #expect(try store.head() == head)
    try expectProjectionsMatchReplay(store)
  }

  @Test("a missing file fails naming its path")
  func missingFile() async throws {
    let source = FileRestaurantSource(path: "/nonexistent/restaurants.json")
    let error = try await #require(throws: RestaurantSyncError.self) { try await source.fetchAll() }
    guard case .unreadableInput(let path, _) = error else {
      Issue.record("unexpected \(error)")
      return
    }
    #expect(path == "/nonexistent/restaurants.json")
  }

  @Test("a concurrent change of the catalog makes a refresh diff again, not interleave")
  func concurrentRefreshes() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let one = EventSourcedRestaurantRepository(store: store, source: ScriptedSource([Self.snapshotA]))
    let two = EventSourcedRestaurantRepository(store: store, source: ScriptedSource([Self.snapshotB]))
    async let first = one.refresh()
    async let second = two.refresh()
    let summaries = try await [first, second]
    #expect(
      Set(summaries) == [
        RefreshSummary(added: 6), RefreshSummary(added: 1, updated: 2, removed: 1, unchanged: 3),
      ])
    // Whatever the order, the catalog is exactly the last snapshot appended, and equals a replay.
    let all = Set(try await one.getAll().map(\.id))
    #expect(all == Set(Self.snapshotA.map(\.id)) || all == Set(Self.snapshotB.map(\.id)))
    #expect(try store.version(of: RestaurantBookingStreams.catalog) == UInt64(try store.head()))
    try expectProjectionsMatchReplay(store)
  }

  @Test("observers see the catalog's changes as they are committed")
  func observeChanges() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    let repository = EventSourcedRestaurantRepository(store: store, source: ScriptedSource([catalog(2), []]))
    let changes = repository.changes()
    _ = try await repository.refresh()
    _ = try await repository.refresh()
    var seen: [RestaurantChange] = []
    for try await change in changes {
      seen.append(change)
      if seen.count == 6 { break }
    }
    #expect(
      seen == [
        .added(Restaurant(catalog(2)[0])), .added(Restaurant(catalog(2)[1])),
        .refreshed(.init(added: 2)), .removed(id: uuid(0)), .removed(id: uuid(1)),
        .refreshed(.init(removed: 2)),
      ])
  }
}
