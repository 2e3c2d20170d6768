import EventLogCLI
import Foundation
import RestaurantBooking
import RestaurantBookingCLI
import TestKit
import Testing

/// Any app's log (issue 22, items 2 and 3): an app's own `eventlog`, built from its schema in a
/// few lines (`user-eventlog`, the `User` entity's, `Tests/Support/UserEventLog`), and the stock
/// `eventlog` on the environments it writes, whose event types and projections it does not know.
@Suite("Any app's eventlog")
struct AnyAppCLITests {
  /// The stored version of the `users` table (version 1, with update handlers): the table
  /// engine's convergent rule keeps its revision in the top byte.
  static let versionOne: UInt32 = 0x0200_0001
  /// The stored version of the `restaurants` table (version 2, with update handlers).
  static let restaurantsVersion: UInt32 = 0x0200_0002

  @Test("an app's eventlog is a few lines of main.swift: its own commands and every generic one")
  func appEventLog() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    for main in ["../Support/UserEventLog/main.swift", "../../Sources/eventlog/main.swift"] {
      let text = try String(contentsOf: folder.appendingPathComponent(main), encoding: .utf8)
      #expect(text.split(separator: "\n").count <= 10, "\(main)")
    }
    let app = EventLogBinary(executable: EventLogBinary.userAppPath)
    defer { app.remove() }
    let help = try app("--help")
    #expect(help.status == 0, "\(help)")
    #expect(help.stdout.contains("the users data layer"))
    for command in [
      "users create", "users rename", "users delete", "users list", "remote init", "log", "show",
    ]
      + ["replay", "verify", "stats", "export", "import", "push", "pull", "replicate"]
    {
      #expect(help.stdout.contains("\n  \(command) "), "\(command)")
    }
    #expect(!help.stdout.contains("restaurants") && !help.stdout.contains("bookings"))
    let usage = try app("users", "create", "--email", "ada@example.com")
    #expect(usage.status == 64 && usage.stderr.contains("missing '--name <TEXT>'"), "\(usage)")
    #expect(
      usage.stderr.contains("Usage: user-eventlog users create --name TEXT --email TEXT [--json]"), "\(usage)"
    )
    #expect(
      usage.stderr.contains("See 'user-eventlog --help' or 'user-eventlog COMMAND --help'."), "\(usage)")
    #expect(help.stdout.contains("USAGE: user-eventlog [--db PATH] COMMAND [OPTIONS]"), "\(help)")
    #expect(try app("log").status == 1, "a reading command on no environment fails")

    let ada = try Self.create(app, "Ada")
    let bob = try Self.create(app, "Bob")
    #expect(try app("users", "rename", bob, "--name", "Bobby").status == 0)
    #expect(try app("users", "delete", ada).status == 0)
    let gone = try app("users", "rename", ada, "--name", "Ada L.")
    #expect(gone.status == 1 && gone.stderr.contains("no user \(ada)"), "\(gone)")
    #expect(try Self.names(app("users", "list", "--json")) == ["Bobby"])

    let log = try Self.lines(app("log", "--json"))
    #expect(
      log.map { $0["type"] as? String } == ["UserRegistered", "UserRegistered", "UserRenamed", "UserDeleted"])
    let registered = try #require(log.first?["payload"] as? [String: Any])
    #expect(registered["name"] as? String == "Ada" && registered["id"] as? String == ada)
    let verify = try app("verify", "--json")
    #expect(verify.status == 0, "\(verify)")
    let report = try #require(try json(verify) as? [String: Any])
    #expect(report["ok"] as? Bool == true)
    let unchecked = try #require(report["unchecked"] as? [String: Any])
    #expect(
      (unchecked["projections"] as? [Any])?.isEmpty == true
        && (unchecked["events"] as? [Any])?.isEmpty == true)
    let replay = try app("replay")
    #expect(
      replay.status == 0 && replay.stdout.contains("the projections match the live state."), "\(replay)")
    let asOf = try #require(try json(app("replay", "--to", "2", "--json")) as? [String: Any])
    #expect((asOf["users"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Ada", "Bob"])
    let text = try app("replay", "--to", "3")
    #expect(text.status == 0 && text.stdout.contains("Bobby") && text.stdout.contains("2 users"), "\(text)")
    // A Codable row shows its fields in history, with nothing in the plug-in for it.
    let history = try app("history", "user-\(bob)")
    #expect(history.status == 0, "\(history)")
    #expect(
      history.stdout.contains("users/by-id \(bob): changed\n    name  \"Bob\" → \"Bobby\"\n"), "\(history)")
  }

  @Test("Docs/CLI.md shows the worked plug-in and its main.swift as they are compiled")
  func guideShowsThePlugin() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let guide = try String(
      contentsOf: folder.appendingPathComponent("../../Docs/CLI.md").standardized, encoding: .utf8)
    for file in ["UserCommands.swift", "main.swift"] {
      let source = try String(
        contentsOf: folder.appendingPathComponent("../Support/UserEventLog/\(file)").standardized,
        encoding: .utf8)
      #expect(guide.contains("```swift\n" + source + "```\n"), "Docs/CLI.md shows \(file) as it is")
    }
  }

  @Test("help and usage errors name the program as the app calls it")
  func programName() async throws {
    let cli = InProcessCLI(
      app: EventLogApp(
        schema: .restaurantBooking, plugins: [RestaurantBookingCommands()], name: "floorplan-eventlog"))
    let help = await cli("--help")
    #expect(
      help.status == 0 && help.stdout.contains("USAGE: floorplan-eventlog [--db PATH] COMMAND"), "\(help)")
    #expect(help.stdout.contains("See 'floorplan-eventlog COMMAND --help' for details."))
    let log = await cli("log", "--help")
    #expect(log.stdout.contains("USAGE: floorplan-eventlog log [--json]"), "\(log)")
    let group = await cli("bookings", "--help")
    #expect(group.stdout.contains("USAGE: floorplan-eventlog bookings create|delete|list"), "\(group)")
    let wrong = await cli("log", "--bogus")
    #expect(wrong.status == 64 && wrong.stderr.contains("Usage: floorplan-eventlog log "), "\(wrong)")
    #expect(wrong.stderr.contains("See 'floorplan-eventlog --help'"), "\(wrong)")
    // Without a name, in process: `eventlog`.
    #expect(await InProcessCLI()("--help").stdout.contains("USAGE: eventlog [--db PATH]"))
  }

  @Test("the stock eventlog reads an environment the users app wrote, and says what it cannot check")
  func stockOnAnotherAppsEnvironment() throws {
    let app = EventLogBinary(executable: EventLogBinary.userAppPath)
    defer { app.remove() }
    let stock = app.running(EventLogBinary.path)
    let ada = try Self.create(app, "Ada")
    let bob = try Self.create(app, "Bob")
    #expect(try app("users", "rename", bob, "--name", "Bobby").status == 0)
    #expect(try app("users", "delete", ada).status == 0)
    let types = ["UserRegistered", "UserRegistered", "UserRenamed", "UserDeleted"]

    let log = try stock("log")
    #expect(log.status == 0, "\(log)")
    for type in Set(types) { #expect(log.stdout.contains(type)) }
    let lines = try Self.lines(stock("log", "--json"))
    #expect(lines.map { $0["type"] as? String } == types)
    let appLines = try Self.lines(app("log", "--json"))
    for key in ["seq", "id", "stream", "version", "recordedAt"] {
      #expect(lines.map { "\($0[key] ?? "-")" } == appLines.map { "\($0[key] ?? "-")" }, "\(key)")
    }
    #expect(lines.map { $0["metadata"] as? NSDictionary } == appLines.map { $0["metadata"] as? NSDictionary })
    #expect(lines.allSatisfy { $0["payload"] is [String: Any] })
    let show = try stock("show", "3")
    #expect(show.status == 0 && show.stdout.contains("UserRenamed"), "\(show)")
    let shown = try #require(try json(stock("show", "3", "--json")) as? [String: Any])
    #expect(shown["type"] as? String == "UserRenamed" && shown["seq"] as? Int == 3)
    let stats = try #require(try json(stock("stats", "--json")) as? [String: Any])
    #expect(stats["events"] as? Int == 4)
    #expect(stats["types"] as? [String: Int] == ["UserDeleted": 1, "UserRegistered": 2, "UserRenamed": 1])

    let verify = try stock("verify")
    #expect(verify.status == 0, "\(verify)")
    #expect(verify.stdout.hasPrefix("OK: 4 events verified"), "\(verify)")
    #expect(
      verify.stdout.contains("projection 'users' (version \(Self.versionOne)): this build does not know it"),
      "\(verify)")
    #expect(verify.stdout.contains("2 UserRegistered event(s): this build does not know the event type"))
    let report = try #require(try json(stock("verify", "--json")) as? [String: Any])
    #expect(report["ok"] as? Bool == true && (report["problems"] as? [Any])?.isEmpty == true)
    let unchecked = try #require(report["unchecked"] as? [String: Any])
    let projections = try #require(unchecked["projections"] as? [[String: Any]])
    #expect(projections.map { $0["name"] as? String } == ["users", "restaurants", "bookings"])
    #expect(projections.first?["reason"] as? String == "this build does not know it")
    #expect(projections.first?["version"] as? Int == Int(Self.versionOne))
    let events = try #require(unchecked["events"] as? [[String: Any]])
    #expect(events.map { $0["type"] as? String } == ["UserDeleted", "UserRegistered", "UserRenamed"])
    #expect(events.map { $0["count"] as? Int } == [1, 2, 1])

    let replay = try stock("replay")
    #expect(replay.status == 0, "\(replay)")
    #expect(!replay.stdout.contains("the projections match the live state"), "\(replay)")
    #expect(
      replay.stdout.contains(
        "not compared: projection 'users' (version \(Self.versionOne)): this build does not know it"))
    let replayed = try #require(try json(stock("replay", "--json")) as? [String: Any])
    #expect((replayed["notCompared"] as? [[String: Any]])?.first?["name"] as? String == "users")
    #expect((replayed["compared"] as? [Any])?.isEmpty == true)

    // Nothing above wrote: the environment is as the app left it.
    #expect(try Self.names(app("users", "list", "--json")) == ["Bobby"])
    #expect(try app("verify").status == 0)
  }

  @Test(
    "export by the stock eventlog, import into an empty environment, export: the same bytes; the app reads it"
  )
  func stockExportImportRoundTrip() throws {
    let app = EventLogBinary(executable: EventLogBinary.userAppPath)
    defer { app.remove() }
    let stock = app.running(EventLogBinary.path)
    let ada = try Self.create(app, "Ada")
    _ = try Self.create(app, "Bob")
    #expect(try app("users", "rename", ada, "--name", "Ada L.").status == 0)
    let exported = try stock("export")
    #expect(exported.status == 0 && exported.stdout.split(separator: "\n").count == 4, "\(exported)")
    let appExport = try app("export").stdout
    let file = try stock.file("users.jsonl", exported.stdout)

    let copy = EventLogBinary()
    defer { copy.remove() }
    let imported = try copy("import", file)
    #expect(imported.status == 0 && imported.stdout.contains("imported 3 events"), "\(imported)")
    #expect(exportedEvents(try copy("export").stdout) == exportedEvents(exported.stdout))
    let verify = try #require(try json(copy("verify", "--json")) as? [String: Any])
    #expect(verify["ok"] as? Bool == true)
    #expect(
      (verify["skipped"] as? [[String: Any]])?.map { $0["kind"] as? String } == [
        "unreadable", "unreadable", "unreadable",
      ])

    // The app reads what the stock tool imported: a write folds the events its build reads.
    let appOnCopy = copy.running(EventLogBinary.userAppPath)
    #expect(exportedEvents(try appOnCopy("export").stdout) == exportedEvents(appExport))
    #expect(try appOnCopy("replay", "--apply").status == 0)
    #expect(try Self.names(appOnCopy("users", "list", "--json")) == ["Ada L.", "Bob"])
    let report = try #require(try json(appOnCopy("verify", "--json")) as? [String: Any])
    #expect(report["ok"] as? Bool == true && (report["skipped"] as? [Any])?.isEmpty == true, "\(report)")
    let unchecked = try #require(report["unchecked"] as? [String: Any])
    #expect((unchecked["events"] as? [Any])?.isEmpty == true)
    #expect(
      (unchecked["projections"] as? [[String: Any]])?.map { $0["name"] as? String } == [
        "bookings", "restaurants",
      ])
  }

  @Test("a write by the stock eventlog leaves the app's projections alone; the app catches up")
  func stockWriteKeepsTheAppsProjectionsHonest() throws {
    let app = EventLogBinary(executable: EventLogBinary.userAppPath)
    defer { app.remove() }
    let stock = app.running(EventLogBinary.path)
    _ = try Self.create(app, "Ada")
    let before = try app("users", "list", "--json").stdout
    let sync = try stock("restaurants", "sync", "--from", try stock.file("a.json", snapshotA))
    #expect(sync.status == 0, "\(sync)")
    #expect(try stock("verify").status == 0)
    #expect(try stock("restaurants", "list", "--json").stdout.contains("Pasta Palace"))
    #expect(try app("users", "list", "--json").stdout == before)
    // Until the app writes, its projection is behind the head: checked as of its checkpoint.
    let behind = try app("verify")
    #expect(behind.status == 0, "\(behind)")
    #expect(
      behind.stdout.contains(
        "projection 'users' (version \(Self.versionOne)): behind the head: folded through event 1"))
    let replayBehind = try app("replay")
    #expect(
      replayBehind.status == 0 && replayBehind.stdout.contains("no projection was compared at the head"))
    // The app's next write catches its projection up from the checkpoint the stock tool pinned.
    _ = try Self.create(app, "Bob")
    #expect(try Self.names(app("users", "list", "--json")) == ["Ada", "Bob"])
    let verify = try app("verify")
    #expect(
      verify.status == 0
        && verify.stdout.contains("projection 'restaurants' (version \(Self.restaurantsVersion))"),
      "\(verify)")
    #expect(!verify.stdout.contains("behind"))
    #expect(try app("replay").stdout.contains("the projections compared match the live state (users)"))
  }

  // MARK: - Helpers

  /// Registers a user through the app's own command; returns its ID.
  static func create(_ app: EventLogBinary, _ name: String) throws -> String {
    let run = try app(
      "users", "create", "--name", name, "--email", "\(name.lowercased())@example.com", "--json")
    #expect(run.status == 0, "\(run)")
    return try #require((try json(run) as? [String: Any])?["id"] as? String)
  }

  static func names(_ run: Run) throws -> [String] {
    #expect(run.status == 0, "\(run)")
    return try #require(try json(run) as? [[String: Any]]).compactMap { $0["name"] as? String }
  }

  static func lines(_ run: Run) throws -> [[String: Any]] {
    #expect(run.status == 0, "\(run)")
    return try run.stdout.split(separator: "\n").map { line in
      try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
  }
}
