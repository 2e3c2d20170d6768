import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

@testable import EventLogCLI

/// The command line without an app's types (the stock `eventlog`) on an environment an app
/// wrote: `log`, `log --json`, `show` and `export` show its payloads with their field names, and
/// `import` of that export into an empty environment stores the same records, whose `export` is
/// the same bytes (issue 22, item 4).
@Suite("The stock command line on an app's environment")
struct StockEnvironmentTests {
  @Test("log, log --json, show and export show the app's payloads with field names")
  func reads() async throws {
    let app = try await ReviewApp()
    let stock = StockCLI(app: .stock, database: app.path)
    let log = await stock("log")
    #expect(log.status == 0, "\(log)")
    #expect(log.stdout.contains(#"{"mood":"happy","photos":[],"postedAt":"#), "\(log.stdout)")
    #expect(log.stdout.contains(#"{"clue":"butler","n":1.5}"#))
    // Only the event of a type without a layout (raw bytes, schema 3) is unreadable.
    #expect(log.stdout.components(separatedBy: "bytes of an unknown type").count == 2)
    let lines = (await stock("log", "--json")).stdout.split(separator: "\n")
    #expect(lines.count == app.events.count)
    for (line, event) in zip(lines, app.events) {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      guard event.type == ReviewPosted.eventType else { continue }
      let payload = try #require(object["payload"] as? [String: Any])
      #expect(payload["restaurant"] as? String != nil && payload["reviewID"] as? String != nil)
    }
    // The layout travels on the line of the event that recorded each revision.
    let layoutLines = lines.filter { $0.contains(#""layout":"#) }
    #expect(layoutLines.count == app.layouts.count && app.layouts.count >= 4)
    let shown = await stock("show", "2")
    #expect(shown.stdout.contains(#""restaurant":"Chez Zoë""#), "\(shown)")
    let shownJSON = await stock("show", "2", "--json")
    #expect(shownJSON.stdout.split(separator: "\n").first == lines[1])
    // The event nothing describes, and the one stored as JSON.
    #expect(lines[app.binarySequence - 1].contains(#""payload":{"$binary":"AQID","$schemaVersion":3}"#))
    #expect(lines[app.jsonSequence - 1].contains(#""payload":{"clue":"butler","n":1.5}"#))
  }

  @Test(
    "export, import into an empty environment without the types, export: the same records and the same bytes")
  func roundTrip() async throws {
    let app = try await ReviewApp()
    let stock = StockCLI(app: .stock, database: app.path)
    let exported = await stock("export")
    #expect(exported.status == 0)
    let file = try app.directory.file("export.jsonl", Data(exported.stdout.utf8))
    for (name, program) in [("stock", EventLogApp.stock), ("app", EventLogApp.reviewApp)] {
      let target = app.directory.environment("imported-\(name)")
      let importer = StockCLI(app: program, database: target)
      let imported = await importer("import", file)
      #expect(imported.status == 0, "\(imported)")
      // The same records: IDs, versions, recorded-at, payloads byte for byte, JSON flag.
      let original = try EventStore(path: app.path, options: .readOnlyFast)
      let copy = try EventStore(path: target, options: .readOnlyFast)
      #expect(try copy.events(from: 1, limit: 1_000) == original.events(from: 1, limit: 1_000), "\(name)")
      #expect(try copy.layouts() == original.layouts(), "\(name)")
      let again = await importer("export")
      #expect(
        exportedEvents(again.stdout) == exportedEvents(exported.stdout),
        "\(name): export after import gives the same bytes")
    }
  }
}

// MARK: - Fixtures

/// An app the stock command line does not know: reviews of restaurants.
struct ReviewPosted: EventPayload {
  static let eventType = "ReviewPosted"
  enum Mood: String, Codable, Sendable { case happy, meh }
  struct Photo: Codable, Sendable {
    var caption: String?
    var takenAt: Date
    var size: [UInt16]
  }
  var reviewID: UUID
  var restaurant: String
  var stars: Int8
  var text: String?
  var mood: Mood?
  var photos: [Photo]
  var cover: Photo?
  var postedAt: Date
}

struct ReviewEdited: EventPayload {
  static let eventType = "ReviewEdited"
  static let schemaVersion: UInt16 = 2
  var reviewID: UUID
  var text: String
  var editedAt: Date

  static func upcast(from schemaVersion: UInt16, payload: EncodedPayload) throws -> ReviewEdited {
    throw EventStoreError.unsupportedSchemaVersion(type: eventType, version: schemaVersion, supported: 2)
  }
}

/// An environment the review app wrote: reviews whose optionals are nil and arrays empty at
/// first (incomplete layouts), then set (new revisions); an edit; an event of a type with no
/// layout (raw bytes); an event that arrived as JSON of a type nothing here knows.
struct ReviewApp {
  let directory = TemporaryDirectory("stock-cli")
  var path: String { directory.environment("app") }
  var events: [RecordedEvent] = []
  var layouts: [RecordedLayout] = []
  var binarySequence = 0
  var jsonSequence = 0

  init() async throws {
    let store = try EventStore(path: directory.environment("app"), schema: .reviewApp, options: .fastCLI)
    let first = ReviewPosted(
      reviewID: UUID(), restaurant: "Pasta Palace", stars: 4, text: nil, mood: nil, photos: [], cover: nil,
      postedAt: Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7))
    var second = first
    second.reviewID = UUID()
    second.restaurant = "Chez Zoë"
    second.mood = .happy
    second.text = "\"Great\"\n"
    var third = second
    third.reviewID = UUID()
    third.photos = [ReviewPosted.Photo(caption: nil, takenAt: Date(), size: [])]
    var fourth = third
    fourth.reviewID = UUID()
    fourth.cover = ReviewPosted.Photo(caption: "front", takenAt: Date(), size: [640, 480])
    for review in [first, second, third, fourth] {
      try await store.append(
        [try NewEvent(review)], to: StreamID("review-\(review.reviewID.lowercasedString)"))
    }
    try await store.append(
      [try NewEvent(ReviewEdited(reviewID: first.reviewID, text: "Edited", editedAt: Date()))],
      to: StreamID("review-\(first.reviewID.lowercasedString)"))
    let raw = NewEvent(
      id: UUID(), type: "Opaque", schemaVersion: 3, payload: [1, 2, 3],
      metadata: EventMetadata(origin: "tool"))
    try await store.append([raw], to: "opaque")
    let mystery = try NewEvent(
      id: UUID(), type: "Mystery", schemaVersion: 1,
      jsonPayload: Data(#"{ "n": 1.5, "clue": "butler" }"#.utf8),
      metadata: EventMetadata(origin: "server"),
      recordedAt: Date(microsecondsSince1970: 1_800_000_000_000_001))
    try await store.ingest([EventStore.IngestedEvent(stream: "mystery", event: mystery)])
    events = try store.events(from: 1, limit: 100)
    layouts = try store.layouts()
    binarySequence = 6
    jsonSequence = 7
  }
}

extension EventStore.Options {
  static var fastCLI: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return options
  }

  static var readOnlyFast: EventStore.Options {
    var options = fastCLI
    options.readOnly = true
    return options
  }
}

extension EventLogApp {
  /// The stock command line: it knows no app (no event types, no projections, no rules).
  static let stock = EventLogApp(schema: AppSchema(name: "stock", eventTypes: []))
  /// The review app's command line: its event types, no projections.
  static let reviewApp = EventLogApp(schema: .reviewApp)
}

extension AppSchema {
  static let reviewApp = AppSchema(name: "reviews", eventTypes: [ReviewPosted.self, ReviewEdited.self])
}

/// An ``EventLogApp`` run in this process, on one environment.
struct StockCLI {
  let app: EventLogApp
  let database: String

  func callAsFunction(_ arguments: String...) async -> ProgramRun {
    let output = CapturedBytes()
    let errors = CapturedBytes()
    let console = Console(
      errorIsTerminal: false, errorSink: { errors.append($0) }, outputSink: { output.append($0) })
    let status = await app.main(
      arguments: ["--db", database] + arguments, environment: [:], console: console)
    return ProgramRun(status: status, stdout: output.text, stderr: errors.text)
  }
}
