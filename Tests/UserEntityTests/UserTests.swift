import EventLog
import Foundation
import TestKit
import Testing

/// The `User` entity (issue 16, item 3): an entity on the public API of `EventLog` alone, small
/// enough to read in one screen. Docs/AddingAnEntity.md shows all of it.
@Suite("User entity")
struct UserTests {
  let dir = TemporaryDirectory()

  func open() throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: dir.environment(), projections: [Users.projection], options: options)
  }

  @Test("the repository's rules: a name and an email are required; only a live user changes")
  func rules() async throws {
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    await #expect(throws: UserError.invalidName) { try await users.create(name: " \n", email: "a@b.c") }
    await #expect(throws: UserError.invalidName) {
      try await users.create(name: String(repeating: "x", count: 101), email: "a@b.c")
    }
    for email in ["", "ada", "@example.com", "ada@", "a@b@c", "a b@c"] {
      await #expect(throws: UserError.invalidEmail) { try await users.create(name: "Ada", email: email) }
    }
    #expect(try store.head() == 0)
    let ada = try await users.create(name: "  Ada ", email: " ada@example.com ")
    #expect(ada.name == "Ada" && ada.email == "ada@example.com")
    #expect(try await users.get(id: ada.id) == ada)
    await #expect(throws: UserError.invalidName) { try await users.rename(id: ada.id, to: "") }
    try await users.delete(id: ada.id)
    #expect(try await users.get(id: ada.id) == nil)
    await #expect(throws: UserError.unknownUser(ada.id)) { try await users.delete(id: ada.id) }
    await #expect(throws: UserError.unknownUser(ada.id)) { try await users.rename(id: ada.id, to: "Bo") }
    let stranger = UUID()
    await #expect(throws: UserError.unknownUser(stranger)) { try await users.delete(id: stranger) }
    #expect(try store.head() == 2)
  }

  @Test("getAll is in name order, ignoring case, then by ID; a rename moves a user")
  func order() async throws {
    let users = EventSourcedUserRepository(store: try open())
    var created: [String: User] = [:]
    for name in ["carol", "Bob", "alice", "Dave", "bob"] {
      created[name] = try await users.create(name: name, email: "\(name)@example.com")
    }
    let bobs = [created["Bob"], created["bob"]].compactMap { $0 }.sorted {
      $0.id.uuidString < $1.id.uuidString
    }
    #expect(try await users.getAll().map(\.name) == ["alice"] + bobs.map(\.name) + ["carol", "Dave"])
    let carol = try #require(created["carol"])
    try await users.rename(id: carol.id, to: "Aaron")
    #expect(try await users.getAll().map(\.name) == ["Aaron", "alice"] + bobs.map(\.name) + ["Dave"])
    try await users.delete(id: bobs[0].id)
    #expect(try await users.getAll().map(\.name) == ["Aaron", "alice", bobs[1].name, "Dave"])
  }

  @Test("changes() reports what is committed after it is called, in order")
  func liveChanges() async throws {
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    let before = try await users.create(name: "Before", email: "b@example.com")
    let changes = users.changes()
    let ada = try await users.create(name: "Ada", email: "ada@example.com")
    try await users.rename(id: ada.id, to: "Ada L.")
    try await users.delete(id: before.id)
    var seen: [UserChange] = []
    for try await change in changes {
      seen.append(change)
      if seen.count == 3 { break }
    }
    #expect(
      seen == [.registered(ada), .renamed(UserRenamed(id: ada.id, name: "Ada L.")), .deleted(id: before.id)])
  }

  @Test("a replay of the log builds the same table as the live projection, in every order")
  func replayEqualsLive() async throws {
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    var random = SplitMix64(seed: 16)
    var live: [User] = []
    for step in 0..<120 {
      if !live.isEmpty, random.next() % 3 == 0 {
        let user = live.remove(at: Int(random.next() % UInt64(live.count)))
        if random.next() % 2 == 0 {
          try await users.delete(id: user.id)
        } else {
          try await users.rename(id: user.id, to: "renamed \(random.next() % 50)")
          live.append(user)
        }
      } else {
        live.append(try await users.create(name: "user \(random.next() % 50)", email: "u\(step)@example.com"))
      }
    }
    let replay = try store.replay()
    #expect(try store.firstDifference(from: replay) == nil)
    let replayed = try Users.projection.reader(in: replay)
    let all = try await users.getAll()
    #expect(try replayed.rows(in: Users.byName) == all)
    #expect(try replayed.count() == live.count)
    #expect(try replayed.rows().map(\.id) == live.map(\.id).sorted { TableKey.uuid($0) < TableKey.uuid($1) })
  }

  @Test(
    "two devices that rename, and delete, one user while apart hold the same users once they exchange events")
  func devicesConverge() async throws {
    let other = TemporaryDirectory()
    var options = EventStore.Options()
    options.durability = .noSync
    let phone = try open()
    let laptop = try EventStore(path: other.environment(), projections: [Users.projection], options: options)
    /// Stores the events of `source` that `target` lacks, in `source`'s order, as a pull would.
    func exchange(from source: EventStore, to target: EventStore) async throws {
      try await target.ingest(
        try source.events().map {
          IngestedEvent(
            stream: $0.stream,
            event: NewEvent(
              id: $0.id, type: $0.type, schemaVersion: $0.schemaVersion, payload: $0.payload,
              metadata: $0.metadata, recordedAt: $0.recordedAt))
        })
    }
    let onPhone = EventSourcedUserRepository(store: phone)
    let onLaptop = EventSourcedUserRepository(store: laptop)
    let ada = try await onPhone.create(name: "Ada", email: "ada@example.com")
    let bob = try await onPhone.create(name: "Bob", email: "bob@example.com")
    try await exchange(from: phone, to: laptop)
    // Apart: both rename Ada (the laptop last); the phone deletes Bob, the laptop renames him.
    try await onPhone.rename(id: ada.id, to: "Ada on the phone")
    try await onPhone.delete(id: bob.id)
    try await onLaptop.rename(id: bob.id, to: "Bob on the laptop")
    try await onLaptop.rename(id: ada.id, to: "Ada on the laptop")
    try await exchange(from: phone, to: laptop)
    try await exchange(from: laptop, to: phone)
    // On both, the later rename wins (the laptop's, which reaches the phone after its own and the
    // laptop before the phone's older one), and the deleted user stays deleted.
    for users in [onPhone, onLaptop] {
      #expect(try await users.getAll().map(\.name) == ["Ada on the laptop"])
    }
    for store in [phone, laptop] { #expect(try store.firstDifference(from: store.replay()) == nil) }
  }

  @Test("the entity is at most 120 lines in at most 4 files, and imports only EventLog and Foundation")
  func size() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".swift")
    }
    let entity = files.filter { !$0.hasSuffix("Tests.swift") }
    #expect(files.count <= 4)
    var lines = 0
    for file in entity {
      let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      let fileLines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      lines += fileLines.count
      #expect(
        fileLines.filter { $0.hasPrefix("import ") } == ["import EventLog", "import Foundation"], "\(file)")
      #expect(!text.contains("@testable"))
    }
    #expect(lines <= 120)
  }

  @Test("Docs/AddingAnEntity.md shows the whole entity: each of its files, as it is")
  func guideShowsAll() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let guide = folder.appendingPathComponent("../../Docs/AddingAnEntity.md").standardized
    let text = try String(contentsOf: guide, encoding: .utf8)
    for file in ["User.swift", "UserRepository.swift"] {
      let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      #expect(text.contains("```swift\n" + source + "```\n"), "the guide shows \(file) as it is")
    }
  }
}
