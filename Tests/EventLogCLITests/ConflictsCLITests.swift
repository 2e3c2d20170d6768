import EventLog
import Foundation
import TestKit
import Testing

@testable import EventLogCLI

/// A note: an entity of an app the shipped `eventlog` does not know.
struct Note: Entity {
  static let entityName = "Note"
  var id: UUID
  var text: String
  var pinned: Bool
}

/// `eventlog conflicts` and the count in `remote status`, for an app's own entity: two devices
/// change one note's text apart, then exchange their events.
@Suite("eventlog conflicts")
struct ConflictsCLITests {
  static let schema = EntitySchema<Note>()
  let devices = TemporaryDirectory("conflicts-cli")

  /// The in-process `eventlog` of the notes app, on the phone's log.
  var cli: InProcessCLI {
    var cli = InProcessCLI()
    cli.app = EventLogApp(schema: Self.schema.appSchema, name: "notes-log")
    return cli
  }

  func open(_ path: String) throws -> EventStore {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return try EventStore(path: path, schema: Self.schema.appSchema, options: options)
  }

  /// Hands `source`'s events that `target` lacks to `target`, as a pull would.
  static func send(from source: EventStore, to target: EventStore) async throws {
    let events = try source.events().filter { try target.sequence(ofEventID: $0.id) == nil }
    _ = try await target.ingest(
      events.map { event in
        EventStore.IngestedEvent(
          stream: event.stream,
          event: NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt),
          provenance: event.provenance)
      })
  }

  /// Makes the phone's log (at `cli`'s database) hold one conflict on `text`: the tablet's
  /// change, recorded after the phone's, wins. Returns the note and the tablet's device.
  func conflict(_ cli: InProcessCLI) async throws -> (note: Note, tablet: UUID) {
    let phone = try open(cli.database)
    let tablet = try open(devices.environment("tablet.db"))
    let onPhone = EntityRepository(store: phone, schema: Self.schema)
    let onTablet = EntityRepository(store: tablet, schema: Self.schema)
    let note = try await onPhone.create(Note(id: UUID(), text: "first", pinned: false))
    try await Self.send(from: onPhone.store, to: onTablet.store)
    try await onPhone.change(id: note.id) { $0.text = "phone's" }
    try await Task.sleep(for: .milliseconds(2))
    try await onTablet.change(id: note.id) { $0.text = "tablet's" }
    try await Self.send(from: onTablet.store, to: onPhone.store)
    let device = try #require(onTablet.store.deviceID)
    await phone.close()
    await tablet.close()
    return (note, device)
  }

  @Test("lists the conflict as a table and as JSON, with both writes, their sequences and devices")
  func lists() async throws {
    let cli = self.cli
    let (note, tablet) = try await conflict(cli)
    let text = await cli("conflicts")
    #expect(text.status == 0, "\(text)")
    #expect(text.stdout.hasPrefix("TABLE"))
    let row = try #require(text.stdout.split(separator: "\n").last).split(
      separator: " ", omittingEmptySubsequences: true)
    #expect(row.prefix(4) == ["note", "\(note.id.lowercasedString)", "text", "overwritten"], "\(text)")
    #expect(text.stdout.contains(#""tablet's" (seq 3, device \#(tablet.lowercasedString.prefix(8)))"#))
    #expect(text.stdout.contains(#""phone's" (seq 2, device"#))

    let run = await cli("conflicts", "--json")
    #expect(run.status == 0, "\(run)")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
    try #require(list.count == 1)
    #expect(list[0]["table"] as? String == "note" && list[0]["field"] as? String == "text")
    #expect(
      list[0]["key"] as? String == note.id.lowercasedString && list[0]["kind"] as? String == "overwritten")
    let winner = try #require(list[0]["winner"] as? [String: Any])
    let loser = try #require(list[0]["loser"] as? [String: Any])
    #expect(winner["value"] as? String == "tablet's" && loser["value"] as? String == "phone's")
    #expect(winner["seq"] as? Int == 3 && loser["seq"] as? Int == 2)
    #expect(winner["device"] as? String == tablet.lowercasedString && winner["deviceSeq"] as? Int == 2)
    #expect((winner["recordedAt"] as? String).flatMap(ISO8601.date(from:)) != nil)

    #expect(await cli("conflicts", "--table", "note", "--json").stdout == run.stdout)
    #expect(await cli("conflicts", "--limit", "0", "--json").stdout == "[]\n")
  }

  @Test("counts them in remote status, beside the server conflicts' list")
  func remoteStatus() async throws {
    let cli = self.cli
    _ = try await conflict(cli)
    let run = await cli("remote", "status", "--json")
    #expect(run.status == 0, "\(run)")
    let status = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    #expect(status["convergenceConflicts"] as? Int == 1)
    #expect((status["conflicts"] as? [Any])?.isEmpty == true)
    let text = await cli("remote", "status")
    #expect(
      text.stdout.contains("convergence conflicts ('conflicts' lists them)") && text.stdout.contains("  1\n"))
  }

  @Test("says when there are none; refuses a table that keeps none, and a bad limit")
  func errors() async throws {
    let cli = self.cli
    let store = try open(cli.database)
    _ = try await EntityRepository(store: store, schema: Self.schema)
      .create(Note(id: UUID(), text: "only", pinned: true))
    await store.close()
    let none = await cli("conflicts")
    #expect(none.status == 0 && none.stdout == "no conflicts recorded\n", "\(none)")
    let unknown = await cli("conflicts", "--table", "users")
    #expect(unknown.status == 1 && unknown.stdout.isEmpty)
    #expect(
      unknown.stderr == "Error: --table: 'users' is no table with updates (those that keep conflicts: note)\n"
    )
    #expect(await cli("conflicts", "--limit", "-1").status == 64)
    let help = await cli("conflicts", "--help")
    #expect(help.status == 0 && help.stdout.contains("--table NAME") && help.stdout.contains("--limit N"))
  }
}
