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

  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    switch event.type {
    case BookingCreated.eventType:
      let bytes: [UInt8]
      let id: UUID
      let date: Date
      if event.schemaVersion == BookingCreated.schemaVersion {
        // The row straight from the payload: no strings are created only to be written again.
        do {
          (bytes, id, date) = try event.payload.withUnsafeBytes { try BookingRow.transcoding($0) }
        } catch {
          throw EventStoreError.payloadDecoding(
            sequence: event.sequence, type: event.type, reason: "\(error)")
        }
      } else {
        let row = BookingRow(try event.decode(BookingCreated.self))
        (bytes, id, date) = (row.bytes, row.id, row.date)
      }
      try state.put(bytes, forKey: ProjectionKeys.id(id), in: Self.byID)
      try state.put(bytes, forKey: ProjectionKeys.date(date, id: id), in: Self.byDate)
    case BookingDeleted.eventType:
      let deleted = try event.decode(BookingDeleted.self)
      let key = ProjectionKeys.id(deleted.bookingID)
      if let stored = try state.value(forKey: key, in: Self.byID) {
        let dateKey = try BookingRow.dateKey(of: stored)
        try state.delete(forKey: key, in: Self.byID)
        try state.delete(forKey: dateKey, in: Self.byDate)
      }
    default:
      break
    }
  }
}
