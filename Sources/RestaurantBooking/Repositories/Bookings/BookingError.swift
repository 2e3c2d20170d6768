import EventLog
import Foundation

/// Why a booking could not be created or deleted. Nothing was appended.
public enum BookingError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// No restaurant of the catalog has this ID (or it was removed).
  case unknownRestaurant(UUID)
  /// No booking has this ID.
  case unknownBooking(UUID)
  /// The booking was deleted already.
  case alreadyDeleted(UUID)
  /// The party size is outside ``BookingRules/partySizes``.
  case partySizeOutOfRange(Int, allowed: ClosedRange<Int>)
  /// The customer name is empty or only white space.
  case emptyCustomerName
  /// A text field (`customerName`, `notes`) holds a NUL (U+0000), which the replication server
  /// cannot store (PostgreSQL's `jsonb` refuses it): such a booking could never be pushed.
  case nulCharacter(field: String)
  /// The date (as ISO 8601, or the raw number when it is not finite) breaks ``BookingRules``.
  case invalidDate(String, reason: String)
  /// Refreshes kept changing the catalog while the booking was being made.
  case catalogBusy(attempts: Int)
  /// A second `BookingCreated` of a booking that exists (the bookings projection refuses it;
  /// one that came from another device is skipped).
  case duplicateBooking(UUID)
  /// No booking that can still be read carries the customer name (`forget`).
  case unknownCustomer(String)

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// What is wrong, naming the field at fault when there is one: `field 'partySize': 0 is outside 1...20`.
  public var description: String {
    switch self {
    case .unknownRestaurant(let id):
      "field 'restaurantID': no restaurant \(id.lowercasedString) in the catalog"
    case .unknownBooking(let id):
      "no booking \(id.lowercasedString)"
    case .alreadyDeleted(let id):
      "booking \(id.lowercasedString) is already deleted"
    case .partySizeOutOfRange(let size, let allowed):
      "field 'partySize': \(size) is outside \(allowed.lowerBound)...\(allowed.upperBound)"
    case .emptyCustomerName:
      "field 'customerName': must not be empty"
    case .nulCharacter(let field):
      "field '\(field)': must not contain NUL (U+0000), which the replication server cannot store"
    case .invalidDate(let date, let reason):
      "field 'date': \(date) \(reason)"
    case .catalogBusy(let attempts):
      "the restaurant catalog kept changing while booking (\(attempts) attempts)"
    case .duplicateBooking(let id):
      "booking \(id.lowercasedString) is created already: a second BookingCreated of it is refused"
    case .unknownCustomer(let name):
      "field 'customerName': no booking that can still be read is by '\(name)'"
    }
  }
}
