import EventLog
import Foundation
import TestKit
import Testing

@Suite("Event type registry and JSON")
struct RegistryTests {
  @Test("a stored payload renders as JSON and the JSON encodes back to the same bytes")
  func jsonRoundTrip() throws {
    let registry = EventTypeRegistry([NoteAdded.self, NoteRemoved.self])
    // The layer's erasure is in every registry.
    #expect(registry.typeNames == ["NoteAdded", "NoteRemoved", "SubjectErased"])
    let payload = NoteAdded(noteID: UUID(), text: "a \"quoted\" / text", priority: 3, tag: nil)
    let event = try NewEvent(payload)
    let recorded = RecordedEvent(
      sequence: 1, id: event.id, stream: "s", version: 1, type: event.type, schemaVersion: 1,
      recordedAt: Date(),
      metadata: EventMetadata(), payload: event.payload)
    let json = try #require(try registry.json(of: recorded))
    let text = String(decoding: json, as: UTF8.self)
    #expect(text.hasPrefix("{\"noteID\":\""))
    #expect(text.contains("\"priority\":3"))
    let back = try registry.payload(fromJSON: json, type: "NoteAdded")
    #expect(back.schemaVersion == 1)
    #expect(back.bytes == event.payload)
  }

  @Test("an unknown type renders as nil and does not parse")
  func unknownType() throws {
    let registry = EventTypeRegistry()
    let recorded = RecordedEvent(
      sequence: 1, id: UUID(), stream: "s", version: 1, type: "Mystery", schemaVersion: 1, recordedAt: Date(),
      metadata: EventMetadata(), payload: [])
    #expect(try registry.json(of: recorded) == nil)
    #expect(throws: (any Error).self) { try registry.payload(fromJSON: Data("{}".utf8), type: "Mystery") }
  }

  @Test(
    "ISO 8601 dates format in UTC with microseconds and parse back",
    arguments: [0, 1.5, -1.25, 1_764_500_000.123456, 1_764_500_000]
  )
  func iso8601(seconds: Double) throws {
    let date = Date(timeIntervalSince1970: seconds)
    let text = ISO8601.string(from: date)
    #expect(text.hasSuffix("Z"))
    let parsed = try #require(ISO8601.date(from: text))
    #expect(abs(parsed.timeIntervalSince1970 - seconds) < 0.000_001, "\(text)")
  }

  @Test("ISO 8601 known values and offsets")
  func iso8601Known() {
    #expect(ISO8601.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
    #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1.5)) == "1970-01-01T00:00:01.500000Z")
    #expect(ISO8601.date(from: "2026-11-30T19:30:00+01:00") == ISO8601.date(from: "2026-11-30T18:30:00Z"))
    #expect(ISO8601.date(from: "tomorrow") == nil)
    #expect(ISO8601.date(from: "2026-13-01T00:00:00Z") == nil)
    #expect(ISO8601.date(from: "2026-11-30t18:30:00z") == ISO8601.date(from: "2026-11-30T18:30:00Z"))
    // Every fraction digit counts (before format 4, digits past the sixth were dropped).
    #expect(
      ISO8601.date(from: "2026-11-30T18:30:00.1234567Z")?.timeIntervalSinceReferenceDate
        == 817_756_200.123_456_7)
    #expect(ISO8601.date(from: "1969-12-31T23:59:59.5Z")?.timeIntervalSince1970 == -0.5)
    #expect(ISO8601.date(from: "2024-02-29T00:00:00Z") != nil, "a leap day")
  }

  @Test(
    "malformed or impossible date-times are refused",
    arguments: [
      "", "2026-11-30", "2026-11-30T18:30Z", "2026-11-30T18:30:00", "2026-11-30T18:30:00.Z",
      "2026-11-30T18:30:00Zjunk", "2026-11-30 18:30:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
      "2026-11-30T24:00:00Z", "2026-11-30T18:60:00Z", "2026-11-30T18:30:60Z", "2026-00-10T00:00:00Z",
      "2026-11-30T18:30:00+0100", "2026-11-30T18:30:00+24:00", "２026-11-30T18:30:00Z",
      "2026-11-30T18:30:00.５Z",
    ])
  func iso8601Refused(text: String) {
    #expect(ISO8601.date(from: text) == nil, "\(text)")
  }

  @Test(
    "the parser and the formatter agree with Foundation's ISO8601DateFormatter on 2,000 random date-times")
  func iso8601AgreesWithFoundation() throws {
    var random = SplitMix64(seed: 8601)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    let offsets = ["Z", "+00:00", "+05:30", "-08:00", "+14:00", "-12:00"]
    for _ in 0..<2_000 {
      // Whole seconds from 1900 to 2100, in UTC or with an offset.
      let seconds = -2_208_988_800 + Int64(random.next() % 6_311_433_600)
      let utc = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
      #expect(
        ISO8601.string(from: Date(timeIntervalSince1970: Double(seconds))) == utc.dropLast() + ".000000Z",
        "formatting \(seconds)")
      let offset = offsets[Int(random.next() % UInt64(offsets.count))]
      let text = String(utc.dropLast()) + offset
      let expected = try #require(formatter.date(from: text), "\(text)")
      #expect(ISO8601.date(from: text) == expected, "\(text)")
      // With a fraction: the same instant plus the fraction, to the microsecond.
      let micros = Int(random.next() % 1_000_000)
      let fraction = String(String(micros + 1_000_000).dropFirst())
      let parsed = try #require(ISO8601.date(from: String(utc.dropLast()) + "." + fraction + offset))
      #expect(
        abs(parsed.timeIntervalSince1970 - expected.timeIntervalSince1970 - Double(micros) / 1e6) < 1e-6,
        "\(text) .\(fraction)")
      let reparsed = try #require(ISO8601.date(from: ISO8601.string(from: parsed)))
      #expect(ISO8601.string(from: reparsed) == ISO8601.string(from: parsed), "a round trip is stable")
    }
  }
}

@Suite("Guards")
struct GuardTests {
  @Test("a stream append without events guards the others on that stream's version")
  func versionGuard() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("catalog v1")], to: "catalog")
    let guarded = try await store.append([
      EventStore.StreamAppend(stream: "catalog", expectedVersion: .exactly(1), events: []),
      EventStore.StreamAppend(stream: "booking-1", expectedVersion: .noStream, events: [try note("booked")]),
    ])
    #expect(guarded.events.count == 1)
    try await store.append([try note("catalog v2")], to: "catalog")
    await #expect(
      throws: EventStoreError.wrongExpectedVersion(stream: "catalog", expected: .exactly(1), actual: 2)
    ) {
      try await store.append([
        EventStore.StreamAppend(stream: "catalog", expectedVersion: .exactly(1), events: []),
        EventStore.StreamAppend(
          stream: "booking-2", expectedVersion: .noStream, events: [try note("too late")]),
      ])
    }
    #expect(try store.version(of: "booking-2") == 0)
    #expect(try store.version(of: "catalog") == 2)
  }

  @Test("a read-only store refuses appends and a missing one is named")
  func readOnly() async throws {
    let dir = TemporaryDirectory()
    var options = EventStore.Options.fast
    options.readOnly = true
    let missing = dir.environment("missing")
    do {
      _ = try EventStore(path: missing, options: options)
      Issue.record("no error")
    } catch let EventStoreError.storage(error) {
      #expect(error.kind == .fileAccess && (error.engineError.code == .noSuchFile))
      #expect(error.description.contains(missing))
    }
  }
}
