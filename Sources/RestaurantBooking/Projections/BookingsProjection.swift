import EventLog
import Foundation

/// The bookings: by ID and in date order.
///
/// Tables (keys in ``ProjectionKeys``):
/// - `by-id`: 16 ID bytes → ``BookingRow``.
/// - `by-date`: sortable date (8 bytes) + ID → ``BookingRow`` (read sequentially by
///   ``BookingQueries/all(in:)``).
///
/// A booking stays when its restaurant is removed: it keeps the restaurant's name.
public struct BookingsProjection: Projection {
  /// The projection's name.
  public static let name = "bookings"
  static let byID = "by-id"
  static let byDate = "by-date"

  public var name: String { Self.name }
  public var version: UInt32 { 1 }
  public var tables: [String] { [Self.byID, Self.byDate] }

  /// Creates the projection.
  public init() {}

  /// A booking's row and its two keys. Only arrays: passing `UUID` and `Date` (types of a
  /// resilient module) out of a closure copies them through value witnesses, which the replay's
  /// hot path notices.
  private typealias Entries = (row: [UInt8], idKey: [UInt8], dateKey: [UInt8])

  private static func entries(row: [UInt8], id: UUID, date: Date) -> Entries {
    (row, ProjectionKeys.id(id), ProjectionKeys.date(date, id: id))
  }

  private static func entries(transcoding payload: UnsafeRawBufferPointer) throws -> Entries {
    let (row, id, date) = try BookingRow.transcoding(payload)
    return entries(row: row, id: id, date: date)
  }

  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    switch event.type {
    case BookingCreated.eventType:
      let (row, idKey, dateKey): Entries
      if event.schemaVersion == BookingCreated.schemaVersion {
        // The row straight from the payload: no strings are created only to be written again.
        do {
          (row, idKey, dateKey) = try event.payload.withUnsafeBytes { try Self.entries(transcoding: $0) }
        } catch {
          throw EventStoreError.payloadDecoding(
            sequence: event.sequence, type: event.type, reason: "\(error)")
        }
      } else {
        let booking = BookingRow(try event.decode(BookingCreated.self))
        (row, idKey, dateKey) = Self.entries(row: booking.bytes, id: booking.id, date: booking.date)
      }
      // The keys, and the row at its last use, are handed over rather than copied.
      try state.put(row, forKey: idKey, in: Self.byID)
      try state.put(row, forKey: dateKey, in: Self.byDate)
    case BookingDeleted.eventType:
      let deleted = try event.decode(BookingDeleted.self)
      let key = ProjectionKeys.id(deleted.bookingID)
      // The stored row is read in place, not copied out: only its date is needed.
      if let dateKey = try state.withValue(forKey: key, in: Self.byID, { try BookingRow.dateKey(of: $0) }) {
        try state.delete(forKey: key, in: Self.byID)
        try state.delete(forKey: dateKey, in: Self.byDate)
      }
    default:
      break
    }
  }
}
