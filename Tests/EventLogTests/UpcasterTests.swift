import EventLog
import Foundation
import TestKit
import Testing

@Suite("Schema versions")
struct UpcasterTests {
  @Test("a v1 record is read as v2 through the upcaster")
  func upcastV1ToV2() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    let v1 = ItemRenamedV1(itemID: UUID(), name: "Old Name")
    let stored = try await store.append([try NewEvent(v1)], to: "items")
    let v2event = ItemRenamed(itemID: UUID(), name: "New", reason: "typo")
    try await store.append([try NewEvent(v2event)], to: "items")

    let events = try store.events(in: "items")
    #expect(events.map(\.schemaVersion) == [1, 2])
    #expect(events[0].sequence == stored.firstSequence)
    #expect(
      try events[0].decode(ItemRenamed.self) == ItemRenamed(itemID: v1.itemID, name: "Old Name", reason: nil))
    #expect(try events[1].decode(ItemRenamed.self) == v2event)
  }

  @Test("a schema newer than the code is refused, naming type and versions")
  func newerSchema() throws {
    let event = RecordedEvent(
      sequence: 4, id: UUID(), stream: "items", version: 1, type: "ItemRenamed", schemaVersion: 3,
      recordedAt: Date(), metadata: EventMetadata(), payload: [])
    #expect(throws: EventStoreError.unsupportedSchemaVersion(type: "ItemRenamed", version: 3, supported: 2)) {
      try event.decode(ItemRenamed.self)
    }
  }

  @Test("without an upcaster an old schema is refused")
  func missingUpcaster() throws {
    let event = RecordedEvent(
      sequence: 4, id: UUID(), stream: "items", version: 1, type: "NoteAdded", schemaVersion: 0,
      recordedAt: Date(), metadata: EventMetadata(), payload: [])
    #expect(throws: EventStoreError.unsupportedSchemaVersion(type: "NoteAdded", version: 0, supported: 1)) {
      try event.decode(NoteAdded.self)
    }
  }

  @Test("a payload that does not decode names the event")
  func undecodablePayload() throws {
    let event = RecordedEvent(
      sequence: 9, id: UUID(), stream: "items", version: 1, type: "NoteAdded", schemaVersion: 1,
      recordedAt: Date(), metadata: EventMetadata(), payload: [1, 2, 3])
    do {
      _ = try event.decode(NoteAdded.self)
      Issue.record("no error")
    } catch let EventStoreError.payloadDecoding(sequence, type, _) {
      #expect(sequence == 9)
      #expect(type == "NoteAdded")
    }
  }
}

/// Version 1 of the rename event, as it was first stored.
struct ItemRenamedV1: EventPayload {
  static let eventType = "ItemRenamed"
  var itemID: UUID
  var name: String
}

/// Version 2 adds a reason.
struct ItemRenamed: EventPayload, Equatable {
  static let eventType = "ItemRenamed"
  static let schemaVersion: UInt16 = 2
  var itemID: UUID
  var name: String
  var reason: String?

  static func upcast(from schemaVersion: UInt16, payload: EncodedPayload) throws -> ItemRenamed {
    let old = try payload.decode(ItemRenamedV1.self)
    return ItemRenamed(itemID: old.itemID, name: old.name, reason: nil)
  }
}
