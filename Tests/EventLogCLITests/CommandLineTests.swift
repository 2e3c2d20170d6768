import EventLog
import Foundation
import TestKit
import Testing

@Suite("eventlog command line (end to end)")
struct CommandLineTests {
  // MARK: Help, version and usage errors (the binary; the parsing itself is tested in process)

  @Test("the built binary: --help and -h, --version, a usage error exits 64 with the usage line")
  func binary() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let top = try cli("--help")
    #expect(top.status == 0 && top.stdout.contains("restaurants sync") && top.stdout.contains("import"))
    #expect(try cli("--version").stdout.hasPrefix("eventlog "))
    for command in [["log"], ["bookings", "create"], ["remote", "status"], ["remote"]] {
      let run = try cli.run(command + ["-h"])
      #expect(
        run.status == 0 && run.stdout.contains("USAGE: eventlog \(command.joined(separator: " "))"), "\(run)")
    }
    let usage = try cli("log", "--from", "nope")
    #expect(usage.status == 64, "\(usage)")
    #expect(
      usage.stderr == """
        Error: invalid value 'nope' for '--from': expected an integer (1…18446744073709551615)
        Usage: eventlog log [--json] [--stream ID] [--type NAME] [--device UUID] [--origin NAME] [--since T] [--until T] [--from SEQ] [--to SEQ] [--last N] [--reverse] [--server-order] [--limit N]
          See 'eventlog --help' or 'eventlog COMMAND --help'.

        """)
    #expect(!FileManager.default.fileExists(atPath: cli.database), "help must not create the environment")
  }

  // MARK: Failures

  @Test("a reading command on a missing environment says so, exits 1 and creates nothing")
  func missingEnvironment() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    for command in [
      ["log"], ["restaurants", "list"], ["bookings", "list"], ["verify"], ["stats"], ["show", "1"],
      ["export"],
    ] {
      let run = try cli.run(command)
      #expect(run.status == 1, "\(command)")
      #expect(run.stderr.contains("no event log at '\(cli.database)'"), "\(run)")
    }
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }

  @Test(
    "failures exit 1 with Error: naming what is wrong, and append nothing",
    arguments: [
      (["show", "999"], "no event 999"),
      (["replay", "--to", "999"], "'--to 999'"),
      (
        [
          "bookings", "create", "--restaurant", "Nowhere", "--date", "2099-01-01T19:00:00Z", "--party", "2",
          "--name", "A",
        ], "no restaurant is named 'Nowhere'"
      ),
      (
        [
          "bookings", "create", "--restaurant", "99999999-9999-4999-8999-999999999999", "--date",
          "2099-01-01T19:00:00Z", "--party", "2", "--name", "A",
        ], "99999999-9999-4999-8999-999999999999"
      ),
      (
        [
          "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2099-01-01T19:00:00Z", "--party",
          "0", "--name", "A",
        ], "0"
      ),
      (
        [
          "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2099-01-01T19:00:00Z", "--party",
          "21", "--name", "A",
        ], "21"
      ),
      (
        [
          "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2099-01-01T19:00:00Z", "--party",
          "2", "--name", "  ",
        ], "customerName"
      ),
      (
        [
          "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2001-01-01T19:00:00Z", "--party",
          "2", "--name", "A",
        ], "past"
      ),
      (
        ["bookings", "delete", "99999999-9999-4999-8999-999999999999"], "99999999-9999-4999-8999-999999999999"
      ),
    ])
  func failures(arguments: [String], message: String) throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let before = try cli.head()
    let run = try cli.run(arguments)
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr.hasPrefix("Error: "), "\(run)")
    #expect(run.stderr.contains(message), "\(run)")
    #expect(try cli.head() == before)
  }

  @Test(
    "a sync from a bad body fails naming the row and appends nothing",
    arguments: [
      ("not json", "JSON"),
      (#"[{"id":"11111111-1111-4111-8111-111111111111","name":"A"}]"#, "cuisine"),
      (#"[{"id":"11111111-1111-4111-8111-111111111111","name":7,"cuisine":"x"}]"#, "name"),
      (#"[{"id":"11111111-1111-4111-8111-111111111111","name":"","cuisine":"x"}]"#, "name"),
      (
        #"[{"id":"11111111-1111-4111-8111-111111111111","name":"A","cuisine":"x"},{"id":"11111111-1111-4111-8111-111111111111","name":"B","cuisine":"y"}]"#,
        "11111111-1111-4111-8111-111111111111"
      ),
    ])
  func badSyncBodies(body: String, message: String) throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let run = try cli("restaurants", "sync", "--from", try cli.file("bad.json", body))
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr.hasPrefix("Error: "))
    #expect(run.stderr.contains(message), "\(run)")
    #expect(try cli.head() == 4)
  }

  @Test("deleting a booking twice fails the second time")
  func deleteTwice() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let created = try cli(
      "bookings", "create", "--restaurant", pastaID, "--date", "2099-01-01T19:00:00Z", "--party", "2",
      "--name", "Ada",
      "--json")
    let id = try #require((try json(created) as? [String: Any])?["id"] as? String)
    #expect(try cli("bookings", "delete", id).status == 0)
    let again = try cli("bookings", "delete", id)
    #expect(again.status == 1)
    #expect(again.stderr.contains(id), "\(again)")
    #expect(try cli.head() == 6)
  }

  // MARK: JSON shapes and the main flow

  @Test("sync, list, create, log, show, stats, verify and replay: every JSON shape")
  func jsonShapes() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let a = try cli.file("a.json", snapshotA)
    let b = try cli.file("b.json", snapshotB)
    // Snapshots A, A, B, B, A.
    let counts = try [a, a, b, b, a].map { file -> [String: Int] in
      let run = try cli("restaurants", "sync", "--from", file, "--json")
      #expect(run.status == 0, "\(run)")
      return try #require(try json(run) as? [String: Int])
    }
    #expect(counts[0] == ["added": 3, "updated": 0, "removed": 0, "unchanged": 0])
    #expect(counts[1] == ["added": 0, "updated": 0, "removed": 0, "unchanged": 3])
    #expect(counts[2] == ["added": 1, "updated": 1, "removed": 1, "unchanged": 1])
    #expect(counts[3] == ["added": 0, "updated": 0, "removed": 0, "unchanged": 3])
    #expect(counts[4] == ["added": 1, "updated": 1, "removed": 1, "unchanged": 1])

    let restaurants = try #require(try json(try cli("restaurants", "list", "--json")) as? [[String: String]])
    #expect(restaurants.map { $0["name"] } == ["Burger Bonanza", "Pasta Palace", "Sushi Sensation"])
    #expect(restaurants.allSatisfy { Set($0.keys) == ["id", "name", "cuisine"] })
    #expect(restaurants[1]["id"] == pastaID)

    let created = try cli(
      "bookings", "create", "--restaurant", "pasta palace", "--date", "2099-12-24T19:30:00Z", "--party", "4",
      "--name",
      "Ada Lovelace", "--json")
    #expect(created.status == 0, "\(created)")
    let booking = try #require(try json(created) as? [String: Any])
    // "erased" and "unavailable" appear only when they name a field.
    #expect(
      Set(booking.keys) == [
        "id", "restaurantId", "restaurantName", "date", "partySize", "customerName", "notes", "createdAt",
        "customerId",
      ])
    #expect(booking["restaurantName"] as? String == "Pasta Palace")
    #expect(booking["date"] as? String == "2099-12-24T19:30:00.000000Z")
    #expect(booking["partySize"] as? Int == 4)
    #expect(booking["customerName"] as? String == "Ada Lovelace")
    #expect(booking["notes"] is NSNull)
    let customer = try #require(booking["customerId"] as? String)
    #expect(UUID(uuidString: customer)?.lowercasedString == customer)
    let listed = try #require(try json(try cli("bookings", "list", "--json")) as? [[String: Any]])
    #expect(listed.count == 1)
    #expect(listed[0]["id"] as? String == booking["id"] as? String)
    #expect(listed[0]["customerId"] as? String == customer)
    #expect(listed[0]["customerName"] as? String == "Ada Lovelace")
    #expect(Set(listed[0].keys) == Set(booking.keys))

    let log = try cli("log", "--json")
    let lines = log.stdout.split(separator: "\n")
    let head = try cli.head()
    #expect(lines.count == head)
    for (index, line) in lines.enumerated() {
      let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      // The contract's keys, the schema version and the provenance (every event here was
      // appended by this device, as its own sequence); the line of an event whose append recorded
      // a layout revision also carries it ("layout"), a booking's its stream as stored, and an
      // event with sealed personal values their data subjects ("subjects").
      #expect(
        Set(event.keys).subtracting(["layout", "storedStream", "subjects"])
          == [
            "seq", "id", "stream", "version", "type", "schemaVersion", "recordedAt", "payload", "metadata",
            "device", "deviceSeq", "origin", "chain",
          ])
      #expect(event["seq"] as? Int == index + 1)
      #expect(event["deviceSeq"] as? Int == index + 1)
      #expect((event["device"] as? String).flatMap(UUID.init(uuidString:)) != nil)
      if let stored = event["storedStream"] as? String {
        #expect(stored.lowercased() == event["stream"] as? String && stored != event["stream"] as? String)
      }
    }
    let shown = try #require(try json(try cli("show", "1", "--json")) as? [String: Any])
    #expect(shown["type"] as? String == "RestaurantAdded")
    #expect(try cli("show", "1").stdout.contains("RestaurantAdded"))

    let stats = try #require(try json(try cli("stats", "--json")) as? [String: Any])
    #expect(stats["events"] as? Int == head)
    #expect((stats["types"] as? [String: Int])?["BookingCreated"] == 1)

    let verify = try #require(try json(try cli("verify", "--json")) as? [String: Any])
    #expect(verify["ok"] as? Bool == true)
    #expect(verify["events"] as? Int == head)
    #expect((verify["problems"] as? [Any])?.isEmpty == true)
    #expect((verify["erasedSubjects"] as? [Any])?.isEmpty == true)

    // The booking's customer is the log's one data subject, its key held here.
    let createdSeq = try #require(
      lines.firstIndex { $0.contains(#""type":"BookingCreated""#) }.map { $0 + 1 })
    let subjects = try #require(try json(try cli("subjects", "--json")) as? [[String: Any]])
    #expect(subjects.count == 1)
    let subject = try #require(subjects.first)
    #expect(Set(subject.keys) == ["subject", "events", "firstSeq", "lastSeq", "key", "erasedAt", "erasure"])
    #expect(subject["subject"] as? String == customer)
    #expect(subject["events"] as? Int == 1)
    #expect(subject["firstSeq"] as? Int == createdSeq && subject["lastSeq"] as? Int == createdSeq)
    #expect(subject["key"] as? Bool == true)
    #expect(subject["erasedAt"] is NSNull && subject["erasure"] is NSNull)

    let replay = try cli("replay")
    #expect(replay.status == 0, "\(replay)")
    #expect(replay.stdout.contains("match the live state"))
    #expect(replay.stdout.contains("replayed \(head) events"))
    #expect(try cli("replay", "--apply").status == 0)
    #expect(try cli("verify").status == 0)

    // Forgetting the customer: the key is destroyed, the booking stays with its name erased, and
    // subjects and verify name the erasure (the SubjectErased event, the last in the log).
    let forget = try cli("bookings", "forget", "--customer", "Ada Lovelace", "--reason", "erasure request")
    #expect(forget.status == 0 && forget.stdout.contains(customer), "\(forget)")
    let lastLine = try #require(try cli("log", "--json").stdout.split(separator: "\n").last)
    let erasure = try #require(
      try JSONSerialization.jsonObject(with: Data(lastLine.utf8)) as? [String: Any])
    #expect(erasure["type"] as? String == "SubjectErased" && erasure["seq"] as? Int == head + 1)
    #expect(erasure["stream"] as? String == "subject-" + customer)
    let erasureID = try #require(erasure["id"] as? String)
    let afterErasure = try #require(try json(try cli("subjects", "--json")) as? [[String: Any]])
    #expect(afterErasure.first?["key"] as? Bool == false)
    #expect(afterErasure.first?["erasure"] as? String == erasureID)
    let erasedAt = try #require(afterErasure.first?["erasedAt"] as? String)
    #expect(ISO8601.date(from: erasedAt) != nil)
    let verified = try #require(try json(try cli("verify", "--json")) as? [String: Any])
    #expect(verified["ok"] as? Bool == true)
    let erased = try #require(verified["erasedSubjects"] as? [[String: String]])
    #expect(erased == [["subject": customer, "erasedAt": erasedAt, "event": erasureID]])
    let forgotten = try #require(try json(try cli("bookings", "list", "--json")) as? [[String: Any]])
    #expect(forgotten.count == 1)
    #expect(forgotten.first?["id"] as? String == booking["id"] as? String)
    #expect(forgotten.first?["customerId"] as? String == customer)
    #expect(forgotten.first?["partySize"] as? Int == 4)
    #expect(forgotten.first?["customerName"] is NSNull)
    #expect(forgotten.first?["erased"] as? [String] == ["customerName"])
    #expect(forgotten.first?["unavailable"] == nil)
    let replayed = try cli("replay")
    #expect(replayed.status == 0 && replayed.stdout.contains("match the live state"), "\(replayed)")
  }

  @Test("log filters by stream, type and range, and limits")
  func logFilters() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    try #require(try cli("restaurants", "sync", "--from", try cli.file("b.json", snapshotB)).status == 0)
    func sequences(_ arguments: String...) throws -> [Int] {
      let run = try cli.run(["log", "--json"] + arguments)
      #expect(run.status == 0, "\(run)")
      return try run.stdout.split(separator: "\n").map {
        try #require(
          (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int)
      }
    }
    #expect(try sequences() == Array(1...8))
    #expect(try sequences("--from", "3", "--to", "5") == [3, 4, 5])
    #expect(try sequences("--limit", "2") == [1, 2])
    #expect(try sequences("--type", "RestaurantsRefreshed") == [4, 8])
    #expect(try sequences("--stream", "restaurant-catalog", "--from", "6") == [6, 7, 8])
    let missing = try cli("log", "--stream", "nothing-here")
    #expect(
      missing.status == 1 && missing.stderr.contains("the log has no stream 'nothing-here'"), "\(missing)")
    #expect(try cli("log").stdout.contains("RestaurantAdded"))
  }

  // MARK: Replay and time travel

  @Test("replay --to SEQ shows the state as of that event")
  func timeTravel() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let afterA = try #require(try json(try cli("restaurants", "list", "--json")) as? [[String: String]])
    let headA = try cli.head()
    try #require(try cli("restaurants", "sync", "--from", try cli.file("b.json", snapshotB)).status == 0)
    try #require(
      try cli(
        "bookings", "create", "--restaurant", sushiID, "--date", "2099-01-01T19:00:00Z", "--party", "2",
        "--name", "B"
      )
      .status == 0)
    let replay = try cli("replay", "--to", String(headA), "--json")
    #expect(replay.status == 0, "\(replay)")
    let state = try #require(try json(replay) as? [String: Any])
    #expect(state["toSeq"] as? Int == headA)
    #expect((state["restaurants"] as? [[String: String]]) == afterA)
    #expect((state["bookings"] as? [Any])?.isEmpty == true)
    let now = try #require(try json(try cli("replay", "--json")) as? [String: Any])
    #expect((now["bookings"] as? [Any])?.count == 1)
    #expect(now["matchesLive"] as? Bool == true)
    #expect(try cli("replay", "--to", "2").stdout.contains("state as of event 2"))
  }

  // MARK: Export and import

  @Test("export, import into an empty environment, export: the same bytes; import refuses a non-empty one")
  func exportImport() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try syncAndBook(cli, name: "Ö \"quoted\"")
    try #require(try cli("restaurants", "sync", "--from", try cli.file("b.json", snapshotB)).status == 0)
    let exported = try cli("export")
    #expect(exported.status == 0)
    let file = try cli.file("export.jsonl", exported.stdout)
    let other = cli.directory.appendingPathComponent("other.db").path
    let imported = try cli.run(["--db", other, "import", file], useDatabase: false)
    #expect(imported.status == 0, "\(imported)")
    let again = try cli.run(["--db", other, "export"], useDatabase: false)
    #expect(exportedEvents(again.stdout) == exportedEvents(exported.stdout))
    #expect(try cli.run(["--db", other, "verify"], useDatabase: false).status == 0)
    let third = cli.directory.appendingPathComponent("third.db").path
    #expect(
      try cli.run(["--db", third, "import", "-"], input: exported.stdout, useDatabase: false).status == 0)
    #expect(
      try cli.run(
        ["--db", third, "export", "--output", cli.directory.appendingPathComponent("o.jsonl").path],
        useDatabase: false
      ).status == 0)
    #expect(
      exportedEvents(try String(contentsOf: cli.directory.appendingPathComponent("o.jsonl"), encoding: .utf8))
        == exportedEvents(exported.stdout))
    let refused = try cli.run(["--db", other, "import", file], useDatabase: false)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("already holds"))
  }

  @Test("import reads any JSON layout of a line and CRLF line ends, and stores the same events")
  func importReformatted() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try syncAndBook(cli, name: "Ö \"quoted\" {x}")
    let exported = try cli("export").stdout
    // Keys sorted (other order, payload too), slashes escaped; one line spells its payload key
    // with an escape, so that only the parsed object can find it.
    var lines = try exported.split(separator: "\n").map { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
      return String(
        decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }
    #expect(lines[0] != exported.split(separator: "\n")[0].description)
    lines[1] = lines[1].replacingOccurrences(of: "\"payload\":", with: #""pay\u006coad":"#)
    let other = cli.directory.appendingPathComponent("other.db").path
    let run = try cli.run(
      ["--db", other, "import", "--unverified", "-"], input: lines.joined(separator: "\r\n") + "\r\n",
      useDatabase: false)
    #expect(run.status == 0, "\(run)")
    #expect(
      exportedEvents(try cli.run(["--db", other, "export"], useDatabase: false).stdout)
        == exportedEvents(exported))
  }

  /// Syncs snapshot A and books a table under `name`, with a note holding a line break: text
  /// that export must escape.
  private func syncAndBook(_ cli: EventLogBinary, name: String) throws {
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    try #require(
      try cli(
        "bookings", "create", "--restaurant", pastaID, "--date", "2099-01-01T19:00:00Z", "--party", "3",
        "--name", name, "--notes", "line\nbreak"
      )
      .status == 0)
  }

  @Test("an import with a bad line fails naming the line and appends nothing")
  func badImport() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let lines = try cli("export").stdout.split(separator: "\n").map(String.init)
    var broken = lines
    broken[2] = broken[2].replacingOccurrences(of: "\"seq\":3", with: "\"seq\":7")
    let other = cli.directory.appendingPathComponent("other.db").path
    let run = try cli.run(
      ["--db", other, "import", "-"], input: broken.joined(separator: "\n") + "\n", useDatabase: false)
    #expect(run.status == 1)
    #expect(run.stderr.contains("line 3"), "\(run)")
    #expect(!FileManager.default.fileExists(atPath: other))
    var garbage = lines
    garbage[1] = "{not json"
    let second = try cli.run(
      ["--db", other, "import", "-"], input: garbage.joined(separator: "\n"), useDatabase: false)
    #expect(second.status == 1)
    #expect(second.stderr.contains("line 2"), "\(second)")
    // A byte that is not UTF-8 inside line 3's text is refused, not replaced.
    var lineBytes = lines.map { Array($0.utf8) }
    lineBytes[2].insert(0xFF, at: lineBytes[2].count - 3)
    let invalid = cli.directory.appendingPathComponent("invalid.jsonl")
    try Data(lineBytes.joined(separator: [UInt8(ascii: "\n")])).write(to: invalid)
    let third = try cli.run(["--db", other, "import", invalid.path], useDatabase: false)
    #expect(third.status == 1)
    #expect(third.stderr.contains("line 3: not valid UTF-8"), "\(third)")
    #expect(!FileManager.default.fileExists(atPath: other))
  }

  // MARK: Damage

  @Test("verify fails on a damaged record, naming its sequence")
  func verifyDamage() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let file = URL(fileURLWithPath: cli.database).appendingPathComponent("data.mdb")
    var data = try Data(contentsOf: file)
    let marker = Data("Sushi Sensation".utf8)
    var from = data.startIndex
    while let range = data.range(of: marker, in: from..<data.endIndex) {
      data[range.lowerBound] ^= 0x20
      from = range.upperBound
    }
    try data.write(to: file)
    let run = try cli("verify", "--json")
    #expect(run.status == 1)
    let report = try #require(try json(run) as? [String: Any])
    #expect(report["ok"] as? Bool == false)
    let problems = try #require(report["problems"] as? [[String: Any]])
    #expect(
      problems.contains { $0["seq"] as? Int == 2 && ($0["problem"] as? String ?? "").contains("checksum") })
    let human = try cli("verify")
    #expect(human.status == 1)
    #expect(human.stderr.contains("Error: verify found"))
    let show = try cli("show", "2")
    #expect(show.status == 1)
    #expect(show.stderr.contains("event 2 is damaged"), "\(show)")
    #expect(try cli("show", "1").status == 0)
  }

  // MARK: Concurrency across processes

  @Test("reading commands run while another process appends")
  func readersWhileAppending() async throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let writer = Task.detached {
      var statuses: [Int32] = []
      for index in 0..<15 {
        let run = try cli(
          "bookings", "create", "--restaurant", pastaID, "--date", "2099-01-01T19:00:00Z", "--party", "2",
          "--name",
          "Guest \(index)")
        statuses.append(run.status)
      }
      return statuses
    }
    var readerStatuses: [Int32] = []
    for _ in 0..<5 {
      for command in [["log"], ["bookings", "list", "--json"], ["verify"], ["replay"], ["stats"]] {
        let run = try cli.run(command)
        if run.status != 0 { Issue.record("\(command): \(run)") }
        readerStatuses.append(run.status)
      }
    }
    let writerStatuses = try await writer.value
    #expect(writerStatuses.allSatisfy { $0 == 0 })
    #expect(readerStatuses.allSatisfy { $0 == 0 })
    #expect(try cli.head() == 4 + 15)
    #expect(try cli("verify").status == 0)
  }
}
