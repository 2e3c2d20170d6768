import EventLog
import EventLogCLI
import Foundation
import RestaurantBooking

/// The contract's JSON shapes of the domain models.
enum DomainJSON {
  /// `{"id", "name", "cuisine"}`.
  static func restaurant(_ restaurant: Restaurant) -> JSONValue {
    .object([
      ("id", .string(restaurant.id.lowercasedString)), ("name", .string(restaurant.name)),
      ("cuisine", .string(restaurant.cuisine.rawValue)),
    ])
  }

  /// `{"id", "restaurantId", "restaurantName", "date", "partySize", "customerName", "notes", "createdAt"}`,
  /// and `"customerId"`; `"erased"` and `"unavailable"` list the personal fields that cannot be
  /// shown (they print as `null`), when there are any.
  static func booking(_ booking: Booking) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("id", .string(booking.id.lowercasedString)),
      ("restaurantId", .string(booking.restaurantID.lowercasedString)),
      ("restaurantName", .string(booking.restaurantName)),
      ("date", .string(ISO8601.string(from: booking.date))),
      ("partySize", .int(Int64(booking.partySize))),
      ("customerName", .optional(booking.customerName)),
      ("notes", .optional(booking.notes)),
      ("createdAt", .string(ISO8601.string(from: booking.createdAt))),
      ("customerId", .optional(booking.customerID?.lowercasedString)),
    ]
    if !booking.erasedFields.isEmpty {
      members.append(("erased", .array(booking.erasedFields.map(JSONValue.string))))
    }
    if !booking.unavailableFields.isEmpty {
      members.append(("unavailable", .array(booking.unavailableFields.map(JSONValue.string))))
    }
    return .object(members)
  }
}

/// Human tables of the domain models.
enum DomainTables {
  static func restaurants(_ restaurants: [Restaurant]) -> String {
    var table = Table(["NAME", "CUISINE", "ID"])
    for restaurant in restaurants {
      table.append([restaurant.name, restaurant.cuisine.rawValue, restaurant.id.lowercasedString])
    }
    return table.rendered() + "\(restaurants.count) restaurant\(restaurants.count == 1 ? "" : "s")\n"
  }

  static func bookings(_ bookings: [Booking]) -> String {
    var table = Table(["DATE", "RESTAURANT", "PARTY", "NAME", "NOTES", "ID"], rightAligned: [2])
    for booking in bookings {
      table.append([
        ISO8601.string(from: booking.date), booking.restaurantName, String(booking.partySize),
        Self.personal(booking.customerName, "customerName", of: booking),
        booking.notes ?? (booking.erasedFields.contains("notes") ? "(erased)" : ""),
        booking.id.lowercasedString,
      ])
    }
    return table.rendered() + "\(bookings.count) booking\(bookings.count == 1 ? "" : "s")\n"
  }

  /// A personal value as the table shows it: the value, `(erased)` or `(key not here)`.
  private static func personal(_ value: String?, _ field: String, of booking: Booking) -> String {
    if let value { return value }
    return booking.erasedFields.contains(field) ? "(erased)" : "(key not here)"
  }
}
