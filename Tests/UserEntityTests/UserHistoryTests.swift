import EventLog
import Foundation
import TestKit
import Testing

/// What `eventlog history` and `eventlog diff` are built on (`EventStore.projectionChanges`): the
/// entries each event changed, and those two points of the log differ by, shown by the
/// projection (a `Codable` row by its fields; the index and the stamps left out).
@Suite("Projection changes")
struct UserHistoryTests {
  let dir = TemporaryDirectory()

  func open() throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: dir.environment(), schema: .users, options: options)
  }

  /// Ada registered (1), Bo registered (2), Ada renamed twice (3, 4), Bo deleted (5).
  func populated() async throws -> (store: EventStore, ada: UUID, bo: UUID) {
    let store = try open()
    let users = EventSourcedUserRepository(store: store)
    let ada = try await users.create(name: "Ada", email: "ada@example.com")
    let bo = try await users.create(name: "Bo", email: "bo@example.com")
    try await users.rename(id: ada.id, to: "Ada L")
    try await users.rename(id: ada.id, to: "Ada Lovelace")
    try await users.delete(id: bo.id)
    #expect(try store.head() == 5)
    return (store, ada.id, bo.id)
  }

  func field(_ fields: [ShownField]?, _ name: String) -> String? { fields?.first { $0.name == name }?.json }

  @Test("each event's changes: a row added with its fields, changed fields old → new, removed")
  func history() async throws {
    let (store, ada, _) = try await populated()
    let steps = try store.projectionChanges(ofEvents: [1, 3, 4])
    #expect(steps.map(\.sequence) == [1, 3, 4])
    // Only the row table shows: the by-name index and the stamps are left out.
    for step in steps { #expect(step.changes.allSatisfy { $0.projection == "users" && $0.table == "by-id" }) }
    let added = try #require(steps[0].changes.first)
    #expect(steps[0].changes.count == 1 && added.kind == .added && added.before == nil)
    #expect(added.keyText == ada.lowercasedString)
    #expect(field(added.after, "name") == #""Ada""# && field(added.after, "email") == #""ada@example.com""#)
    #expect(added.changedFields == ["createdAt", "email", "id", "name"])
    let renamed = try #require(steps[1].changes.first)
    #expect(renamed.kind == .changed && renamed.changedFields == ["name"])
    #expect(field(renamed.before, "name") == #""Ada""# && field(renamed.after, "name") == #""Ada L""#)
    #expect(field(steps[2].changes.first?.before, "name") == #""Ada L""#)
    #expect(field(steps[2].changes.first?.after, "name") == #""Ada Lovelace""#)
    let deleted = try store.projectionChanges(ofEvents: [5])
    #expect(deleted.first?.changes.map(\.kind) == [.removed])
    #expect(field(deleted.first?.changes.first?.before, "name") == #""Bo""#)
  }

  @Test("two points differ by what the replays at each hold: an entry changed twice is one change")
  func diff() async throws {
    let (store, ada, bo) = try await populated()
    // 2 → 5: Ada renamed (twice: one change, old → newest), Bo removed.
    let changes = try store.projectionChanges(from: 2, to: 5)
    #expect(changes.map(\.keyText).sorted() == [ada, bo].map(\.lowercasedString).sorted())
    let adaChange = try #require(changes.first { $0.keyText == ada.lowercasedString })
    #expect(adaChange.kind == .changed && field(adaChange.before, "name") == #""Ada""#)
    #expect(field(adaChange.after, "name") == #""Ada Lovelace""#)
    #expect(changes.first { $0.keyText == bo.lowercasedString }?.kind == .removed)
    // From the empty log: what a replay to that point holds, every entry added.
    let all = try store.projectionChanges(from: 0, to: 5)
    #expect(all.map(\.kind) == [.added])
    let replayed = try Users.projection.reader(in: try store.replay(through: 5)).rows(in: Users.byName)
    #expect(replayed.map(\.name) == ["Ada Lovelace"])
    #expect(field(all.first?.after, "name") == #""Ada Lovelace""#)
    // The same point twice: nothing.
    #expect(try store.projectionChanges(from: 3, to: 3).isEmpty)
  }

  @Test("a time stands for the log up to the event before the first recorded after it")
  func timePoints() async throws {
    let (store, _, _) = try await populated()
    let third = try #require(try store.event(at: 3))
    #expect(try store.sequence(asOf: third.recordedAt) == 3)
    #expect(
      try store.sequence(asOf: Date(microsecondsSince1970: third.recordedAt.microsecondsSince1970 - 1)) == 2)
    #expect(try store.sequence(asOf: Date(timeIntervalSince1970: 0)) == 0)
    #expect(try store.sequence(asOf: Date.distantFuture) == 5)
    #expect(try store.lateEvents(recordedBy: third.recordedAt, after: 3).isEmpty)
  }
}
