import EventLog
import Foundation

/// Reads of the `bookings` projection, on a live snapshot or a replay alike.
public enum BookingQueries {
  /// The name of the projection to pass a view of.
  public static let projection = BookingsProjection.name

  /// Every booking, by date then ID: the date index in order, each row read from `by-id`.
  /// - Throws: ``EventStoreError/invalidProjection(_:)`` when the index names a booking that is
  ///   not stored (a damaged projection; `verify` reports it too).
  /// - Complexity: O(n log n): one sequential scan of the index and a lookup by ID per booking.
  public static func all(in view: ProjectionView) throws -> [Booking] {
    var result: [Booking] = []
    result.reserveCapacity(try view.count(in: BookingsProjection.byDate))
    try view.forEach(in: BookingsProjection.byDate) { key, _ in
      let idKey = UnsafeRawBufferPointer(rebasing: key[(key.count - 16)...])
      guard let row = try view.withValue(forKey: idKey, in: BookingsProjection.byID, { try BookingRow($0) })
      else {
        throw EventStoreError.invalidProjection(
          "bookings: the date index names booking \(ProjectionKeys.uuid(fromSuffixOf: key)), which is not stored"
        )
      }
      result.append(row.booking)
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
