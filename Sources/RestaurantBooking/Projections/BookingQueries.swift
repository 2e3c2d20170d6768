import EventLog
import Foundation

/// Reads of the bookings, on a live snapshot or a replay alike, through the table projection's
/// reader (`TableProjection.reader(in:)`):
///
/// ```swift
/// let live = try store.read { try BookingQueries.all(in: $0) }
/// let then = try BookingQueries.all(in: store.replay(through: 42))
/// ```
public enum BookingQueries {
  /// Every booking in `snapshot`, by date then ID, as for a replay below.
  public static func all(in snapshot: EventStore.StoreSnapshot) throws -> [Booking] {
    try all(BookingsProjection.table.reader(in: snapshot))
  }

  /// Every booking a replay rebuilt, by date then ID: the date index in order, each row read from
  /// `by-id`.
  /// - Throws: `TableError.danglingIndexEntry` when the index names a booking that is not stored
  ///   (a damaged projection; `verify` reports it too).
  /// - Complexity: O(n log n): one sequential scan of the index and a lookup by ID per booking.
  public static func all(in replay: EventStore.ReplayResult) throws -> [Booking] {
    try all(BookingsProjection.table.reader(in: replay))
  }

  /// The booking `id` in `snapshot`, or `nil` (never created, or deleted).
  /// - Complexity: O(log n).
  public static func booking(id: UUID, in snapshot: EventStore.StoreSnapshot) throws -> Booking? {
    try BookingsProjection.table.reader(in: snapshot).row(forKey: .uuid(id))?.booking
  }

  /// The booking `id` in a replay, or `nil`.
  public static func booking(id: UUID, in replay: EventStore.ReplayResult) throws -> Booking? {
    try BookingsProjection.table.reader(in: replay).row(forKey: .uuid(id))?.booking
  }

  /// The number of bookings in `snapshot`.
  /// - Complexity: O(1).
  public static func count(in snapshot: EventStore.StoreSnapshot) throws -> Int {
    try BookingsProjection.table.reader(in: snapshot).count()
  }

  /// The number of bookings a replay rebuilt.
  public static func count(in replay: EventStore.ReplayResult) throws -> Int {
    try BookingsProjection.table.reader(in: replay).count()
  }

  private static func all(_ reader: TableReader<BookingRow>) throws -> [Booking] {
    var result: [Booking] = []
    result.reserveCapacity(try reader.count())
    try reader.forEach(in: BookingsProjection.dateIndex) { row in
      result.append(row.booking)
      return true
    }
    return result
  }
}
