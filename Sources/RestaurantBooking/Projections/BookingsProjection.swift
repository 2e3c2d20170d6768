import EventLog
import Foundation

/// The bookings: by ID and in date order. A `TableProjection` of `BookingRow`s.
///
/// Tables (keys in `TableKey`'s encodings):
/// - `by-id`: 16 ID bytes → `BookingRow`.
/// - `by-date`: an index (keys only) on the date: sortable date (8 bytes) + ID → nothing.
///   ``BookingQueries/all(in:)`` walks it in order and reads each row from `by-id`.
///
/// Version 2 keeps `by-date` to its keys; version 1 stored the row there again. A booking's
/// creation writes two B-trees either way, and its date is random, so a commit of many bookings
/// dirties pages all over `by-date`: with 24-byte entries instead of ~230-byte ones that tree is a
/// tenth of the size and a commit writes fewer pages. A store of version 1 is rebuilt on open,
/// like any projection of another version.
///
/// The handlers are the simple path: a `BookingCreated` becomes its row, a `BookingDeleted`
/// deletes it. A hook (`fastPath`) does the same for payloads of the current schema on their
/// bytes: the row is copied field by field from the payload without creating its strings, and a
/// deletion's payload (the booking ID's 16 bytes) is the row's key as it is. `by-date`'s
/// `keyOfStoredRow` reads a stored row's date without decoding its strings. Tests check that the
/// two paths build the same tables; `Docs/Benchmarks.md` says what the hook buys.
///
/// A booking stays when its restaurant is removed: it keeps the restaurant's name.
public struct BookingsProjection: Projection {
  /// The projection's name.
  public static let name = "bookings"
  static let byID = "by-id"
  static let byDate = "by-date"

  /// The date index.
  static let dateIndex = TableIndex<BookingRow>(
    byDate, .date(\.date), keyOfStoredRow: BookingRow.writeDateKey(ofStored:into:))

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

  /// The projection with the fast path.
  static let table = table(fastPath: true)

  /// The projection, with or without the hook (tests compare the two).
  static func table(fastPath: Bool) -> TableProjection<BookingRow> {
    TableProjection(
      name: name, version: 2, rowTable: byID, primaryKey: .uuid(\.id), indexes: [dateIndex],
      handlers: handlers, hook: fastPath ? Self.fastPath : nil)
  }

  /// The hand-written fast path for payloads of the current schema, on their bytes, writing the
  /// tables as the engine would: the row under its ID in `by-id`, and in `by-date` the date's
  /// sortable key then the ID with an empty value. It skips the engine's generic steps (reading
  /// the new row back for its date, checking for a row to replace, which a `BookingCreated`, the
  /// first event of its stream, never has): replay spent about a tenth more time without it
  /// (`Docs/Benchmarks.md`, finding 7). `BookingsHookTests` checks both paths build the same tables.
  @Sendable
  static func fastPath(
    _ event: RecordedEvent, _ table: TableWriter<BookingRow>
  ) throws
    -> TableProjection<BookingRow>.HookResult
  {
    let type = event.type
    if type.utf8.count == BookingCreated.eventType.utf8.count, type == BookingCreated.eventType,
      event.schemaVersion == BookingCreated.schemaVersion
    {
      try event.payload.withUnsafeBytes { payload in
        var date = Date(timeIntervalSince1970: 0)
        try RowWriter.withRow(
          { writer in
            // Only decoding fails as the payload's fault; a failed write (LMDB's map full, which the
            // store grows and retries on) goes through as it is.
            do {
              date = try BookingRow.transcode(payload, to: &writer)
            } catch {
              throw EventStoreError.payloadDecoding(sequence: event.sequence, type: type, underlying: error)
            }
          },
          { row in
            // The row's bytes 1...16 are the booking's ID: its primary key.
            let id = UnsafeRawBufferPointer(rebasing: row[1..<17])
            try table.withState { state in
              // One search either way: a second BookingCreated of a booking (a device's bug, or a
              // hostile one) is refused, and an event that comes from elsewhere is then skipped.
              guard try state.insert(row, forKey: id, in: byID) else {
                throw BookingError.duplicateBooking(UUID(uuid: id.loadUnaligned(as: uuid_t.self)))
              }
              try withDateKey(date, id: id) {
                try state.put(UnsafeRawBufferPointer(start: nil, count: 0), forKey: $0, in: byDate)
              }
            }
          })
      }
      return .done
    }
    if type.utf8.count == BookingDeleted.eventType.utf8.count, type == BookingDeleted.eventType,
      event.schemaVersion == BookingDeleted.schemaVersion, event.payload.count == 16
    {
      // The current schema's payload is the booking ID's 16 bytes (`BookingDeleted.init(binary:)`
      // reads nothing else): it is the `by-id` key as it is. The stored row is read in place for
      // its date alone.
      try event.payload.withUnsafeBytes { id in
        try table.withState { state in
          guard let date = try state.withValue(forKey: id, in: byID, { try BookingRow.date(ofStored: $0) })
          else {
            return
          }
          _ = try state.delete(forKey: id, in: byID)
          _ = try withDateKey(date, id: id) { try state.delete(forKey: $0, in: byDate) }
        }
      }
      return .done
    }
    return .applyHandlers
  }

  /// Calls `body` with the `by-date` key of a booking, as the index's `.date(\.date)` column and
  /// the primary key make it (``TableKey/sortableBits(of:)`` big-endian, then the ID), in place.
  private static func withDateKey<R>(
    _ date: Date, id: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R {
    // (UInt64, uuid_t) is 24 contiguous bytes: uuid_t is aligned to a byte.
    let key = (TableKey.sortableBits(of: date).bigEndian, id.loadUnaligned(as: uuid_t.self))
    return try withUnsafeBytes(of: key) { try body($0) }
  }

  /// The table projection, held by every copy (reading the static for each event would retain it).
  private let projection = Self.table

  /// The projection's name, `bookings`.
  public var name: String { Self.name }
  /// The version of the table projection: raising it rebuilds the tables on open.
  public var version: UInt32 { projection.version }
  /// The projection's tables: `by-id` and `by-date`.
  public var tables: [String] { projection.tables }

  /// Creates the projection.
  public init() {}

  /// Folds one event into the tables through the table projection: its hook, then its handlers.
  /// - Parameters:
  ///   - event: the event to fold; events of other types change nothing.
  ///   - state: the projection's tables.
  /// - Throws: what the table projection throws; the append that carried the event then fails.
  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    try projection.apply(event, to: state)
  }
}
