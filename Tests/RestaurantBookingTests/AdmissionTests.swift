import EventLog
import Foundation
import TestKit
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// `RestaurantBookingAdmission`: the structural rules of the domain, one by one.
@Suite("The domain's rules for events from elsewhere")
struct AdmissionTests {
  let admission = RestaurantBookingAdmission()
  static let id = UUID(uuidString: "0a0a0a0a-0b0b-4c0c-8d0d-0e0e0e0e0e0e") ?? UUID()

  func recorded(_ event: NewEvent, stream: StreamID, version: UInt64 = 1) -> RecordedEvent {
    RecordedEvent(
      sequence: 7, id: event.id, stream: stream, version: version, type: event.type,
      schemaVersion: event.schemaVersion, recordedAt: Date(), metadata: event.metadata, payload: event.payload
    )
  }

  /// A booking as the log stores it: the name and notes sealed (for this event).
  func created(
    name: String = "Ada", restaurant: String = "Pasta", id: UUID = Self.id, party: Int = 99,
    notes: String? = nil
  ) throws -> NewEvent {
    try NewEvent(
      BookingCreated(
        bookingID: id, restaurantID: UUID(), restaurantName: restaurant,
        date: Date(timeIntervalSince1970: 4e9),
        partySize: party, customerID: testCustomerID, customerName: name, notes: notes,
        createdAt: Date(timeIntervalSince1970: 1e9))
    ).sealingPendingValues(with: { _ in Self.key })
  }

  /// A booking as a build before sealing stored it: the name and notes in clear (the values the
  /// rules can judge).
  func createdInClear(
    name: String = "Ada", restaurant: String = "Pasta", notes: String? = nil
  ) throws
    -> NewEvent
  {
    try NewEvent(
      BookingCreated(
        bookingID: Self.id, restaurantID: UUID(), restaurantName: restaurant,
        date: Date(timeIntervalSince1970: 4e9), partySize: 2,
        customerName: Personal(storedBytes: Array(name.utf8)),
        notes: notes.map { Personal(storedBytes: Array($0.utf8)) },
        createdAt: Date(timeIntervalSince1970: 1e9)))
  }

  /// The key this file's personal values are sealed with.
  static let key = [UInt8](repeating: 5, count: 32)

  @Test func aWellFormedBookingIsAdmittedWhateverItsPartySizeOrDate() throws {
    // Party size 99 and a creation date long past: rules of their day, not checked on history.
    let stream = RestaurantBookingStreams.booking(Self.id)
    #expect(admission.verdict(for: recorded(try created(), stream: stream)) == .admitted)
    let deleted = try NewEvent(BookingDeleted(bookingID: Self.id))
    #expect(admission.verdict(for: recorded(deleted, stream: stream, version: 2)) == .admitted)
    // A second delete (from another device) is allowed.
    #expect(admission.verdict(for: recorded(deleted, stream: stream, version: 3)) == .admitted)
  }

  @Test func aBookingStreamInLowerCaseIsNotItsStream() throws {
    // The repositories read and delete through the stored (upper-case) spelling: a create on the
    // lower-case name would be listed and never deletable.
    let lower = StreamID("booking-" + Self.id.uuidString.lowercased())
    guard case .invalid(let reason) = admission.verdict(for: recorded(try created(), stream: lower)) else {
      Issue.record("admitted on \(lower)")
      return
    }
    #expect(reason.contains("stored with its UUID in upper case: 'booking-\(Self.id.uuidString)'"))
  }

  @Test(
    "blank is what the command rules trim away, asked per scalar",
    arguments: [
      "", " ", "\t\n\r\u{0B}\u{0C}", "\u{1C}\u{1D}\u{1E}\u{1F}", "\u{00A0}\u{3000}\u{2028}\u{0085}", "a",
      " x ",
      "\u{200B}", "\u{FEFF}", "  \u{00E9}",
    ])
  func blankMatchesTrimming(_ text: String) {
    #expect(
      RestaurantBookingAdmission.blank(text) == text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
  }

  /// The `BookingCreated` fast path (on the payload's bytes) and the registry's path (decoded)
  /// give the same verdict, reason included, for well-formed, rule-breaking and damaged payloads.
  @Test("the BookingCreated fast path agrees with decoding", arguments: 0..<4)
  func fastPathAgreesWithDecoding(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let names = [
      "Ada", "", " ", "\t\n", "\u{00A0}", "\u{200B}", "Zoë", "  x", "\u{3000}y", "A\u{0}", "\u{0}", "\u{1}",
    ]
    for _ in 0..<300 {
      let id = Bool.random(using: &random) ? Self.id : UUID()
      let stream =
        Bool.random(using: &random) ? RestaurantBookingStreams.booking(Self.id) : "restaurant-catalog"
      let version: UInt64 = Bool.random(using: &random) ? 1 : 2
      let dates = [4e9, .infinity, -.infinity, .nan, -1]
      let event = try NewEvent(
        BookingCreated(
          bookingID: id, restaurantID: UUID(), restaurantName: names.randomElement(using: &random) ?? "",
          date: Date(timeIntervalSince1970: dates.randomElement(using: &random) ?? 0),
          partySize: Int.random(in: -3...99, using: &random),
          customerID: testCustomerID, customerName: names.randomElement(using: &random) ?? "",
          notes: Bool.random(using: &random) ? nil : names.randomElement(using: &random),
          createdAt: Date(timeIntervalSince1970: 1e9)))
      var payload = event.payload
      switch Int.random(in: 0..<4, using: &random) {
      case 0: payload = Array(payload.prefix(Int.random(in: 0..<payload.count, using: &random)))
      case 1: payload.append(UInt8.random(in: 0...255, using: &random))
      case 2:
        let at = Int.random(in: 0..<payload.count, using: &random)
        payload[at] = UInt8.random(in: 0...255, using: &random)
      default: break
      }
      let damaged = RecordedEvent(
        sequence: 7, id: event.id, stream: stream, version: version, type: event.type,
        schemaVersion: event.schemaVersion, recordedAt: Date(), metadata: event.metadata, payload: payload)
      #expect(admission.verdict(for: damaged) == admission.decodedVerdict(for: damaged), "\(payload)")
    }
  }

  @Test func bookingEventsBelongOnTheirOwnStream() throws {
    for stream in [
      RestaurantBookingStreams.booking(UUID()), RestaurantBookingStreams.catalog, "booking-nope",
    ] {
      guard case .invalid(let reason) = admission.verdict(for: recorded(try created(), stream: stream)) else {
        Issue.record("admitted on \(stream)")
        continue
      }
      #expect(reason.contains("belongs on"))
    }
  }

  /// Issue 21: a stream may hold events the projections skip (a newer app's, or one breaking
  /// the rules), which give the later events higher versions; no verdict depends on a version,
  /// so a booking with such an event before or after it still reads, and still deletes.
  @Test func noVerdictDependsOnTheEventsVersionInItsStream() throws {
    let stream = RestaurantBookingStreams.booking(Self.id)
    #expect(admission.verdict(for: recorded(try created(), stream: stream, version: 2)) == .admitted)
    let deleted = try NewEvent(BookingDeleted(bookingID: Self.id))
    #expect(admission.verdict(for: recorded(deleted, stream: stream, version: 1)) == .admitted)
  }

  /// Issue 21: another device's party of 0, of a negative or of a huge size is no booking,
  /// whatever the app version's own range; both admission paths say so.
  @Test(arguments: [0, -3, 1_001, Int.max, Int.min])
  func aPartyOutsideThePossibleSizesIsInvalid(party: Int) throws {
    let stream = RestaurantBookingStreams.booking(Self.id)
    let event = recorded(try created(party: party), stream: stream)
    guard case .invalid(let reason) = admission.verdict(for: event) else {
      Issue.record("a party of \(party) was admitted")
      return
    }
    #expect(reason.contains("party of \(party)"))
    #expect(admission.decodedVerdict(for: event) == admission.verdict(for: event))
    #expect(admission.verdict(for: recorded(try created(party: 1_000), stream: stream)) == .admitted)
  }

  @Test(arguments: ["", "  ", "\n"])
  func namesMustNotBeBlank(blank: String) throws {
    let stream = RestaurantBookingStreams.booking(Self.id)
    // A customer name stored in clear (before sealing) is judged; both paths agree.
    let blankName = recorded(try createdInClear(name: blank), stream: stream)
    #expect(admission.verdict(for: blankName) == .invalid(reason: "the BookingCreated has no customer name"))
    #expect(admission.decodedVerdict(for: blankName) == admission.verdict(for: blankName))
    #expect(admission.verdict(for: recorded(try createdInClear(), stream: stream)) == .admitted)
    // A sealed name cannot be judged here (the device that sealed it judged it): admitted.
    let sealed = recorded(try created(name: blank), stream: stream)
    #expect(admission.verdict(for: sealed) == .admitted)
    #expect(admission.decodedVerdict(for: sealed) == .admitted)
    for event in [try created(restaurant: blank), try createdInClear(restaurant: blank)] {
      let blankRestaurant = recorded(event, stream: stream)
      #expect(
        admission.verdict(for: blankRestaurant)
          == .invalid(reason: "the BookingCreated has no restaurant name"))
      #expect(admission.decodedVerdict(for: blankRestaurant) == admission.verdict(for: blankRestaurant))
    }
    let added = try NewEvent(RestaurantAdded(restaurantID: UUID(), name: blank, cuisine: "thai"))
    #expect(
      admission.verdict(for: recorded(added, stream: RestaurantBookingStreams.catalog)).isAdmitted == false)
  }

  /// Issue 28: a booking whose customer name or notes hold a NUL can never reach the server
  /// (`jsonb` refuses it); from elsewhere (another device's `$binary`, an import) it is invalid,
  /// on both admission paths. Only values stored in clear (before sealing) can be judged: a sealed
  /// value is Base64 on the server. Other control characters are not a rule.
  @Test(
    arguments: [
      ("A\u{0}da", nil, "customerName"), ("Ada", "\u{0}", "notes"), ("\u{0}\u{0}", "x\u{0}", "customerName"),
    ]
      as [(String, String?, String)])
  func aNULInTheNameOrNotesIsInvalid(name: String, notes: String?, field: String) throws {
    let stream = RestaurantBookingStreams.booking(Self.id)
    let event = recorded(try createdInClear(name: name, notes: notes), stream: stream)
    guard case .invalid(let reason) = admission.verdict(for: event) else {
      Issue.record("admitted: \(admission.verdict(for: event))")
      return
    }
    #expect(reason.contains("BookingCreated's \(field) holds a NUL"), "\(reason)")
    #expect(admission.decodedVerdict(for: event) == admission.verdict(for: event))
    let control = recorded(try createdInClear(name: "A\u{1}da", notes: "\u{7F}"), stream: stream)
    #expect(admission.verdict(for: control) == .admitted)
    #expect(admission.decodedVerdict(for: control) == .admitted)
  }

  /// A sealed value cannot be judged, so it is admitted when it is sealed for its event; one
  /// sealed for another event (copied from it) is invalid, on both paths.
  @Test(arguments: ["customerName", "notes"])
  func aValueSealedForAnotherEventIsInvalid(field: String) throws {
    let stream = RestaurantBookingStreams.booking(Self.id)
    let event = try created(notes: "window seat")
    let other = try created(notes: "window seat")
    #expect(admission.verdict(for: recorded(event, stream: stream)) == .admitted)
    var booking = try BinaryDecoder().decode(BookingCreated.self, from: event.payload)
    let copied = try BinaryDecoder().decode(BookingCreated.self, from: other.payload)
    if field == "notes" { booking.notes = copied.notes } else { booking.customerName = copied.customerName }
    var moved = event
    moved.payload = try BinaryEncoder().encode(booking)
    #expect(moved.payload != event.payload)
    let recordedMoved = recorded(moved, stream: stream)
    #expect(
      admission.verdict(for: recordedMoved)
        == .invalid(
          reason: "the BookingCreated's \(field) is sealed for another event (\(other.id.lowercasedString))"))
    #expect(admission.decodedVerdict(for: recordedMoved) == admission.verdict(for: recordedMoved))
  }

  @Test func catalogEventsBelongOnTheCatalog() throws {
    let added = try NewEvent(RestaurantAdded(restaurantID: UUID(), name: "Thai Me Up", cuisine: "thai"))
    #expect(admission.verdict(for: recorded(added, stream: RestaurantBookingStreams.catalog)) == .admitted)
    #expect(
      admission.verdict(for: recorded(added, stream: RestaurantBookingStreams.booking(Self.id))).isAdmitted
        == false)
  }

  @Test func unknownTypesAndNewerSchemasAreUnreadableAndBadPayloadsInvalid() {
    let stream = RestaurantBookingStreams.booking(Self.id)
    let unknown = NewEvent(
      id: UUID(), type: "BookingMoved", schemaVersion: 1, payload: [1], metadata: .init())
    guard case .unreadable(let reason) = admission.verdict(for: recorded(unknown, stream: stream)) else {
      Issue.record("an unknown type is not unreadable")
      return
    }
    #expect(reason.contains("BookingMoved"))
    let newer = NewEvent(
      id: UUID(), type: "BookingCreated", schemaVersion: 9, payload: [1], metadata: .init())
    guard case .unreadable = admission.verdict(for: recorded(newer, stream: stream)) else {
      Issue.record("a newer schema version is not unreadable")
      return
    }
    let garbage = NewEvent(
      id: UUID(), type: "BookingCreated", schemaVersion: 1, payload: [1, 2], metadata: .init())
    guard case .invalid = admission.verdict(for: recorded(garbage, stream: stream)) else {
      Issue.record("a payload that does not decode is not invalid")
      return
    }
  }
}
