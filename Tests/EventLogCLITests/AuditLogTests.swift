import EventLog
import Foundation
import LMDB
import RestaurantBooking
import TestKit
import Testing

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// The auditor's `log` and `show`: every filter one option, provenance in every line, fixed
/// columns, the newest page on a terminal, and damaged records shown in their place.
@Suite("Audit log on the command line")
struct AuditLogTests {
  /// A log: a sync and three bookings (origin `cli`), and a booking another device (origin `tablet`)
  /// made at an older time, which arrived last.
  static func populated() async throws -> (cli: InProcessCLI, other: UUID, bookings: [String]) {
    let cli = InProcessCLI()
    #expect(await cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    var bookings: [String] = []
    for name in ["Ada", "Grace", "Linus"] {
      let created = await cli(
        "bookings", "create", "--restaurant", pastaID, "--date", "2099-12-24T19:30:00Z", "--party", "2",
        "--name",
        name, "--json")
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
      bookings.append(try #require(object["id"] as? String))
    }
    let other = UUID()
    let store = try EventStore(path: cli.database, schema: .restaurantBooking, options: .fastCLI)
    let id = UUID()
    var event = try NewEvent(
      BookingCreated(
        bookingID: id, restaurantID: try #require(UUID(uuidString: pastaID)), restaurantName: "Pasta Palace",
        date: Date(timeIntervalSince1970: 4_000_000_000), partySize: 3, customerID: testCustomerID,
        customerName: "Edsger", notes: nil,
        createdAt: Date(timeIntervalSince1970: 1_000_000_000)),
      metadata: EventMetadata(origin: "tablet"))
    event.recordedAt = Date(timeIntervalSince1970: 1_000_000_000)
    _ = try await store.ingest([
      EventStore.IngestedEvent(
        stream: RestaurantBookingStreams.booking(id), event: event,
        provenance: RecordedEvent.Provenance(device: other, sequence: 17))
    ])
    await store.close()
    return (cli, other, bookings)
  }

  static func sequences(_ run: ProgramRun) throws -> [Int] {
    try run.stdout.split(separator: "\n").map {
      try #require((try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int)
    }
  }

  @Test(
    "--since and --until take a time or a sequence; --device, --origin, --type, --last and --reverse combine")
  func filters() async throws {
    let (cli, other, _) = try await Self.populated()
    // 1–4 the sync (three restaurants and the refresh), 5–7 the bookings, 8 the other device's.
    func selected(_ arguments: String...) async throws -> [Int] {
      let run = await cli.run(["log", "--json"] + arguments)
      #expect(run.status == 0, "\(run)")
      return try Self.sequences(run)
    }
    #expect(try await selected() == Array(1...8))
    #expect(try await selected("--since", "6") == [6, 7, 8])
    #expect(try await selected("--since", "3", "--until", "5") == [3, 4, 5])
    // By time: the other device's booking was recorded in 2001, the rest now.
    #expect(try await selected("--until", "2010-01-01T00:00:00Z") == [8])
    #expect(try await selected("--since", "2010-01-01T00:00:00Z", "--type", "BookingCreated") == [5, 6, 7])
    #expect(try await selected("--device", other.uuidString) == [8])
    #expect(try await selected("--origin", "cli") == Array(1...7))
    #expect(try await selected("--origin", "tablet") == [8])
    #expect(try await selected("--last", "2") == [7, 8])
    #expect(try await selected("--reverse", "--limit", "3") == [8, 7, 6])
    #expect(try await selected("--last", "2", "--reverse") == [8, 7])
    #expect(try await selected("--type", "BookingCreated", "--last", "1") == [8])
    // Every line says where the event came from.
    let line = try #require(
      try JSONSerialization.jsonObject(with: Data(await cli("log", "--json", "--from", "8").stdout.utf8))
        as? [String: Any])
    #expect(line["device"] as? String == other.uuidString.lowercased())
    #expect(line["deviceSeq"] as? Int == 17)
    #expect(line["origin"] as? String == "tablet")
    #expect(line["recordedAt"] as? String == "2001-09-09T01:46:40.000000Z")
  }

  @Test("a type nobody knows is a usage error listing the types; a bare entity ID is given its stream")
  func misspellings() async throws {
    let (cli, _, bookings) = try await Self.populated()
    let typo = await cli("log", "--type", "BookingDelete")
    #expect(typo.status == 64, "\(typo)")
    #expect(
      typo.stderr.contains("'--type'") && typo.stderr.contains("BookingCreated, BookingDeleted"), "\(typo)")
    let bare = await cli("log", "--stream", bookings[1])
    #expect(bare.status == 1, "\(bare)")
    #expect(bare.stderr.contains("'booking-\(bookings[1])'"), "\(bare)")
    #expect(
      await cli("log", "--stream", "booking-\(bookings[1])", "--json").stdout.split(separator: "\n").count
        == 1)
  }

  @Test("the table prints its header once, in columns of the same width on every line")
  func fixedColumns() async throws {
    let (cli, _, _) = try await Self.populated()
    let lines = await cli("log").stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 9)
    #expect(lines.filter { $0.hasPrefix("SEQ") }.count == 1)
    let start = try #require(lines[0].range(of: "RECORDED AT")).lowerBound.utf16Offset(in: lines[0])
    let streamColumn = try #require(lines[0].range(of: "STREAM")).lowerBound.utf16Offset(in: lines[0])
    for line in lines.dropFirst() {
      let time = line.dropFirst(start).prefix(27)
      #expect(time.count == 27 && time.hasSuffix("Z") && time.contains("."), "\(line)")
      #expect(line.dropFirst(streamColumn - 2).hasPrefix("  "), "\(line)")
    }
  }

  @Test("on a terminal, log shows the newest page and says how to see more; through a pipe, all of it")
  func newestPage() async throws {
    let cli = InProcessCLI()
    #expect(await cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    for index in 0..<45 {
      #expect(
        await cli(
          "bookings", "create", "--restaurant", pastaID, "--date", "2099-12-24T19:30:00Z", "--party", "2",
          "--name", "Guest \(index)"
        ).status == 0)
    }
    let terminal = await cli.run(["log"], terminal: true)
    let rows = terminal.stdout.split(separator: "\n").dropFirst()
    #expect(rows.count == 40)
    #expect(
      rows.first?.hasPrefix("10 ") == true || rows.first?.hasPrefix(" 10 ") == true, "\(rows.first ?? "")")
    #expect(terminal.stderr.contains("the newest 40 of 49 events"), "\(terminal.stderr)")
    #expect(await cli.run(["log"]).stdout.split(separator: "\n").count == 50)
  }

  @Test("a damaged record is shown in its place and the others after it; log and show then exit 1")
  func damagedRecord() async throws {
    let (cli, _, _) = try await Self.populated()
    // Flip a byte of event 6's record inside data.mdb (every copy of Grace's sealed name: the
    // record's and the booking row's).
    let sealed = try await sealedCustomerName(ofEvent: 6, in: cli.database)
    let file = URL(fileURLWithPath: cli.database).appendingPathComponent("data.mdb")
    var data = try Data(contentsOf: file)
    var from = data.startIndex
    var flipped = 0
    while let range = data.range(of: sealed, in: from..<data.endIndex) {
      data[range.lowerBound] ^= 0x01
      from = range.upperBound
      flipped += 1
    }
    #expect(flipped > 0)
    try data.write(to: file)
    let log = await cli("log", "--json")
    #expect(log.status == 1, "\(log)")
    let lines = log.stdout.split(separator: "\n")
    #expect(lines.count == 8)
    #expect(lines[5].contains(#""seq":6"#) && lines[5].contains(#""damaged":"#), "\(lines[5])")
    #expect(log.stderr.contains("event 6"), "\(log.stderr)")
    let table = await cli("log")
    #expect(
      table.status == 1 && table.stdout.contains("DAMAGED") && table.stdout.contains("checksum mismatch"),
      "\(table)")
    #expect(table.stdout.contains("Linus") || table.stdout.split(separator: "\n").count == 9)
    let shown = await cli("show", "6")
    #expect(shown.status == 1 && shown.stderr.contains("event 6 is damaged"), "\(shown)")
    let seventh = try #require(
      try JSONSerialization.jsonObject(
        with: Data(await cli("log", "--json", "--from", "7", "--to", "7").stdout.utf8))
        as? [String: Any])
    let byID = await cli("show", try #require(seventh["id"] as? String), "--json")
    #expect(byID.status == 0, "\(byID)")
    #expect(byID.stdout.contains(#""seq":7"#))
    #expect((await cli("show", UUID().uuidString)).stderr.contains("no event with ID"))
  }
}
