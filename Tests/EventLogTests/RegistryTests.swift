import EventLog
import Foundation
import Testing

@Suite("Event type registry and JSON")
struct RegistryTests {
  @Test("a stored payload renders as JSON and the JSON encodes back to the same bytes")
  func jsonRoundTrip() throws {
    let registry = EventTypeRegistry([NoteAdded.self, NoteRemoved.self])
    #expect(registry.typeNames == ["NoteAdded", "NoteRemoved"])
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
    #expect(ISO8601.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1.5)) == "1970-01-01T00:00:01.5Z")
    #expect(ISO8601.date(from: "2026-11-30T19:30:00+01:00") == ISO8601.date(from: "2026-11-30T18:30:00Z"))
    #expect(ISO8601.date(from: "tomorrow") == nil)
    #expect(ISO8601.date(from: "2026-13-01T00:00:00Z") == nil)
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
      StreamAppend(stream: "catalog", expectedVersion: .exactly(1), events: []),
      StreamAppend(stream: "booking-1", expectedVersion: .noStream, events: [try note("booked")]),
    ])
    #expect(guarded.events.count == 1)
    try await store.append([try note("catalog v2")], to: "catalog")
    await #expect(
      throws: EventStoreError.wrongExpectedVersion(stream: "catalog", expected: .exactly(1), actual: 2)
    ) {
      try await store.append([
        StreamAppend(stream: "catalog", expectedVersion: .exactly(1), events: []),
        StreamAppend(stream: "booking-2", expectedVersion: .noStream, events: [try note("too late")]),
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
      #expect(error.code == .noSuchFile)
      #expect(error.description.contains(missing))
    }
  }
}
