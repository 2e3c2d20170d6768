import Foundation

/// A table booked at a restaurant.
///
/// A booking keeps the restaurant's name as it was when the booking was made, so it still reads
/// well after the restaurant was renamed or removed from the catalog.
public struct Booking: Identifiable, Hashable, Sendable {
  /// The booking's ID, generated when it is created.
  public let id: UUID
  /// The remote ID of the restaurant booked.
  public var restaurantID: UUID
  /// The restaurant's name when the booking was made.
  public var restaurantName: String
  /// When the table is booked for.
  public var date: Date
  /// How many guests; within ``BookingRules/partySizes``.
  public var partySize: Int
  /// The customer: whose personal data the name and notes are (the data subject). `nil` for a
  /// booking stored before personal data was sealed.
  public var customerID: UUID?
  /// Who booked; never empty when known. `nil` when the customer was erased
  /// (``erasedFields``) or the customer's key is not on this device (``unavailableFields``).
  public var customerName: String?
  /// Free text from the customer; `nil` when there is none, or as ``customerName``.
  public var notes: String?
  /// When the booking was made.
  public var createdAt: Date
  /// The personal fields (`customerName`, `notes`) that are erased: their customer was
  /// forgotten, and their values can never be read again.
  public var erasedFields: [String]
  /// The personal fields whose customer's key has not reached this device yet.
  public var unavailableFields: [String]

  /// Creates a booking value (the repository creates stored bookings).
  public init(
    id: UUID, restaurantID: UUID, restaurantName: String, date: Date, partySize: Int, customerID: UUID? = nil,
    customerName: String?, notes: String?, createdAt: Date, erasedFields: [String] = [],
    unavailableFields: [String] = []
  ) {
    self.customerID = customerID
    self.erasedFields = erasedFields
    self.unavailableFields = unavailableFields
    self.id = id
    self.restaurantID = restaurantID
    self.restaurantName = restaurantName
    self.date = date
    self.partySize = partySize
    self.customerName = customerName
    self.notes = notes
    self.createdAt = createdAt
  }

  /// A booking for previews and tests.
  public static let sample = Booking(
    id: UUID(uuidString: "0D7E4A52-1B9C-4E0B-8F3A-6A2D1C9B8E02")!, restaurantID: Restaurant.sample.id,
    restaurantName: Restaurant.sample.name, date: Date(timeIntervalSince1970: 1_796_040_000),
    partySize: 4, customerName: "Ada Lovelace", notes: "Window table, please",
    createdAt: Date(
      timeIntervalSince1970: 1_795_000_000))
}
