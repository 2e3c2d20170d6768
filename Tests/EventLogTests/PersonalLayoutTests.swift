import Foundation
import TestKit
import Testing

@testable import EventLog

/// A payload with personal fields, as the app that seals them has it.
struct Noted: EventPayload, Equatable {
  static let eventType = "Noted"
  var id: UUID
  var name: Personal<String>
  var note: Personal<String>?
}

/// The same stored type as a build before personal values had a layout kind of their own
/// recorded it: its fields observed as `Data` (`note`, `nil`, left unknown, as `Personal<String>?`
/// was).
struct NotedAsData: EventPayload {
  static let eventType = "Noted"
  var id: UUID
  var name: Data
  var note: Unseen?
  struct Unseen: Codable, Sendable { var bytes: Data }
}

/// The same stored type before it held personal data: text.
struct NotedAsText: EventPayload {
  static let eventType = "Noted"
  var id: UUID
  var name: String
  var note: String?
}

/// A personal field's layout kind, `personal`: a build without the app's types renders a sealed
/// value in Base64 and one stored in clear (before sealing existed) as its text, as `Personal`'s
/// own `Codable` does, and reads both back into the same bytes; layouts recorded with `data` for
/// such a field (before the kind existed) keep working.
@Suite("A personal field's layout kind")
struct PersonalLayoutTests {
  let dir = TemporaryDirectory()

  static let subject = UUID()

  /// A well-formed sealed value of `text` for field `field` of `eventID`, under a fixed key.
  static func sealed(_ text: String, field: String, eventID: UUID) throws -> Personal<String> {
    let header = SealedValue.header(subject: subject, eventID: eventID, field: field)
    let plaintext = try BinaryEncoder().encode(text)
    return Personal(
      storedBytes: SealedValue.seal(plaintext, header: header, key: Array(repeating: 7, count: 32)))
  }

  static let expected = PayloadLayout(
    root: .structure([
      .init(name: "id", kind: .uuid), .init(name: "name", kind: .personal),
      .init(name: "note", kind: .optional(.personal)),
    ]))

  @Test("observed from any value (in clear, sealed, to seal, nil) and probed from the type: `personal`")
  func kindOfAPersonalField() throws {
    let id = UUID()
    let values = [
      Noted(id: id, name: Personal(storedBytes: Array("Ada".utf8)), note: nil),
      Noted(id: id, name: try Self.sealed("Ada", field: "name", eventID: id), note: nil),
      Noted(id: id, name: Personal("Ada", subject: Self.subject), note: Personal("x", subject: Self.subject)),
      Noted(
        id: id, name: Personal(storedBytes: Array("Ada".utf8)),
        note: try Self.sealed("x", field: "note", eventID: id)),
    ]
    for value in values {
      #expect(try PayloadLayout(observing: value) == Self.expected)
    }
    #expect(try PayloadLayout(probing: Noted.self) == Self.expected)
    let text = Self.expected.jsonText
    #expect(String(decoding: text, as: UTF8.self).contains(#"{"kind":"personal","name":"name"}"#))
    #expect(try PayloadLayout(jsonText: text) == Self.expected)
  }

  @Test(
    "JSON: a sealed value in Base64, one in clear as its text, as the type renders them; read back the same")
  func renderingAndReadingBack() throws {
    let id = UUID()
    let values = [
      Noted(id: id, name: try Self.sealed("Ada", field: "name", eventID: id), note: nil),
      Noted(id: id, name: Personal(storedBytes: Array("Ada".utf8)), note: nil),
      // Text that is Base64 (of "Ada"), but not of a sealed value: text.
      Noted(id: id, name: Personal(storedBytes: Array("QWRh".utf8)), note: Personal(storedBytes: [])),
      Noted(
        id: id, name: Personal(storedBytes: Array("Zoë \"quoted\"\n".utf8)),
        note: try Self.sealed("by the window", field: "note", eventID: id)),
    ]
    for value in values {
      let bytes = try BinaryEncoder().encode(value)
      let json = try Self.expected.json(ofPayload: bytes)
      #expect(json == (try PayloadJSONEncoder().encode(value)))
      #expect(try Self.expected.payload(fromJSON: json) == bytes)
    }
    let clear = try Self.expected.json(
      ofPayload: BinaryEncoder().encode(
        Noted(id: id, name: Personal(storedBytes: Array("Ada".utf8)), note: nil)))
    #expect(String(decoding: clear, as: UTF8.self).contains(#""name":"Ada""#))
    // Bytes that are neither a sealed value nor text have no JSON form that reads back.
    for stored: [UInt8] in [[0xC3, 0x28], [0xFF, 0x01, 0x02]] {
      let bytes = try BinaryEncoder().encode(Noted(id: id, name: Personal(storedBytes: stored), note: nil))
      #expect(throws: PayloadTranscodingError.self) { try Self.expected.json(ofPayload: bytes) }
    }
    #expect(throws: PayloadTranscodingError.self) {
      try Self.expected.payload(fromJSON: Data(#"{"id":"\#(id.lowercasedString)","name":3}"#.utf8))
    }
  }

  @Test(
    "a layout that recorded `data` (or `string`) for the field reads as the same field; merged, `personal`")
  func recordedDataIsTheSameField() throws {
    let recorded = PayloadLayout(
      root: .structure([
        .init(name: "id", kind: .uuid), .init(name: "name", kind: .data),
        .init(name: "note", kind: .optional(.unknown)),
      ]))
    let evolution = LayoutEvolution(from: recorded, to: Self.expected)
    #expect(evolution.isSame && evolution.incompatibility == nil)
    #expect(recorded.merged(with: Self.expected) == Self.expected)
    #expect(Self.expected.merged(with: recorded) == Self.expected)
    // A field that held text before it became personal reads its text as a value in clear.
    let text = try PayloadLayout(probing: NotedAsText.self)
    let fromText = LayoutEvolution(from: text, to: Self.expected)
    #expect(fromText.incompatibility == nil && fromText.sealedFields == ["name", "note"])
    let stored = try BinaryEncoder().encode(NotedAsText(id: UUID(), name: "Ada", note: nil))
    #expect(stored.withUnsafeBytes { Self.expected.transcoding($0, from: text) } == stored)
    // Another kind is not the same field.
    let numbered = PayloadLayout(root: .structure([.init(name: "name", kind: .int)]))
    let personal = PayloadLayout(root: .structure([.init(name: "name", kind: .personal)]))
    #expect(LayoutEvolution(from: numbered, to: personal).incompatibility?.field == "name")
    #expect(numbered.merged(with: personal) == nil)
  }

  @Test("an environment that recorded `data` opens, reads its values in clear, and records `personal` next")
  func environmentRecordedWithData() async throws {
    func open(_ type: any EventPayload.Type) throws -> EventStore {
      try EventStore(
        path: dir.environment(), schema: AppSchema(name: "notes", eventTypes: [type]), options: .fast)
    }
    let first = UUID()
    var store: EventStore? = try open(NotedAsData.self)
    try await store?.append(
      [try NewEvent(NotedAsData(id: first, name: Data("Ada".utf8), note: nil))], to: "notes")
    let recorded = try #require(try store?.layouts().first).layout.jsonText
    #expect(String(decoding: recorded, as: UTF8.self).contains(#"{"kind":"data","name":"name"}"#))
    await close(&store)

    store = try open(Noted.self)
    let opened = try #require(store)
    let keyring = try opened.keyring()
    let old = try #require(try opened.events(from: 1).first).decode(Noted.self)
    #expect(!old.name.isSealed && keyring.reveal(old.name).value == "Ada")
    let second = Noted(
      id: UUID(), name: Personal("Bo", subject: Self.subject), note: Personal("x", subject: Self.subject))
    try await store?.append([try NewEvent(second)], to: "notes")
    let events = try opened.events(from: 1)
    let sealed = try events[1].decode(Noted.self)
    let keys = try opened.keyring()
    #expect(sealed.name.isSealed && keys.reveal(sealed.name).value == "Bo")
    // The note held a value the recorded layout did not know: the next revision, merged, is
    // `personal` where the first said `data`.
    let layouts = try opened.layouts()
    #expect(layouts.map(\.revision) == [1, 2])
    #expect(layouts.last?.layout == Self.expected)
    await close(&store)

    // A build without the types renders and imports the sealed event by its revision.
    let export = PayloadTranscoder(eventTypes: EventTypeRegistry([Noted.self]), layouts: layouts)
    var importer = PayloadTranscoder(eventTypes: EventTypeRegistry())
    importer.infersLayouts = false
    for layout in layouts { importer.add(layout) }
    let rendered = export.json(of: events[1])
    let back = try importer.event(
      id: events[1].id, type: events[1].type, schemaVersion: events[1].schemaVersion,
      payloadJSON: rendered.json,
      metadata: events[1].metadata, recordedAt: events[1].recordedAt)
    #expect(back.payload == events[1].payload)
  }
}
