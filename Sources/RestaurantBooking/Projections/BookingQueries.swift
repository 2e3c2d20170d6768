import EventLog
import Foundation

/// Reads of the `bookings` projection, on a live snapshot or a replay alike.
public enum BookingQueries {
  /// The name of the projection to pass a view of.
  public static let projection = BookingsProjection.name

  /// Every booking, by date then ID.
  /// - Complexity: O(n), one sequential scan of the date-order table.
  public static func all(in view: ProjectionView) throws -> [Booking] {
    var result: [Booking] = []
    result.reserveCapacity(try view.count(in: BookingsProjection.byDate))
    try view.forEach(in: BookingsProjection.byDate) { _, value in
      result.append(try BookingRow(value).booking)
      return true
    }
    return result
  }

  /// The booking `id`, or `nil` (never created, or deleted).
  /// - Complexity: O(log n).
  public static func booking(id: UUID, in view: ProjectionView) throws -> Booking? {
    try view.value(forKey: ProjectionKeys.id(id), in: BookingsProjection.byID).map(BookingRow.init)?.booking
  }

  /// The number of bookings.
  /// - Complexity: O(1).
  public static func count(in view: ProjectionView) throws -> Int {
    try view.count(in: BookingsProjection.byID)
  }
}
