import Foundation
import LMDB
import TestKit
import Testing

@testable import EventLog

// An app's type in three builds: the same stored type name, one Swift type per build.

/// The first build's event: a table placed.
struct PlacedV1: EventPayload, Equatable {
  static let eventType = "Placed"
  var id: UUID
  var label: String
  var spot: Spot
  struct Spot: Codable, Equatable, Sendable { var x: Int }
}

/// The next build: optional fields added, at the top and inside a nested struct, no version
/// raised.
struct PlacedV2: EventPayload, Equatable {
  static let eventType = "Placed"
  var id: UUID
  var note: String?
  var label: String
  var spot: Spot
  var tags: [String]?
  struct Spot: Codable, Equatable, Sendable {
    var x: Int
    var y: Int?
  }
}

/// A build that lost a non-optional field.
struct PlacedWithoutLabel: EventPayload {
  static let eventType = "Placed"
  var id: UUID
  var spot: PlacedV1.Spot
}

/// A build that changed a field's type.
struct PlacedNumberedLabel: EventPayload {
  static let eventType = "Placed"
  var id: UUID
  var label: Int
  var spot: PlacedV1.Spot
}

/// A build that added a field that is not optional.
struct PlacedWithSeats: EventPayload {
  static let eventType = "Placed"
  var id: UUID
  var label: String
  var spot: PlacedV1.Spot
  var seats: Int
}

/// The first build's row, and the next build's, with an optional field added.
struct SpotRowV1: Codable, Equatable, TableRow {
  var id: UUID
  var label: String
}

struct SpotRowV2: Codable, Equatable, TableRow {
  var id: UUID
  var label: String
  var note: String?
}

/// A row that lost a field.
struct SpotRowWithoutLabel: Codable, Equatable, TableRow {
  var id: UUID
}

/// A row of the `spots` table, in any build.
protocol SpotRow: TableRow, Codable {
  var id: UUID { get }
}

extension SpotRowV1: SpotRow {}
extension SpotRowV2: SpotRow {}
extension SpotRowWithoutLabel: SpotRow {}

private func spots<Row: SpotRow>(
  _ row: Row.Type, version: UInt32 = 1, make: @escaping @Sendable (PlacedV1) -> Row
) -> TableProjection<Row> {
  TableProjection<Row>(
    name: "spots", version: version, primaryKey: .uuid { $0.id },
    handlers: [.create(PlacedV1.self) { make($0) }])
}

/// Two builds of an app on one environment, one after the other: a field added to an event or a
/// row without a new version reads as `nil` in what was stored before; a change that cannot be
/// read is refused at open, before anything is written; an older build reads a newer
/// environment and refuses to write it.
@Suite("Evolving a type without a new version")
struct LayoutEvolutionTests {
  let dir = TemporaryDirectory()

  func open(
    _ types: [any EventPayload.Type], _ projections: [any Projection] = [], readOnly: Bool = false
  ) throws -> EventStore {
    var options = EventStore.Options.fast
    options.readOnly = readOnly
    return try EventStore(
      path: dir.environment(), schema: AppSchema(name: "floor", eventTypes: types, projections: projections),
      options: options)
  }

  /// Two events of the first build, then the store closed.
  func storeFirstBuild() async throws -> [PlacedV1] {
    let placed = [
      PlacedV1(id: UUID(), label: "Window", spot: .init(x: 3)),
      PlacedV1(id: UUID(), label: "Bar", spot: .init(x: -1)),
    ]
    var store: EventStore? = try open([PlacedV1.self])
    for event in placed { try await store?.append([try NewEvent(event)], to: "floor") }
    await close(&store)
    return placed
  }

  /// The environment's data file.
  func dataDigest() throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: dir.environment() + "/data.mdb"))
  }

  @Test("the probed layout of a type is the layout its values show")
  func probing() throws {
    let value = PlacedV2(
      id: UUID(), note: "n", label: "l", spot: .init(x: 1, y: 2), tags: ["a"])
    #expect(
      String(decoding: try PayloadLayout(probing: PlacedV2.self).jsonText, as: UTF8.self)
        == String(decoding: try PayloadLayout(observing: value).jsonText, as: UTF8.self))
    // A raw-value enum behind an optional gives its raw value's kind; a dictionary is refused.
    struct WithEnum: Codable {
      enum Mood: String, Codable { case happy }
      var mood: Mood?
    }
    #expect(
      try PayloadLayout(probing: WithEnum.self).root
        == .structure([.init(name: "mood", kind: .optional(.string))]))
    #expect(throws: PayloadLayoutError.self) { try PayloadLayout(probing: [String: Int].self) }
  }

  @Test("bytes are rewritten between layouts by field name, inside arrays and optionals, both ways")
  func transcoding() throws {
    struct Old: Codable, Equatable {
      struct Item: Codable, Equatable { var a: String }
      var items: [Item]
      var cover: Item?
    }
    struct New: Codable, Equatable {
      struct Item: Codable, Equatable {
        var b: Int?
        var a: String
      }
      var extra: Bool?
      var items: [Item]
      var cover: Item?
    }
    let old = Old(items: [.init(a: "x"), .init(a: "y")], cover: .init(a: "z"))
    let oldLayout = try PayloadLayout(probing: Old.self)
    let newLayout = try PayloadLayout(probing: New.self)
    #expect(LayoutEvolution(from: oldLayout, to: newLayout).addedFields == ["extra", "items.b", "cover.b"])
    let oldBytes = try BinaryEncoder().encode(old)
    let rewritten = try #require(oldBytes.withUnsafeBytes { newLayout.transcoding($0, from: oldLayout) })
    #expect(
      try BinaryDecoder().decode(New.self, from: rewritten)
        == New(
          extra: nil, items: [.init(b: nil, a: "x"), .init(b: nil, a: "y")], cover: .init(b: nil, a: "z")))
    // Back: the fields the old layout lacks are left out.
    let new = New(extra: true, items: [.init(b: 7, a: "x")], cover: nil)
    let newBytes = try BinaryEncoder().encode(new)
    let narrowed = try #require(newBytes.withUnsafeBytes { oldLayout.transcoding($0, from: newLayout) })
    #expect(try BinaryDecoder().decode(Old.self, from: narrowed) == Old(items: [.init(a: "x")], cover: nil))
    // Bytes the recorded layout does not describe are not rewritten.
    #expect(Array(oldBytes.dropLast()).withUnsafeBytes { newLayout.transcoding($0, from: oldLayout) } == nil)
  }

  @Test("an optional field added to an event payload reads as nil in the events stored before")
  func addedOptionalEventField() async throws {
    let placed = try await storeFirstBuild()
    var store: EventStore? = try open([PlacedV2.self])
    let old = try #require(store).events(from: 1)
    #expect(
      try old.map { try $0.decode(PlacedV2.self) }
        == placed.map { PlacedV2(id: $0.id, note: nil, label: $0.label, spot: .init(x: $0.spot.x, y: nil)) })
    // The new build's events are stored in its layout, recorded as the next revision.
    let new = PlacedV2(id: UUID(), note: "by the door", label: "Door", spot: .init(x: 0, y: 4), tags: ["new"])
    try await store?.append([try NewEvent(new)], to: "floor")
    let all = try #require(store).events(from: 1)
    #expect(try all.last?.decode(PlacedV2.self) == new)
    #expect(try all.first?.decode(PlacedV2.self).label == "Window")
    let layouts = try #require(store).layouts()
    #expect(layouts.map(\.revision) == [1, 2])
    #expect(layouts.last?.sequence == 3)
    #expect(try layouts.last?.layout == PayloadLayout(probing: PlacedV2.self))
    await close(&store)
    // Opening the new build again finds everything as it left it.
    store = try open([PlacedV2.self])
    #expect(
      try #require(store).events(from: 1).map { try $0.decode(PlacedV2.self).label } == [
        "Window", "Bar", "Door",
      ])
    await close(&store)
  }

  @Test("an export renders every payload with all its fields, and an import stores the same bytes")
  func exportRoundTrip() async throws {
    _ = try await storeFirstBuild()
    var store: EventStore? = try open([PlacedV2.self])
    let new = PlacedV2(id: UUID(), note: "n", label: "Door", spot: .init(x: 5, y: 6), tags: ["t"])
    try await store?.append([try NewEvent(new)], to: "floor")
    let events = try #require(store).events(from: 1)
    let layouts = try #require(store).layouts()
    await close(&store)
    for registry in [
      EventTypeRegistry([PlacedV2.self]), EventTypeRegistry([PlacedV1.self]), EventTypeRegistry(),
    ] {
      // As export renders and import reads: the import sees each revision from its line on.
      let export = PayloadTranscoder(eventTypes: registry, layouts: layouts)
      var importer = PayloadTranscoder(eventTypes: registry)
      importer.infersLayouts = false
      for event in events {
        for layout in export.layouts(recordedAt: event.sequence) { importer.add(layout) }
        let rendered = export.json(of: event)
        #expect(rendered.form != .binary, "event \(event.sequence) renders with field names")
        let back = try importer.event(
          id: event.id, type: event.type, schemaVersion: event.schemaVersion, payloadJSON: rendered.json,
          metadata: event.metadata, recordedAt: event.recordedAt)
        #expect(back.payload == event.payload, "event \(event.sequence) imports as the same bytes")
      }
      // The newer build's fields are in the export whichever build renders it.
      let last = String(decoding: export.json(of: try #require(events.last)).json, as: UTF8.self)
      #expect(last.contains(#""note":"n""#) && last.contains(#""y":6"#))
    }
  }

  @Test("an optional field added to a table row reads as nil in the rows stored before")
  func addedOptionalRowField() async throws {
    let v1 = spots(SpotRowV1.self) { SpotRowV1(id: $0.id, label: $0.label) }
    var store: EventStore? = try open([PlacedV1.self], [v1])
    let first = PlacedV1(id: UUID(), label: "Window", spot: .init(x: 1))
    try await store?.append([try NewEvent(first)], to: "floor")
    await close(&store)
    // Read-only, the new build reads the stored rows through their recorded layout.
    let v2 = spots(SpotRowV2.self) { SpotRowV2(id: $0.id, label: $0.label, note: "placed") }
    store = try open([PlacedV1.self], [v2], readOnly: true)
    #expect(
      try #require(store).read { try v2.reader(in: $0).rows() }
        == [SpotRowV2(id: first.id, label: "Window", note: nil)])
    await close(&store)
    // Writable, it rebuilds the table in the new layout, and adds rows in it.
    store = try open([PlacedV1.self], [v2])
    let second = PlacedV1(id: UUID(), label: "Bar", spot: .init(x: 2))
    try await store?.append([try NewEvent(second)], to: "floor")
    let rows = try #require(store).read { try v2.reader(in: $0).rows() }
    #expect(Set(rows.map(\.label)) == ["Window", "Bar"])
    #expect(rows.allSatisfy { $0.note == "placed" })
    #expect(try #require(store).firstDifference(from: try #require(store).replay()) == nil)
    await close(&store)
    // The first build, read-only, still reads every row (without the field it does not know).
    store = try open([PlacedV1.self], [v1], readOnly: true)
    #expect(Set(try #require(store).read { try v1.reader(in: $0).rows() }.map(\.label)) == ["Window", "Bar"])
    await close(&store)
  }

  @Test("a removed non-optional field, a changed type or a new non-optional field is refused at open")
  func incompatibleChanges() async throws {
    _ = try await storeFirstBuild()
    let before = try dataDigest()
    func refusal(_ type: any EventPayload.Type) -> EventStoreError? {
      do {
        _ = try open([type])
        return nil
      } catch {
        return error as? EventStoreError
      }
    }
    let path = dir.environment()
    let removed = try #require(refusal(PlacedWithoutLabel.self))
    #expect(
      removed
        == .incompatibleLayout(
          path: path, type: "'Placed' (schema 1)", field: "label",
          reason: "is stored (not optional) but the type no longer has it"))
    #expect(
      removed.description.contains(
        "the layout recorded for 'Placed' (schema 1) does not read into this build's type: field 'label'"))
    let changed = try #require(refusal(PlacedNumberedLabel.self))
    #expect(
      changed
        == .incompatibleLayout(
          path: path, type: "'Placed' (schema 1)", field: "label",
          reason: "is stored as string but the type reads int"))
    let added = try #require(refusal(PlacedWithSeats.self))
    guard case .incompatibleLayout(_, "'Placed' (schema 1)", "seats", _) = added else {
      Issue.record("expected the field 'seats' named, got \(added)")
      return
    }
    // Nothing was written: the first build opens it as it was.
    #expect(try dataDigest() == before)
    var store: EventStore? = try open([PlacedV1.self])
    #expect(try #require(store).events(from: 1).count == 2)
    await close(&store)
  }

  @Test("a row that lost a field is refused without a new projection version, and rebuilt with one")
  func incompatibleRow() async throws {
    let v1 = spots(SpotRowV1.self) { SpotRowV1(id: $0.id, label: $0.label) }
    var store: EventStore? = try open([PlacedV1.self], [v1])
    try await store?.append([try NewEvent(PlacedV1(id: UUID(), label: "A", spot: .init(x: 1)))], to: "floor")
    await close(&store)
    let lost = spots(SpotRowWithoutLabel.self) { SpotRowWithoutLabel(id: $0.id) }
    #expect(
      throws: EventStoreError.incompatibleLayout(
        path: dir.environment(), type: "rows 'SpotRowWithoutLabel' of the projection 'spots'", field: "label",
        reason: "is stored (not optional) but the type no longer has it")
    ) { try open([PlacedV1.self], [lost]) }
    let raised = spots(SpotRowWithoutLabel.self, version: 2) { SpotRowWithoutLabel(id: $0.id) }
    store = try open([PlacedV1.self], [raised])
    #expect(try #require(store).read { try raised.reader(in: $0).rows() }.count == 1)
    await close(&store)
  }

  @Test("an older build reads a newer environment read-only and refuses to write it, naming the types")
  func olderBuild() async throws {
    let placed = try await storeFirstBuild()
    var store: EventStore? = try open([PlacedV2.self])
    let new = PlacedV2(id: UUID(), note: "n", label: "Door", spot: .init(x: 5, y: 6), tags: nil)
    try await store?.append([try NewEvent(new)], to: "floor")
    await close(&store)
    // Writable: refused before anything is written, naming the type and its unknown fields.
    let before = try dataDigest()
    let path = dir.environment()
    #expect(
      throws: EventStoreError.newerLayouts(
        path: path, types: ["'Placed' (schema 1) with the fields 'note', 'spot.y', 'tags'"])
    ) { try open([PlacedV1.self]) }
    #expect(try dataDigest() == before)
    // Read-only: every event reads, without the fields it does not know.
    store = try open([PlacedV1.self], readOnly: true)
    let events = try #require(store).events(from: 1)
    #expect(
      try events.map { try $0.decode(PlacedV1.self) }
        == placed + [PlacedV1(id: new.id, label: "Door", spot: .init(x: 5))])
    await #expect(throws: EventStoreError.readOnly(path: path)) {
      try await store?.append([try NewEvent(placed[0])], to: "floor")
    }
    await close(&store)
  }
}
