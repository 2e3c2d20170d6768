import EventLog
import Foundation

/// The bookings: by ID and in date order.
///
/// Tables (keys in ``ProjectionKeys``):
/// - `by-id`: 16 ID bytes → ``BookingRow``.
/// - `by-date`: sortable date (8 bytes) + ID → nothing: an index. ``BookingQueries/all(in:)``
///   walks it in order and reads each row from `by-id`.
///
/// Version 2 keeps `by-date` to its keys; version 1 stored the row there again. A booking's
/// creation writes two B-trees either way, and its date is random, so a commit of many bookings
/// dirties pages all over `by-date`: with 24-byte entries instead of ~230-byte ones that tree is a
/// tenth of the size and a commit writes fewer pages. A store of version 1 is rebuilt on open,
/// like any projection of another version.
///
/// A booking stays when its restaurant is removed: it keeps the restaurant's name.
public struct BookingsProjection: Projection {
  /// The projection's name.
  public static let name = "bookings"
  static let byID = "by-id"
  static let byDate = "by-date"

  public var name: String { Self.name }
  public var version: UInt32 { 2 }
  public var tables: [String] { [Self.byID, Self.byDate] }

  /// Creates the projection.
  public init() {}

  /// Stores `row` under its ID (the date key's last 16 bytes), and the date key in the index.
  private static func put(
    _ row: UnsafeRawBufferPointer, dateKey: ProjectionKeys.DateKey, in state: ProjectionState
  )
    throws
  {
    try withUnsafeBytes(of: dateKey) { key in
      try state.put(row, forKey: UnsafeRawBufferPointer(rebasing: key[8...]), in: Self.byID)
      try state.put(UnsafeRawBufferPointer(rebasing: key[0..<0]), forKey: key, in: Self.byDate)
    }
  }

  /// Removes the booking under `idKey` from both tables, if it is there.
  private static func delete(idKey: UnsafeRawBufferPointer, in state: ProjectionState) throws {
    // The stored row is read in place, not copied out: only its date is needed.
    guard let dateKey = try state.withValue(forKey: idKey, in: Self.byID, { try BookingRow.dateKey(of: $0) })
    else { return }
    try state.delete(forKey: idKey, in: Self.byID)
    _ = try withUnsafeBytes(of: dateKey) { try state.delete(forKey: $0, in: Self.byDate) }
  }

  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    switch event.type {
    case BookingCreated.eventType:
      if event.schemaVersion == BookingCreated.schemaVersion {
        // The row straight from the payload, in scratch memory, and its keys as plain bytes: no
        // string or array is created only to be copied into the tables.
        // Only decoding fails as the payload's fault; a failed write (LMDB's map full, which the
        // store grows and retries on) goes through as it is.
        var writeFailure: (any Error)?
        do {
          try event.payload.withUnsafeBytes { payload in
            try BookingRow.withTranscodedRow(payload) { row, dateKey in
              do { try Self.put(row, dateKey: dateKey, in: state) } catch { writeFailure = error }
            }
          }
        } catch {
          throw EventStoreError.payloadDecoding(sequence: event.sequence, type: event.type, underlying: error)
        }
        if let writeFailure { throw writeFailure }
      } else {
        let booking = BookingRow(try event.decode(BookingCreated.self))
        try booking.bytes.withUnsafeBytes { row in
          try Self.put(row, dateKey: ProjectionKeys.dateKey(booking.date, id: booking.id), in: state)
        }
      }
    case BookingDeleted.eventType:
      if event.schemaVersion == BookingDeleted.schemaVersion, event.payload.count == 16 {
        // The current schema's payload is the booking ID's 16 bytes (`BookingDeleted.init(binary:)`
        // reads nothing else): it is the `by-id` key as it is.
        try event.payload.withUnsafeBytes { try Self.delete(idKey: $0, in: state) }
      } else {
        let deleted = try event.decode(BookingDeleted.self)
        try withUnsafeBytes(of: deleted.bookingID.uuid) { try Self.delete(idKey: $0, in: state) }
      }
    default:
      break
    }
  }
}
