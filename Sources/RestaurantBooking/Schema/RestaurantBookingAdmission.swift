import EventLog
import Foundation

/// The structural rules every event of the domain keeps, whether a command wrote it, an import
/// loaded it or a pull brought it from another device (`Docs/Domain.md`, "Which checks hold
/// where"):
///
/// - its type and schema version are ones this build reads, and its payload decodes (else the
///   event is *unreadable*: stored, skipped, folded in by a later build that reads it);
/// - catalog events live on `restaurant-catalog`, booking events on `booking-<bookingID>` of
///   their own booking;
/// - names are present and not blank; a booking's date is a real date; its party size is within
///   ``BookingRules/possiblePartySizes``;
/// - a booking's customer name and notes hold no NUL (``BookingRules/holdsNUL(_:)``): the
///   replication server cannot store one, so such a booking could never be pushed from here.
///
/// No rule depends on an event's version within its stream: a stream may hold events the
/// projections skip (from a newer app, or breaking these rules), and those change nothing about
/// what the others mean. The order of a booking's events is the bookings projection's business:
/// a second `BookingCreated` of a booking is refused there, a delete of a deleted booking changes
/// nothing.
///
/// Rules that may change between app versions (the party-size range, a date in the past) are
/// not checked here: an event in the log is what happened.
public struct RestaurantBookingAdmission: EventAdmission {
  private let registry: EventTypeRegistry

  /// The rules, over the domain's event types.
  public init(registry: EventTypeRegistry = RestaurantBookingSchema.eventTypes) {
    self.registry = registry
  }

  /// Whether the projections fold `event`: unreadable when its type, schema version or payload is
  /// not one this build reads, invalid when it breaks one of the rules above, else admitted.
  /// - Parameter event: the stored event.
  /// - Returns: the event's verdict, with the reason when it is not admitted.
  public func verdict(for event: RecordedEvent) -> EventVerdict {
    // A measured fast path for half the events of a pull (FastPaths/RestaurantBookingAdmission+Bytes.swift).
    if event.type == BookingCreated.eventType, event.schemaVersion == BookingCreated.schemaVersion,
      registry.schemaVersion(of: BookingCreated.eventType) == BookingCreated.schemaVersion,
      let verdict = Self.bookingCreatedVerdict(event)
    {
      return verdict
    }
    return decodedVerdict(for: event)
  }

  /// The verdict through the registry: the payload decoded (and upcast), then the rules.
  func decodedVerdict(for event: RecordedEvent) -> EventVerdict {
    let (decoded, verdict) = registry.decoded(event)
    guard let decoded else { return verdict }
    if let reason = Self.brokenRule(decoded, event) { return .invalid(reason: reason) }
    return .admitted
  }

  /// The first rule a `BookingCreated` of these fields breaks on `event`'s stream, or `nil`.
  static func createdRule(
    _ event: RecordedEvent, bookingID: UUID, partySize: Int, customerNameIsBlank: Bool,
    restaurantNameIsBlank: Bool, date: Date, createdAt: Date, nulField: String? = nil
  ) -> String? {
    if let reason = bookingStream(event, bookingID) { return reason }
    if !BookingRules.possiblePartySizes.contains(partySize) {
      return
        "the BookingCreated has a party of \(partySize), outside \(BookingRules.possiblePartySizes.lowerBound)"
        + "...\(BookingRules.possiblePartySizes.upperBound)"
    }
    if customerNameIsBlank { return "the BookingCreated has no customer name" }
    if restaurantNameIsBlank { return "the BookingCreated has no restaurant name" }
    if let nulField {
      return
        "the BookingCreated's \(nulField) holds a NUL (U+0000), which the replication server cannot store"
    }
    if !date.timeIntervalSince1970.isFinite || !createdAt.timeIntervalSince1970.isFinite {
      return "the BookingCreated has a date that is not a real date"
    }
    return nil
  }

  /// The first rule `payload` (the decoded payload of `event`) breaks, or `nil`.
  private static func brokenRule(_ payload: any EventPayload, _ event: RecordedEvent) -> String? {
    let type = event.type
    let catalog = RestaurantBookingStreams.catalog
    switch payload {
    case let created as BookingCreated:
      for (field, value) in [("customerName", created.customerName), ("notes", created.notes)] {
        if case .invalid(let reason) = value?.storage(inEvent: event.id) {
          return "the BookingCreated's \(field) \(reason)"
        }
      }
      // Only a value stored in clear (before sealing) can be judged; a sealed one was judged by
      // the device that sealed it.
      let clear = SubjectKeyring()
      let name = clear.reveal(created.customerName).value
      let notes = created.notes.flatMap { clear.reveal($0).value }
      return createdRule(
        event, bookingID: created.bookingID, partySize: created.partySize,
        customerNameIsBlank: name.map(blank) ?? false,
        restaurantNameIsBlank: blank(created.restaurantName), date: created.date,
        createdAt: created.createdAt,
        nulField: name.map(BookingRules.holdsNUL) == true
          ? "customerName" : notes.map(BookingRules.holdsNUL) == true ? "notes" : nil)
    case let deleted as BookingDeleted:
      return bookingStream(event, deleted.bookingID)
    case let added as RestaurantAdded:
      if event.stream != catalog { return "a \(type) belongs on '\(catalog)', not on '\(event.stream)'" }
      return blank(added.name) ? "the RestaurantAdded has no name" : nil
    case let updated as RestaurantUpdated:
      if event.stream != catalog { return "a \(type) belongs on '\(catalog)', not on '\(event.stream)'" }
      return updated.name.map { blank($0.new) } == true
        ? "the RestaurantUpdated renames to a blank name" : nil
    case is RestaurantRemoved, is RestaurantsRefreshed:
      return event.stream != catalog ? "a \(type) belongs on '\(catalog)', not on '\(event.stream)'" : nil
    default:
      return nil
    }
  }

  /// Why `event` is not on the stream of booking `id`, or `nil` when it is.
  private static func bookingStream(_ event: RecordedEvent, _ id: UUID) -> String? {
    // The stored spelling exactly (upper case): the repositories read and append to that stream,
    // so a booking on `booking-<lower case>` could be listed but never deleted. (Imports store
    // what they read in either case under this spelling.)
    let stream = RestaurantBookingStreams.booking(id)
    guard event.stream != stream else { return nil }
    let name = event.stream.rawValue
    if name.lowercased() == stream.rawValue.lowercased() {
      // Named in both spellings: here the difference is the whole point.
      return "a \(event.type) of booking \(id.lowercasedString) is on '\(name)', but a booking's "
        + "stream is stored with its UUID in upper case: '\(stream.rawValue)'"
    }
    return "a \(event.type) of booking \(id.lowercasedString) belongs on "
      + "'\(RestaurantBookingStreams.displayName(of: stream))', not on '\(name)'"
  }
}
