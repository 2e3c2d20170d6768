import EventLog
import Foundation

/// Reads of the `bookings` projection, on a live snapshot or a replay alike.
public enum BookingQueries {
  /// The name of the projection to pass a view of.
  public static let projection = BookingsProjection.name

  /// Every booking, by date then ID: the date index in order, each row read from `by-id`.
  /// - Throws: `TableError/danglingIndexEntry(projection:index:key:)` when the index names a
  ///   booking that is not stored (a damaged projection; `verify` reports it too).
  /// - Complexity: O(n log n): one sequential scan of the index and a lookup by ID per booking.
  public static func all(in view: ProjectionReader) throws -> [Booking] {
    let reader = BookingsProjection.table.reader(view)
    var result: [Booking] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach(in: BookingsProjection.dateIndex) { row in
      result.append(row.booking)
      return true
    }
    return result
  }

  /// The booking `id`, or `nil` (never created, or deleted).
  /// - Complexity: O(log n).
  public static func booking(id: UUID, in view: ProjectionReader) throws -> Booking? {
    try BookingsProjection.table.reader(view).row(forKey: .uuid(id))?.booking
  }

  /// The number of bookings.
  /// - Complexity: O(1).
  public static func count(in view: ProjectionReader) throws -> Int {
    try BookingsProjection.table.reader(view).count()
  }
}
