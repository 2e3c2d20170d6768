import EventLog
import Foundation

// The bookings projection's measured fast path: replay spent about a tenth more time without it
// (`Benchmarks/Results/FINDINGS.md`, finding 7). `BookingsHookTests` checks that it builds the same
// tables as the handlers in `BookingsProjection.swift`, which are the simple path a reader copies.

extension BookingsProjection {
  /// The hand-written fast path for payloads of the current schema, on their bytes, writing the
  /// tables as the engine would: the row under its ID in `by-id`, and in `by-date` the date's
  /// sortable key then the ID with an empty value. It skips the engine's generic steps (reading
  /// the new row back for its date, checking for a row to replace, which a `BookingCreated`, the
  /// first event of its stream, never has): replay spent about a tenth more time without it
  /// (`Benchmarks/Results/FINDINGS.md`, finding 7). `BookingsHookTests` checks both paths build the
  /// same tables.
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
              guard try state.insert(row, forKey: id, in: rowTable) else {
                throw BookingError.duplicateBooking(UUID(uuid: id.loadUnaligned(as: uuid_t.self)))
              }
              try withDateKey(date, id: id) {
                try state.put(UnsafeRawBufferPointer(start: nil, count: 0), forKey: $0, in: dateTable)
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
          guard
            let date = try state.withValue(forKey: id, in: rowTable, { try BookingRow.date(ofStored: $0) })
          else {
            return
          }
          _ = try state.delete(forKey: id, in: rowTable)
          _ = try withDateKey(date, id: id) { try state.delete(forKey: $0, in: dateTable) }
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
}
