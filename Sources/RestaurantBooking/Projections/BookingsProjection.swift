import EventLog
import Foundation

/// The bookings: by ID and in date order, a `TableProjection` of ``BookingRow``s (``table``),
/// read through its reader, live or replayed alike:
///
/// ```swift
/// let live = try store.read {
///   try BookingsProjection.table.reader(in: $0).rows(in: BookingsProjection.byDate, as: Booking.init)
/// }
/// let one = try store.read { try BookingsProjection.table.reader(in: $0).row(forKey: .uuid(id)) }
/// ```
///
/// Tables (keys in `TableKey`'s encodings):
/// - `by-id`: 16 ID bytes → ``BookingRow``.
/// - `by-date` (``byDate``): an index (keys only) on the date: sortable date (8 bytes) + ID →
///   nothing. `rows(in: byDate)` walks it in order and reads each row from `by-id`.
///
/// Version 3 keeps the customer's name and notes sealed in the row, as the event holds them
/// (``BookingRow``): the projection never holds personal data in clear. Version 2 keeps
/// `by-date` to its keys; version 1 stored the row there again. A booking's
/// creation writes two B-trees either way, and its date is random, so a commit of many bookings
/// dirties pages all over `by-date`: with 24-byte entries instead of ~230-byte ones that tree is a
/// tenth of the size and a commit writes fewer pages. A store of version 1 is rebuilt on open,
/// like any projection of another version.
///
/// The handlers are the simple path: a `BookingCreated` becomes its row, a `BookingDeleted`
/// deletes it. A measured fast path does the same on the payloads' bytes, behind the same
/// projection: the hook in `FastPaths/BookingsProjection+FastPath.swift` and the row transcoder in
/// `FastPaths/BookingRow+Transcoding.swift`, each with what it buys. Tests check that the two paths
/// build the same tables.
///
/// A booking stays when its restaurant is removed: it keeps the restaurant's name.
public enum BookingsProjection {
  /// The projection's name.
  static let name = "bookings"
  /// The row table's name (the fast path writes it).
  static let rowTable = "by-id"
  /// The date index's table name (the fast path writes it).
  static let dateTable = "by-date"

  /// The bookings by date, then by ID: an index of keys only.
  public static let byDate = TableIndex<BookingRow>(
    dateTable, .date(\.date), keyOfStoredRow: BookingRow.writeDateKey(ofStored:into:))

  /// The handlers: the simple path.
  static let handlers: [TableHandler<BookingRow>] = [
    // A booking is created once: a second BookingCreated of it is refused, not a replacement.
    .custom(BookingCreated.eventType) { event, table in
      let row = BookingRow(try event.decode(BookingCreated.self))
      guard try table.row(forKey: .uuid(row.id)) == nil else { throw BookingError.duplicateBooking(row.id) }
      try table.put(row)
    },
    .delete(BookingDeleted.self, key: \.bookingID),
  ]

  /// The projection, with the fast path: what `AppSchema.restaurantBooking` folds, and what reads
  /// go through (`table.reader(in:)`).
  public static let table = table(fastPath: true)

  /// The projection, with or without the hook (tests compare the two).
  static func table(fastPath: Bool) -> TableProjection<BookingRow> {
    TableProjection(
      name: name, version: 3, rowTable: rowTable, primaryKey: .uuid(\.id), indexes: [byDate],
      handlers: handlers, hook: fastPath ? Self.fastPath : nil)
  }
}
