import EventLog
import Foundation

// A booking's payload written by hand, behind `NewEvent(_:)`: the default encodes through
// `Codable` (keyed containers, coding paths and generic dispatch for every field). Measured with
// alternating pairs of `append.batched` @ 100k against the build without it: CPU 0.922×
// (0.900–0.956), 8 pairs (Benchmarks/Results/FINDINGS.md, finding 15). `FastPathTests` checks
// that it writes the bytes and pending seals of the `Codable` path.

extension BookingCreated {
  /// Writes the fields in declaration order, the bytes `Codable` writes, with the customer's name
  /// and notes as the placeholders the append seals.
  public func encode(binary writer: inout BinaryWriter) throws {
    writer.uuid(bookingID)
    writer.uuid(restaurantID)
    writer.string(restaurantName)
    writer.date(date)
    writer.int(partySize)
    try writer.personal(customerName, field: "customerName")
    try writer.optional(notes) { try $0.personal($1, field: "notes") }
    writer.date(createdAt)
  }
}
