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
/// - a `BookingCreated` is the first event of its stream, a `BookingDeleted` follows it (a second
///   delete, from another device, is allowed: it changes nothing);
/// - names are present and not blank; a booking's date is a real date.
///
/// Rules that may change between app versions (the party-size range, a date in the past) are
/// not checked here: an event in the log is what happened.
public struct RestaurantBookingAdmission: EventAdmission {
  private let registry: EventTypeRegistry

  /// The rules, over the domain's event types.
  public init(registry: EventTypeRegistry = RestaurantBookingSchema.eventTypes) {
    self.registry = registry
  }

  public func verdict(for event: RecordedEvent) -> EventVerdict {
    let (decoded, verdict) = registry.decoded(event)
    guard let decoded else { return verdict }
    if let reason = Self.brokenRule(decoded, event) { return .invalid(reason: reason) }
    return .admitted
  }

  private static func blank(_ text: String) -> Bool {
    text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
  }

  /// The first rule `payload` (the decoded payload of `event`) breaks, or `nil`.
  private static func brokenRule(_ payload: any EventPayload, _ event: RecordedEvent) -> String? {
    let type = event.type
    let catalog = RestaurantBookingStreams.catalog
    switch payload {
    case let created as BookingCreated:
      if let reason = bookingStream(event, created.bookingID) { return reason }
      if event.version != 1 {
        return
          "a BookingCreated must open its stream, but it is version \(event.version) of '\(event.stream)'"
      }
      if blank(created.customerName) { return "the BookingCreated has no customer name" }
      if blank(created.restaurantName) { return "the BookingCreated has no restaurant name" }
      if !created.date.timeIntervalSince1970.isFinite || !created.createdAt.timeIntervalSince1970.isFinite {
        return "the BookingCreated has a date that is not a real date"
      }
      return nil
    case let deleted as BookingDeleted:
      if let reason = bookingStream(event, deleted.bookingID) { return reason }
      if event.version < 2 {
        return "a BookingDeleted must follow its BookingCreated, but it opens '\(event.stream)'"
      }
      return nil
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
    let name = event.stream.rawValue
    let prefix = RestaurantBookingStreams.bookingPrefix
    guard name.hasPrefix(prefix), let streamID = UUID(uuidString: String(name.dropFirst(prefix.count))),
      streamID == id
    else {
      return "a \(event.type) of booking \(id.uuidString.lowercased()) belongs on "
        + "'\(prefix)\(id.uuidString.lowercased())', not on '\(name)'"
    }
    return nil
  }
}
