import Foundation
import LMDB
import TestKit
import Testing

@testable import EventLog

/// Layouts recorded in the environment (format 4): a store that does not know an app's types
/// renders its payloads with field names, revisions are added as payloads show more, events whose
/// payload arrives as JSON are stored as they came and folded once a build knows their type, and
/// a format-3 environment is upgraded.
@Suite("Layouts in the environment")
struct LayoutStoreTests {
  @Test("a store opened without the app's types renders its payloads as the types would")
  func stockRendering() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var rng = SplitMix64(seed: 22)
    var appended: [ReviewPosted] = []
    try await withStore(at: path, options: .app) { store in
      for index in 0..<40 {
        let review = ReviewPosted.random(&rng, index: index)
        appended.append(review)
        try await store.append([try NewEvent(review)], to: StreamID("review-\(index % 5)"))
      }
    }
    try await withStore(at: path) { stock in
      let events = try stock.events(from: 1, limit: 100)
      #expect(events.count == 40)
      for (event, review) in zip(events, appended) {
        let rendered = try stock.payloadJSON(of: event)
        #expect(rendered.form == .layout)
        #expect(rendered.json == (try PayloadJSONEncoder().encode(review)))
        // JSON back to the same bytes, by the layout alone.
        let again = try stock.event(
          id: event.id, type: event.type, schemaVersion: event.schemaVersion, payloadJSON: rendered.json,
          metadata: event.metadata, recordedAt: event.recordedAt)
        #expect(again.payloadEncoding == .binary && again.payload == event.payload)
      }
      // With the types, the same text.
      var withTypes = try stock.payloadTranscoder()
      withTypes = PayloadTranscoder(eventTypes: .app, layouts: try stock.layouts())
      for event in events {
        let registered = withTypes.json(of: event)
        #expect(registered.form == .registered)
        #expect(registered.json == (try stock.payloadJSON(of: event)).json)
      }
      // An unknown type without a layout: today's fallback.
      #expect(
        PayloadTranscoder().json(of: RecordedEvent.sample(type: "Mystery", payload: [1, 2, 3])).json
          == Data(#"{"$binary":"AQID","$schemaVersion":1}"#.utf8))
    }
  }

  @Test(
    "a nil optional and an empty array record an incomplete revision; a payload with more adds a revision")
  func revisions() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    // `Probe` is appended by this test only: this process has learned nothing of it before.
    let first = Probe(id: UUID(), detail: nil, items: [], kind: nil)
    let second = Probe(id: UUID(), detail: nil, items: [], kind: nil)
    let third = Probe(id: UUID(), detail: Probe.Detail(note: "n", at: Date()), items: [], kind: nil)
    let fourth = Probe(id: UUID(), detail: nil, items: [Probe.Detail(note: "i", at: Date())], kind: .b)
    let fifth = Probe(id: UUID(), detail: third.detail, items: fourth.items, kind: .a)
    try await withStore(at: path) { store in
      try await store.append([try NewEvent(first)], to: "p")
      try await store.append([try NewEvent(second)], to: "p")
      #expect(try store.layouts().map(\.revision) == [1])
      #expect(try store.layouts().first?.isComplete == false)
      try await store.append([try NewEvent(third)], to: "p")
      try await store.append([try NewEvent(fourth), try NewEvent(fifth)], to: "p")
      let layouts = try store.layouts()
      #expect(layouts.map(\.revision) == [1, 2, 3])
      #expect(
        layouts.map(\.sequence) == [1, 3, 4],
        "each revision at the first event it describes that the last did not")
      #expect(layouts.last?.isComplete == true)
      // Revisions are kept: never edited in place.
      #expect(layouts.first?.isComplete == false)
    }
    try await withStore(at: path) { stock in
      for (event, probe) in zip(try stock.events(from: 1, limit: 10), [first, second, third, fourth, fifth]) {
        #expect(try stock.payloadJSON(of: event).json == (try PayloadJSONEncoder().encode(probe)))
      }
    }
  }

  @Test(
    "a JSON payload nothing reads is stored as it came and skipped; a build with the type folds it in its place"
  )
  func jsonPayloads() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var rng = SplitMix64(seed: 5)
    let reviews = (0..<3).map { ReviewPosted.random(&rng, index: $0) }
    let texts = try reviews.map { try PayloadJSONEncoder().encode($0) }
    // A device without the types pulls the events as JSON.
    try await withStore(at: path, projections: [ReviewsProjection()]) { device in
      var events: [EventStore.IngestedEvent] = []
      for (index, text) in texts.enumerated() {
        // Not canonical as it arrives (white space, another key order): stored canonical.
        let spaced = Data(
          String(decoding: text, as: UTF8.self).replacingOccurrences(of: ",", with: " , ").utf8)
        let event = try device.event(
          id: UUID(), type: ReviewPosted.eventType, schemaVersion: 1, payloadJSON: spaced,
          metadata: EventMetadata(origin: "server"),
          recordedAt: Date(microsecondsSince1970: 1_000 + Int64(index)))
        #expect(event.payloadEncoding == .json)
        events.append(EventStore.IngestedEvent(stream: StreamID("review-\(index)"), event: event))
      }
      let outcomes = try await device.ingest(events)
      for outcome in outcomes {
        guard case .skipped(_, .unreadable, let reason) = outcome else {
          Issue.record("not skipped as unreadable: \(outcome)")
          continue
        }
        #expect(reason.contains("JSON"))
      }
      let stored = try device.events(from: 1, limit: 10)
      #expect(stored.map(\.payloadEncoding) == [.json, .json, .json])
      #expect(stored.map { Data($0.payload) } == texts)
      #expect(try stored.map { try device.payloadJSON(of: $0) }.map(\.form) == [.stored, .stored, .stored])
      #expect(try device.read { try $0.projection("reviews").count(in: "by-id") } == 0)
      #expect(try device.verify().isClean)
    }
    // The app opens the environment: its types read the JSON, and the events are folded in.
    var app: EventStore? = try EventStore(
      path: path, schema: .reviews(projections: [ReviewsProjection()]), options: .app)
    try await check(try #require(app))
    await close(&app)

    func check(_ store: EventStore) async throws {
      #expect(try store.skippedCount() == 0)
      #expect(try store.read { try $0.projection("reviews").count(in: "by-id") } == 3)
      let replay = try store.replay()
      #expect(try store.firstDifference(from: replay) == nil)
      #expect(try store.verify().isClean)
      let event = try #require(try store.event(at: 2))
      #expect(event.payloadEncoding == .json, "the record is kept as it came")
      #expect(try event.decode(ReviewPosted.self) == reviews[1])
      #expect(try store.payloadJSON(of: event).json == texts[1])
      // Appending JSON is refused: only events from elsewhere come as JSON.
      await #expect(throws: EventStoreError.self) {
        try await store.append(
          [
            NewEvent(
              id: UUID(), type: "X", schemaVersion: 1, jsonPayload: Data("{}".utf8), metadata: EventMetadata()
            )
          ], to: "x")
      }
    }
  }

  @Test("JSON of a known type, or of one a layout describes, is stored in binary")
  func jsonToBinary() async throws {
    let dir = TemporaryDirectory()
    var rng = SplitMix64(seed: 9)
    let review = ReviewPosted.random(&rng, index: 1)
    let text = try PayloadJSONEncoder().encode(review)
    let binary = try BinaryEncoder().encode(review)
    try await withStore(at: dir.environment("typed"), schema: .reviews()) { store in
      let event = try store.event(
        id: UUID(), type: ReviewPosted.eventType, schemaVersion: 1, payloadJSON: text,
        metadata: EventMetadata(),
        recordedAt: nil)
      #expect(event.payloadEncoding == .binary && event.payload == binary)
      // The JSON contradicts the type: an error, naming the field.
      #expect(throws: PayloadConversionError.self) {
        try store.event(
          id: UUID(), type: ReviewPosted.eventType, schemaVersion: 1, payloadJSON: Data(#"{"stars":1}"#.utf8),
          metadata: EventMetadata(), recordedAt: nil)
      }
      // A newer schema version than the type's: kept as JSON.
      let newer = try store.event(
        id: UUID(), type: ReviewPosted.eventType, schemaVersion: 2, payloadJSON: text,
        metadata: EventMetadata(),
        recordedAt: nil)
      #expect(newer.payloadEncoding == .json)
      try await store.ingest([EventStore.IngestedEvent(stream: "r", event: event)])
      #expect(try store.layouts().count == 1, "an ingested event converted by its type records its layout")
    }
  }

  /// Issue 28, finding 5: the binary coder writes only what the type holds, so JSON with a
  /// member the type does not read lost it when it was stored in binary.
  @Test(
    "JSON with a member its type does not read is kept as JSON, every member, and folded by what the type reads",
    arguments: JSONShape.allCases)
  func jsonWithMembersTheTypeDoesNotRead(shape: JSONShape) async throws {
    let expected = shape.encoding
    let dir = TemporaryDirectory()
    var rng = SplitMix64(seed: 28)
    // Index 1: a text, a mood, one tag; no editedAt.
    var review = ReviewPosted.random(&rng, index: 1)
    review.editedAt = nil
    let text = shape.edit(String(decoding: try PayloadJSONEncoder().encode(review), as: UTF8.self))
    try await withStore(at: dir.environment(), schema: .reviews(projections: [ReviewsProjection()])) {
      store in
      let event = try store.event(
        id: UUID(), type: ReviewPosted.eventType, schemaVersion: 1, payloadJSON: Data(text.utf8),
        metadata: EventMetadata(), recordedAt: nil)
      #expect(event.payloadEncoding == expected, "\(shape): \(text)")
      let outcomes = try await store.ingest([EventStore.IngestedEvent(stream: "r", event: event)])
      guard case .stored = outcomes.first else {
        Issue.record("\(shape): not folded: \(outcomes)")
        return
      }
      #expect(try store.read { try $0.projection("reviews").count(in: "by-id") } == 1)
      let stored = try #require(try store.event(at: 1))
      #expect(try stored.decode(ReviewPosted.self) == review, "\(shape)")
      if expected == .json {
        // Every member, as it came (canonical).
        #expect(stored.payload == Array(try JSONNode.parse(Data(text.utf8)).rendered), "\(shape)")
      }
      #expect(try store.verify().isClean)
    }
  }

  @Test(
    "a format-3 environment reads without layouts, and its first writable open upgrades it: layouts learned, projections rebuilt"
  )
  func upgrade() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var rng = SplitMix64(seed: 3)
    let reviews = (0..<6).map { ReviewPosted.random(&rng, index: $0) }
    try await withStore(at: path, projections: [ReviewsProjection()], options: .app) { store in
      for review in reviews { try await store.append([try NewEvent(review)], to: "r") }
    }
    // What format 3 held: no layout, the format number.
    do {
      var options = Environment.Options()
      options.maxDatabases = 16
      let raw = try Environment(path: path, options: options)
      let meta = try raw.openDatabase("meta", flags: [])
      let layouts = try raw.openDatabase("layouts", flags: [])
      try raw.write { txn in
        try txn.removeAll(in: layouts)
        var value = UInt32(3).littleEndian
        try Array("format".utf8).withUnsafeBytes { k in
          try withUnsafeBytes(of: &value) { try txn.put($0, forKey: k, in: meta) }
        }
      }
    }
    var readOnly = EventStore.Options.app
    readOnly.readOnly = true
    try await withStore(at: path, schema: .reviews(projections: [ReviewsProjection()]), options: readOnly) {
      reader in
      #expect(try reader.layouts().isEmpty)
      let event = try #require(try reader.event(at: 1))
      #expect(try reader.payloadJSON(of: event).form == .registered)
    }
    try await withStore(at: path, schema: .reviews(projections: [ReviewsProjection()])) { store in
      let layouts = try store.layouts()
      #expect(layouts.first?.sequence == 1 && layouts.first?.type == ReviewPosted.eventType)
      #expect(try store.read { try $0.projection("reviews").count(in: "by-id") } == 6)
      #expect(try store.verify().isClean)
    }
    var formatOptions = Environment.Options()
    formatOptions.maxDatabases = 16
    let raw = try Environment(path: path, options: formatOptions)
    let meta = try raw.openDatabase("meta", flags: [])
    let format = try raw.read { txn in
      try Array("format".utf8).withUnsafeBytes { k in
        try txn.withValue(forKey: k, in: meta) { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
      }
    }
    #expect(format == 5)
  }
}

// MARK: - Fixtures

/// An app's event, of every pitfall inference has: optionals that may be nil, arrays that may be
/// empty, nested structs, a raw-value enum, dates.
struct ReviewPosted: EventPayload, Equatable {
  static let eventType = "ReviewPosted"
  enum Mood: String, Codable, Sendable, CaseIterable { case happy, meh, angry }
  struct Tag: Codable, Equatable, Sendable {
    var name: String
    var weight: Double?
  }
  var reviewID: UUID
  var restaurant: String
  var stars: Int8
  var text: String?
  var mood: Mood?
  var tags: [Tag]
  var postedAt: Date
  var editedAt: Date?

  static func random(_ rng: inout SplitMix64, index: Int) -> ReviewPosted {
    ReviewPosted(
      reviewID: rng.uuid(), restaurant: "Restaurant \(index % 3)", stars: Int8(index % 5 + 1),
      text: index % 2 == 0 ? nil : "Review \(index) \"quoted\"",
      mood: index % 3 == 0 ? nil : Mood.allCases[index % 3],
      tags: (0..<(index % 3)).map { Tag(name: "t\($0)", weight: $0 == 0 ? nil : Double(index) / 7) },
      postedAt: Date(timeIntervalSinceReferenceDate: Double.random(in: 8e8...9e8, using: &rng)),
      editedAt: index % 4 == 1 ? Date() : nil)
  }
}

/// A type only ``LayoutStoreTests/revisions()`` appends.
struct Probe: EventPayload, Equatable {
  static let eventType = "Probe"
  enum Kind: String, Codable, Sendable { case a, b }
  struct Detail: Codable, Equatable, Sendable {
    var note: String
    var at: Date
  }
  var id: UUID
  var detail: Detail?
  var items: [Detail]
  var kind: Kind?
}

/// Reviews by ID: their stars.
struct ReviewsProjection: Projection {
  var name = "reviews"
  var version: UInt32 = 1
  var tables = ["by-id"]

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    guard event.type == ReviewPosted.eventType else { return }
    #expect(event.payloadEncoding == .binary, "the projections see binary payloads only")
    let review = try event.decode(ReviewPosted.self)
    try state.putRow(Int(review.stars), forKey: Array(review.reviewID.uuidString.utf8), in: "by-id")
  }
}

/// Admits what the app's registry reads.
struct RegistryAdmission: EventAdmission {
  func verdict(for event: RecordedEvent) -> EventVerdict { EventTypeRegistry.app.readability(of: event) }
}

extension EventTypeRegistry {
  static var app: EventTypeRegistry { EventTypeRegistry([ReviewPosted.self]) }
}

extension AppSchema {
  /// The review app: its event type, `projections`, and the registry's readability as its rule.
  static func reviews(projections: [any Projection] = []) -> AppSchema {
    AppSchema(
      name: "reviews", eventTypes: [ReviewPosted.self], projections: projections,
      admission: RegistryAdmission())
  }
}

extension EventStore.Options {
  /// ``fast`` options.
  static var app: EventStore.Options { .fast }
}

extension RecordedEvent {
  static func sample(type: String, payload: [UInt8]) -> RecordedEvent {
    RecordedEvent(
      sequence: 1, id: UUID(), stream: "s", version: 1, type: type, schemaVersion: 1, recordedAt: Date(),
      metadata: EventMetadata(), payload: payload)
  }
}

/// A `ReviewPosted`'s JSON as rendered, or with a member its type does not read, or spelled
/// otherwise (the same value to the type).
enum JSONShape: String, CaseIterable, Sendable {
  case asRendered, extraKey, extraKeyNull, extraKeyInAnElement, nullForANilOptional, upperCaseUUIDs

  func edit(_ text: String) -> String {
    switch self {
    case .asRendered: text
    case .extraKey: #"{"photos":[1,{"a":null}],"# + text.dropFirst()
    case .extraKeyNull: #"{"photos":null,"# + text.dropFirst()
    case .extraKeyInAnElement:
      text.replacingOccurrences(of: #"{"name":"t0""#, with: #"{"colour":"red","name":"t0""#)
    case .nullForANilOptional: #"{"editedAt":null,"# + text.dropFirst()
    case .upperCaseUUIDs: text.uppercasingUUIDs()
    }
  }

  /// How the payload is stored: in binary when the type reads every member.
  var encoding: PayloadEncoding {
    switch self {
    case .asRendered, .nullForANilOptional, .upperCaseUUIDs: .binary
    case .extraKey, .extraKeyNull, .extraKeyInAnElement: .json
    }
  }
}

extension String {
  /// The text with every UUID in it in upper case.
  fileprivate func uppercasingUUIDs() -> String {
    let pattern = try? NSRegularExpression(
      pattern: "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    var result = self
    for match in pattern?.matches(in: self, range: NSRange(startIndex..., in: self)) ?? [] {
      guard let range = Range(match.range, in: self) else { continue }
      result = result.replacingOccurrences(of: self[range], with: self[range].uppercased())
    }
    return result
  }
}
