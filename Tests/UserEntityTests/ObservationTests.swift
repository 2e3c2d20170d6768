import EventLog
import Foundation
import TestKit
import Testing

/// `EventStore.observe(_:)`: a value read now and again after each commit that changes it.
@Suite("Observing rows")
struct ObservationTests {
  let dir = TemporaryDirectory()

  func open() throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: dir.environment(), schema: .users, options: options)
  }

  /// The names of the users whose names start with "A", by name.
  static func namesWithA(_ snapshot: EventStore.StoreSnapshot) throws -> [String] {
    try Users.projection.reader(in: snapshot).rows(in: Users.byName, as: User.init).map(\.name)
      .filter { $0.hasPrefix("A") }
  }

  @Test("the rows now, then after each commit that changes them; a commit that changes others yields nothing")
  func rows() async throws {
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    var values = store.observe(Self.namesWithA).makeAsyncIterator()
    #expect(try await values.next() == [])
    let ada = try await users.create(name: "Ada", email: "ada@example.com")
    #expect(try await values.next() == ["Ada"])
    try await users.rename(id: ada.id, to: "Ada L")
    #expect(try await values.next() == ["Ada L"])
    // Bo is not in the value: his registration yields nothing, the next rename does.
    _ = try await users.create(name: "Bo", email: "bo@example.com")
    try await users.rename(id: ada.id, to: "Ada Lovelace")
    #expect(try await values.next() == ["Ada Lovelace"])
    // Closing the store ends the observation.
    await store.close()
    #expect(try await values.next() == nil)
  }

  @Test("an error of the read ends the observation with it")
  func failingRead() async throws {
    struct Refused: Error, Equatable {}
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    var values = store.observe { snapshot -> Int in
      let head = try snapshot.head()
      if head >= 1 { throw Refused() }
      return Int(head)
    }.makeAsyncIterator()
    #expect(try await values.next() == 0)
    _ = try await users.create(name: "Ada", email: "ada@example.com")
    await #expect(throws: Refused.self) { _ = try await values.next() }
  }
}
