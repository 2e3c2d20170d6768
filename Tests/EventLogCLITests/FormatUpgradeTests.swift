import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

@testable import EventLogCLI

/// An environment written by the last format-3 build (`Fixtures/format3`): read as it is when
/// opened read-only, upgraded to format 4 by the first writable open (layouts learned from its
/// events, rows rebuilt), and exported with its layouts.
@Suite("Format 3 to 4")
struct FormatUpgradeTests {
  /// `bookings list --json` of the fixture as the format-3 build printed it, and `"customerId":
  /// null`: the bookings were recorded before personal data was sealed (their names and notes
  /// stored in clear, with no customer), and still read.
  static let bookings =
    #"[{"id":"01a23331-4c43-75fb-9dda-8468a2c21572","restaurantId":"af4d7aea-48ba-56ee-847e-47038fbcab4c","restaurantName":"Bangkok Bites","date":"2026-12-24T19:30:00.000000Z","partySize":4,"customerName":"Ada","notes":"window seat","createdAt":"2026-12-01T19:59:58.531419Z","customerId":null},"#
    + #"{"id":"01a23331-4d67-72a9-97d1-ffa071c33f95","restaurantId":"af4d7aea-48ba-56ee-847e-47038fbcab4c","restaurantName":"Bangkok Bites","date":"2027-03-01T08:00:00.000000Z","partySize":3,"customerName":"Linus","notes":null,"createdAt":"2026-12-01T19:59:58.823202Z","customerId":null}]"#

  /// A copy of the fixture in a new directory (mode 0700, the file 0600, as the store wants).
  static func fixture(in directory: TemporaryDirectory) throws -> String {
    let source = try #require(Bundle.module.url(forResource: "Fixtures/format3/data", withExtension: "mdb"))
    let path = directory.environment("format3")
    try FileManager.default.createDirectory(
      atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    try FileManager.default.copyItem(atPath: source.path, toPath: path + "/data.mdb")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + "/data.mdb")
    return path
  }

  @Test(
    "read-only: the rows read as they were written, payloads render, verify says the rows wait for the upgrade"
  )
  func readOnly() async throws {
    let directory = TemporaryDirectory("format3")
    let path = try Self.fixture(in: directory)
    let cli = StockCLI(app: InProcessCLI.app, database: path)
    let listed = await cli("bookings", "list", "--json")
    #expect(listed.stdout == Self.bookings + "\n", "\(listed)")
    let log = await cli("log", "--json")
    #expect(log.stdout.split(separator: "\n").count == 17)
    #expect(!log.stdout.contains(#""layout""#), "a read-only open records no layout")
    let verify = await cli("verify")
    #expect(verify.status == 1, "\(verify)")
    #expect(verify.stdout.contains("the first writable open rebuilds them"), "\(verify)")
    let store = try EventStore(path: path, options: .readOnlyFast)
    #expect(try store.layouts().isEmpty)
  }

  @Test(
    "the first writable open upgrades: layouts of every type, rows rebuilt, the same bookings; export carries the layouts"
  )
  func upgrade() async throws {
    let directory = TemporaryDirectory("format3")
    let path = try Self.fixture(in: directory)
    do {
      let store = try EventStore(path: path, schema: .restaurantBooking, options: .fastCLI)
      let layouts = try store.layouts()
      #expect(
        layouts.map { "\($0.type)@\($0.sequence)" }
          == ["BookingCreated@14", "BookingDeleted@16", "RestaurantAdded@1", "RestaurantsRefreshed@13"])
      #expect(layouts.allSatisfy { $0.isComplete })
      #expect(try store.verify().isClean)
    }
    let cli = StockCLI(app: InProcessCLI.app, database: path)
    #expect((await cli("bookings", "list", "--json")).stdout == Self.bookings + "\n")
    #expect((await cli("verify")).status == 0)
    // A booking made after the upgrade is sealed: the layout recorded from the bookings stored in
    // clear describes it, and the environment opens, lists and verifies.
    let made = await cli(
      "bookings", "create", "--restaurant", "Bangkok Bites", "--date", "2099-01-01T19:00:00Z", "--party", "2",
      "--name", "Grace", "--json")
    #expect(made.status == 0, "\(made)")
    let listed = await cli("bookings", "list", "--json")
    #expect(listed.status == 0 && listed.stdout.contains(#""customerName":"Grace""#), "\(listed)")
    #expect((await cli("verify")).status == 0)
    #expect(try EventStore(path: path, options: .readOnlyFast).layouts().count == 4)
    // The upgraded environment exports its layouts; a build without the types imports the same
    // binary records, and exports the same bytes.
    let exported = await cli("export")
    #expect(exported.stdout.components(separatedBy: #""layout":"#).count == 5)
    let file = try directory.file("export.jsonl", Data(exported.stdout.utf8))
    let target = directory.environment("imported")
    let stock = StockCLI(app: .stock, database: target)
    // The bookings' names and notes were stored in clear before sealing existed: their layout
    // kind, `personal`, carries them as text (and the sealed one in Base64).
    #expect(exported.stdout.contains(#"{"kind":"personal","name":"customerName"}"#))
    #expect(exported.stdout.contains(#""customerName":"Ada""#))
    let imported = await stock("import", file)
    #expect(imported.status == 0, "\(imported)")
    #expect(exportedEvents((await stock("export")).stdout) == exportedEvents(exported.stdout))
    let original = try EventStore(path: path, options: .readOnlyFast)
    let copy = try EventStore(path: target, options: .readOnlyFast)
    // The same records, payloads byte for byte. (Stream names are stored as the export shows
    // them: the stock build does not know that the domain stores a booking's UUID in upper case.)
    func displayed(_ events: [RecordedEvent]) -> [RecordedEvent] {
      events.map { event in
        var event = event
        event.stream = StreamID(RestaurantBookingStreams.displayName(of: event.stream))
        return event
      }
    }
    #expect(
      try displayed(copy.events(from: 1, limit: 100)) == displayed(original.events(from: 1, limit: 100)))
    #expect(try copy.events(from: 1, limit: 100).allSatisfy { $0.payloadEncoding == .binary })
  }
}
