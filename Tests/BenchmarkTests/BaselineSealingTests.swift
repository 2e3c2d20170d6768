import Foundation
import RestaurantBooking
import Sodium
import TestKit
import Testing

@testable import EventLogBenchmarks

/// The baselines do eventlog's work for a booking's personal fields: the name and notes are
/// sealed in what they store (no customer's name or notes in clear in any of their files) and
/// opened where a read shows them (`read.all` lists every booking with its name and notes).
@Suite("Benchmark baselines' sealed fields")
struct BaselineSealingTests {
  static let size = 400

  /// Every customer name and note text of the `read.all` fixture.
  static let clearTexts: Set<String> = {
    var texts: Set<String> = []
    for record in Fixtures.readModelEvents(size: size) {
      if case .bookingCreated(let booking) = record.event {
        texts.insert(booking.customerName ?? "")
        if let notes = booking.notes { texts.insert(notes) }
      }
    }
    return texts
  }()

  /// The outcome of `read.all` over the fixture's bookings and restaurants in clear, in the
  /// repositories' orders: what a baseline's read must show.
  static func expectedReadAll() -> String {
    var restaurants: [Restaurant] = []
    var bookings: [Booking] = []
    for record in Fixtures.readModelEvents(size: size) {
      switch record.event {
      case .restaurantAdded(let row):
        restaurants.append(Restaurant(id: row.id, name: row.name, cuisine: Cuisine(rawValue: row.cuisine)))
      case .bookingCreated(let booking):
        bookings.append(booking)
      default:
        break
      }
    }
    restaurants.sort {
      RawRecords.nameKey($0.name, id: $0.id).lexicographicallyPrecedes(RawRecords.nameKey($1.name, id: $1.id))
    }
    bookings.sort { a, b in
      a.date != b.date ? a.date < b.date : ReadModelFingerprint.precedes(a.id, b.id)
    }
    return ReadModelFingerprint.outcome(restaurants: restaurants, bookings: bookings)
  }

  @Test(
    "lmdb-raw and sqlite store no name or notes in clear, and read.all shows them",
    arguments: [
      SystemID.lmdbRaw, .sqlite,
    ])
  func readAll(system: SystemID) async throws {
    let dir = TemporaryDirectory("benchmark-sealing")
    let fixture = dir.path("fixture")
    let implementation = Systems.make(system)
    try await implementation.prepareFixture(.readAll, size: Self.size, at: fixture)
    try Self.expectNoClearText(under: fixture)

    let run = try await implementation.makeRun(
      .readAll, size: Self.size, batchSize: Scale.guideBatchSize, fixture: fixture, directory: dir.path("run")
    )
    try await run.body()
    #expect(try run.finish() == Self.expectedReadAll())
  }

  @Test("lmdb-append stores no name or notes in clear, and its replay opens them as eventlog's listing")
  func lmdbAppend() async throws {
    let dir = TemporaryDirectory("benchmark-sealing")
    var generator = MixedEventGenerator()
    let records = generator.next(2_000)
    let log = try LMDBAppendSystem.Log(path: dir.path("append"), durable: false)
    try log.append(records)
    try Self.expectNoClearText(under: dir.path("append"), texts: Self.texts(of: records))
    let models = try LMDBRawSystem.replay(log.environment, log.events, keys: log.subjectKeys)
    #expect(!models.bookingsByDate.isEmpty)
    for booking in models.bookingsByDate {
      #expect(booking.customerName.map { Self.texts(of: records).contains($0) } == true)
    }
    // One key per customer, stored apart from the events.
    let customers = Set(
      records.compactMap { record -> UUID? in
        if case .bookingCreated(let booking) = record.event { return RawKeyring.subject(of: booking) }
        return nil
      })
    #expect(try log.environment.read { try RawLMDB.count($0, log.subjectKeys) } == customers.count)
  }

  @Test("a sealed value is eventlog's size, opens with its subject's key only, and not once altered")
  func sealedValue() throws {
    let subject = UUID()
    let key = XChaCha20Poly1305.generateKey()
    let text = "Ada Lovelace"
    let sealed = RawSealing.seal(text, field: .customerName, subject: subject, eventID: UUID(), key: key)
    #expect(sealed.count == 75 + "customerName".utf8.count + text.utf8.count)
    #expect(try sealed.withUnsafeBytes { try RawSealing.subject(of: $0) } == subject)
    #expect(try sealed.withUnsafeBytes { try RawSealing.open($0, keys: [subject: key]) } == text)
    #expect(throws: RawSealing.Unopenable.self) {
      try sealed.withUnsafeBytes { try RawSealing.open($0, keys: [subject: XChaCha20Poly1305.generateKey()]) }
    }
    #expect(throws: RawSealing.Unopenable.self) {
      try sealed.withUnsafeBytes { try RawSealing.open($0, keys: [:]) }
    }
    // A byte of the header (the event ID: associated data) or of the ciphertext altered.
    for offset in [20, sealed.count - 20] {
      var altered = sealed
      altered[offset] ^= 1
      #expect(throws: RawSealing.Unopenable.self) {
        try altered.withUnsafeBytes { try RawSealing.open($0, keys: [subject: key]) }
      }
    }
  }

  /// The customer names and notes of `records`.
  static func texts(of records: [MixedEventRecord]) -> Set<String> {
    var texts: Set<String> = []
    for record in records {
      if case .bookingCreated(let booking) = record.event {
        texts.insert(booking.customerName ?? "")
        if let notes = booking.notes { texts.insert(notes) }
      }
    }
    return texts
  }

  /// No file under `directory` holds any of `texts` in UTF-8 (the fixture holds each of them).
  static func expectNoClearText(under directory: String, texts: Set<String> = clearTexts) throws {
    #expect(texts.count > 3)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(!files.isEmpty)
    var searched = 0
    for file in files {
      let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
      searched += bytes.count
      for text in texts {
        #expect(bytes.range(of: Data(text.utf8)) == nil, "\(file) holds \"\(text)\" in clear")
      }
    }
    #expect(searched > 0)
  }
}
