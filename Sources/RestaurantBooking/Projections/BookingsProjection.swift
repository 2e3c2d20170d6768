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
  private struct Entries {
    var row: [UInt8]
    var idKey: [UInt8]
    var dateKey: [UInt8]

    init(row: [UInt8], id: UUID, date: Date) {
      self.row = row
      idKey = ProjectionKeys.id(id)
      dateKey = ProjectionKeys.date(date, id: id)
    }

    init(transcoding payload: UnsafeRawBufferPointer) throws {
      let (row, id, date) = try BookingRow.transcoding(payload)
      self.init(row: row, id: id, date: date)
    }
  }

  public func apply(_ event: RecordedEvent, to state: ProjectionState) throws {
    switch event.type {
    case BookingCreated.eventType:
      let entries: Entries
      if event.schemaVersion == BookingCreated.schemaVersion {
        // The row straight from the payload: no strings are created only to be written again.
        do {
          entries = try event.payload.withUnsafeBytes { try Entries(transcoding: $0) }
        } catch {
          throw EventStoreError.payloadDecoding(
            sequence: event.sequence, type: event.type, reason: "\(error)")
        }
      } else {
        let row = BookingRow(try event.decode(BookingCreated.self))
        entries = Entries(row: row.bytes, id: row.id, date: row.date)
      }
      try state.put(entries.row, forKey: entries.idKey, in: Self.byID)
      try state.put(entries.row, forKey: entries.dateKey, in: Self.byDate)
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
