import EventLog
import Foundation
import TestKit
import Testing

/// The `User` entity (issue 16, item 3; issue 22, item 6): an entity on the public API of
/// `EventLog` alone, written by the repository-pattern rules. Docs/AddingAnEntity.md shows all of it.
/// These tests are its composition root: they open the store and make the concrete repository.
@Suite("User entity")
struct UserTests {
  let dir = TemporaryDirectory()

  func open(_ dir: TemporaryDirectory? = nil) throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: (dir ?? self.dir).environment(), schema: .users, options: options)
  }

  /// The repository as a view model gets it: the protocol, made over `store`.
  func repository(_ store: EventStore) -> any UserRepository { EventSourcedUserRepository(store: store) }

  @Test("the domain model is not the stored form: it is not Codable, and has a sample")
  func domainModel() {
    let model: Any.Type = User.self
    #expect(!(model is any Encodable.Type) && !(model is any Decodable.Type) && !(model is any TableRow.Type))
    let sample = User.sample
    #expect(!sample.name.isEmpty && sample.email.contains("@"))
    #expect(
      User(UserRow(id: sample.id, name: sample.name, email: sample.email, createdAt: sample.createdAt))
        == sample)
  }

  @Test("the repository's rules: a name and an email are required; only a live user changes")
  func rules() async throws {
    let store = try open()
    let users = repository(store)
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
    #expect(try await users.user(id: ada.id) == ada)
    await #expect(throws: UserError.invalidName) { try await users.rename(id: ada.id, to: "") }
    try await users.delete(id: ada.id)
    #expect(try await users.user(id: ada.id) == nil)
    await #expect(throws: UserError.unknownUser(ada.id)) { try await users.delete(id: ada.id) }
    await #expect(throws: UserError.unknownUser(ada.id)) { try await users.rename(id: ada.id, to: "Bo") }
    let stranger = UUID()
    await #expect(throws: UserError.unknownUser(stranger)) { try await users.delete(id: stranger) }
    #expect(try store.head() == 2)
  }

  @Test("getAll is in name order, ignoring case, then by ID; a rename moves a user")
  func order() async throws {
    let users = repository(try open())
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
    let users = repository(store)
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
      seen == [.registered(ada), .renamed(id: ada.id, name: "Ada L."), .deleted(id: before.id)])
  }

  @Test("a replay of the log builds the same table as the live projection, in every order")
  func replayEqualsLive() async throws {
    let store = try open()
    let users = repository(store)
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
    #expect(try replayed.rows(in: Users.byName, as: User.init) == all)
    #expect(try replayed.count() == live.count)
    #expect(try replayed.rows().map(\.id) == live.map(\.id).sorted { TableKey.uuid($0) < TableKey.uuid($1) })
  }

  @Test(
    "two devices that rename, and delete, one user while apart hold the same users once they exchange events")
  func devicesConverge() async throws {
    let other = TemporaryDirectory()
    let phone = try open()
    let laptop = try open(other)
    /// Stores the events of `source` that `target` lacks, in `source`'s order, as a pull would.
    func exchange(from source: EventStore, to target: EventStore) async throws {
      try await target.ingest(
        try source.events().map {
          EventStore.IngestedEvent(
            stream: $0.stream,
            event: NewEvent(
              id: $0.id, type: $0.type, schemaVersion: $0.schemaVersion, payload: $0.payload,
              metadata: $0.metadata, recordedAt: $0.recordedAt))
        })
    }
    let onPhone = repository(phone)
    let onLaptop = repository(laptop)
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

  @Test("the entity keeps the repository-pattern rules, in at most 5 files and 170 lines")
  func patternRules() throws {
    let entity = try Self.entityFiles()
    #expect(entity.count <= 5)
    var lines = 0
    for (file, text) in entity {
      let fileLines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      lines += fileLines.count
      let imports = fileLines.filter { $0.hasPrefix("import ") }
      #expect(Set(imports).isSubset(of: ["import EventLog", "import Foundation"]), "\(file)")
      #expect(!text.contains("@testable"))
      // What a view model sees (the model, the protocol) does not depend on the store.
      if ["User.swift", "UserRepository.swift"].contains(file) { #expect(imports == ["import Foundation"]) }
      // Only the composition root makes the concrete repository.
      #expect(!text.contains("EventSourcedUserRepository("), "\(file)")
    }
    #expect(lines <= 170)
    let commands = try String(
      contentsOf: Self.folder.appendingPathComponent("../Support/UserEventLog/UserCommands.swift"),
      encoding: .utf8)
    #expect(!commands.contains("EventSourcedUserRepository("))
    let root = try String(
      contentsOf: Self.folder.appendingPathComponent("../Support/UserEventLog/main.swift"), encoding: .utf8)
    #expect(root.contains("EventSourcedUserRepository("))
  }

  @Test("Docs/AddingAnEntity.md shows the whole entity and the app's main.swift, and only compiled code")
  func guideShowsAll() throws {
    let guide = Self.folder.appendingPathComponent("../../Docs/AddingAnEntity.md").standardized
    let text = try String(contentsOf: guide, encoding: .utf8)
    let main = Self.folder.appendingPathComponent("../Support/UserEventLog/main.swift").standardized
    let tests = Self.folder.appendingPathComponent("UserTests.swift")
    let diningTable = Self.folder.appendingPathComponent("../DiningTableTests/DiningTable.swift").standardized
    let diningTests = Self.folder.appendingPathComponent("../DiningTableTests/DiningTableTests.swift")
      .standardized
    let shown =
      try Self.entityFiles() + [
        ("main.swift", String(contentsOf: main, encoding: .utf8)),
        ("DiningTable.swift", String(contentsOf: diningTable, encoding: .utf8)),
      ]
    for (file, source) in shown {
      #expect(text.contains("```swift\n" + source + "```\n"), "the guide shows \(file) as it is")
    }
    // Every Swift block of the guide is a compiled file, or a part of one (the tests' composition root).
    let compiled =
      shown.map(\.1) + [
        try String(contentsOf: tests, encoding: .utf8), try String(contentsOf: diningTests, encoding: .utf8),
      ]
    let blocks = text.components(separatedBy: "```swift\n").dropFirst().compactMap {
      $0.components(separatedBy: "```\n").first
    }
    #expect(blocks.count == shown.count + 2)
    for block in blocks {
      #expect(compiled.contains { $0.contains(block) }, "not compiled:\n\(block)")
    }
  }

  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

  /// The entity's files (all but the tests), by name, with their text.
  static func entityFiles() throws -> [(String, String)] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().filter {
      $0.hasSuffix(".swift") && !$0.hasSuffix("Tests.swift")
    }.map { ($0, try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) }
  }
}
