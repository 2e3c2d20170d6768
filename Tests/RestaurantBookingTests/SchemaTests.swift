import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

@Suite("Schema registration")
struct SchemaTests {
  @Test("every event of a session renders as JSON and parses back to the same payload")
  func jsonRoundTrip() async throws {
    let dir = TemporaryDirectory()
    let store = try makeStore(dir)
    var renamed = catalog(3)
    renamed[0].name = "Renamed"
    renamed.removeLast()
    let restaurants = EventSourcedRestaurantRepository(
      store: store, source: ScriptedSource([catalog(3), renamed]), now: { fixedNow })
    let bookings = EventSourcedBookingRepository(store: store, now: { fixedNow })
    _ = try await restaurants.refresh()
    let booking = try await bookings.create(
      restaurantID: uuid(0), date: future(days: 2), partySize: 3, customerName: "Ada", notes: nil)
    _ = try await restaurants.refresh()
    try await bookings.delete(id: booking.id)
    let registry = RestaurantBookingSchema.eventTypes
    let events = try store.events(from: 1)
    // Every type but the layer's erasure, which a session without an erasure does not write.
    #expect(Set(events.map(\.type)) == Set(registry.typeNames).subtracting([SubjectErased.eventType]))
    for event in events {
      let json = try #require(try registry.json(of: event), "\(event.type) is registered")
      let parsed = try registry.payload(fromJSON: json, type: event.type)
      #expect(parsed.bytes == event.payload, "\(event.type): \(String(decoding: json, as: UTF8.self))")
    }
  }

  @Test("the schema registers both projections")
  func projections() {
    #expect(RestaurantBookingSchema.projections.map(\.name) == ["restaurants", "bookings"])
  }

  @Test("the domain is one schema value: its types, projections, rules, shared streams and stream names")
  func schemaValue() {
    let schema = AppSchema.restaurantBooking
    #expect(schema.name == "restaurant-booking")
    #expect(schema.eventTypes.typeNames == RestaurantBookingSchema.eventTypes.typeNames)
    // The bookings' streams, and the layer's erasures (`subject-`), which must reach every copy.
    #expect(schema.replicatedStreams == AppSchema.StreamSelection(prefixes: ["booking-", "subject-"]))
    #expect(schema.isReplicated(RestaurantBookingStreams.booking(UUID())))
    #expect(schema.isReplicated(SubjectErased.stream(of: UUID())))
    #expect(!schema.isReplicated(RestaurantBookingStreams.catalog))
    let id = UUID()
    #expect(
      schema.streamNames.displayed(RestaurantBookingStreams.booking(id)) == "booking-\(id.lowercasedString)")
    #expect(
      schema.streamNames.stored("booking-\(id.lowercasedString)") == RestaurantBookingStreams.booking(id))
  }

  @Test("composed with another entity's schema, each keeps its own rules; a type neither knows is unreadable")
  func composedWithAnotherEntity() throws {
    let app = AppSchema(name: "app", composing: [.restaurantBooking, Notes.schema])
    #expect(app.projections.map(\.name) == ["restaurants", "bookings", "notes"])
    #expect(app.isReplicated(RestaurantBookingStreams.booking(UUID())) && app.isReplicated("note-1"))
    let admission = app.admission
    let id = UUID()
    let created = try NewEvent(
      BookingCreated(
        bookingID: id, restaurantID: UUID(), restaurantName: "Pasta", date: Date(timeIntervalSince1970: 4e9),
        partySize: 2, customerID: testCustomerID, customerName: "Ada", notes: nil,
        createdAt: Date(timeIntervalSince1970: 1e9)))
    // The booking rules: a booking on its own stream is admitted, on a note's stream it is not.
    #expect(
      admission.verdict(for: Notes.recorded(created, stream: RestaurantBookingStreams.booking(id)))
        == .admitted)
    guard case .invalid(let reason) = admission.verdict(for: Notes.recorded(created, stream: "note-1")) else {
      Issue.record("a booking on a note's stream was admitted")
      return
    }
    #expect(reason.contains("belongs on"))
    // The notes' rules: a note on its stream is admitted, a blank one is not; the booking rules
    // are not asked about notes (a note may live on any `note-` stream).
    #expect(
      admission.verdict(for: Notes.recorded(try NewEvent(NoteWritten(text: "hi")), stream: "note-1"))
        == .admitted)
    #expect(
      admission.verdict(for: Notes.recorded(try NewEvent(NoteWritten(text: " ")), stream: "note-1"))
        == .invalid(reason: "a note must not be blank"))
    #expect(
      admission.verdict(for: Notes.recorded(try NewEvent(NoteWritten(text: "hi")), stream: "booking-x"))
        == .invalid(reason: "a note belongs on a note- stream"))
    // Neither registers it.
    let unknown = NewEvent(
      id: UUID(), type: "ReviewPosted", schemaVersion: 1, payload: [1], metadata: EventMetadata())
    #expect(
      admission.verdict(for: Notes.recorded(unknown, stream: "review-1"))
        == .unreadable(reason: "this build does not know the event type 'ReviewPosted'"))
  }
}

/// A second entity for composition: notes on `note-…` streams, never blank.
private enum Notes {
  static let schema = AppSchema(
    name: "notes", eventTypes: [NoteWritten.self], projections: [projection], admission: NoteRules(),
    replicatedStreams: AppSchema.StreamSelection(prefixes: ["note-"]))

  static let projection = TableProjection<NoteRow>(
    name: "notes", version: 1, primaryKey: .text(\.text),
    handlers: [.create(NoteWritten.self) { NoteRow(text: $0.text) }])

  static func recorded(_ event: NewEvent, stream: StreamID) -> RecordedEvent {
    RecordedEvent(
      sequence: 1, id: event.id, stream: stream, version: 1, type: event.type,
      schemaVersion: event.schemaVersion,
      recordedAt: Date(), metadata: event.metadata, payload: event.payload)
  }
}

private struct NoteWritten: EventPayload {
  static let eventType = "NoteWritten"
  var text: String
}

private struct NoteRow: TableRow, Codable {
  var text: String
}

private struct NoteRules: EventAdmission {
  func verdict(for event: RecordedEvent) -> EventVerdict {
    guard let note = try? event.decode(NoteWritten.self) else { return .invalid(reason: "does not decode") }
    if !event.stream.rawValue.hasPrefix("note-") {
      return .invalid(reason: "a note belongs on a note- stream")
    }
    return note.text.trimmingCharacters(in: .whitespaces).isEmpty
      ? .invalid(reason: "a note must not be blank") : .admitted
  }
}
