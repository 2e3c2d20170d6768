import EventLog
import Foundation

extension RestaurantChange {
  /// The change an event records, or `nil` for events of other streams.
  init?(_ event: RecordedEvent) throws {
    switch event.type {
    case RestaurantAdded.eventType:
      let added = try event.decode(RestaurantAdded.self)
      self = .added(
        Restaurant(id: added.restaurantID, name: added.name, cuisine: Cuisine(rawValue: added.cuisine)))
    case RestaurantUpdated.eventType:
      let updated = try event.decode(RestaurantUpdated.self)
      self = .updated(
        id: updated.restaurantID, name: updated.name?.new,
        cuisine: updated.cuisine.map { Cuisine(rawValue: $0.new) })
    case RestaurantRemoved.eventType:
      self = .removed(id: try event.decode(RestaurantRemoved.self).restaurantID)
    case RestaurantsRefreshed.eventType:
      let refreshed = try event.decode(RestaurantsRefreshed.self)
      self = .refreshed(
        RefreshSummary(
          added: refreshed.added, updated: refreshed.updated, removed: refreshed.removed,
          unchanged: refreshed.unchanged))
    default:
      return nil
    }
  }
}

extension BookingChange {
  /// The change an event records, or `nil` for events of other streams; a booking's personal
  /// values opened with `keyring`.
  init?(_ event: RecordedEvent, keyring: SubjectKeyring) throws {
    switch event.type {
    case BookingCreated.eventType:
      self = .created(Booking(BookingRow(try event.decode(BookingCreated.self)), keyring: keyring))
    case BookingDeleted.eventType:
      self = .deleted(id: try event.decode(BookingDeleted.self).bookingID)
    default:
      return nil
    }
  }
}
