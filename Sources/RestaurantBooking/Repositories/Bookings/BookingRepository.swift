import Foundation

/// The customer's bookings.
///
/// ViewModels depend on this protocol only; the composition root picks the implementation.
public protocol BookingRepository: Sendable {
  /// Books a table; the booking's ID and creation time are generated.
  /// - Parameters:
  ///   - restaurantID: a restaurant of the catalog.
  ///   - date: when the table is booked for; see ``BookingRules``.
  ///   - partySize: guests, within ``BookingRules/partySizes``.
  ///   - customerName: who books; not empty (surrounding white space is dropped).
  ///   - notes: free text; empty notes are stored as `nil`.
  /// - Returns: the stored booking.
  /// - Throws: ``BookingError``, or a storage error.
  func create(
    restaurantID: UUID, date: Date, partySize: Int, customerName: String, notes: String?
  ) async throws -> Booking

  /// Deletes the booking `id`.
  /// - Throws: ``BookingError/unknownBooking(_:)`` or ``BookingError/alreadyDeleted(_:)``.
  /// Forgets a customer: their name and notes are erased from every booking, on this device and
  /// on every device and server the erasure replicates to; the bookings stay.
  /// - Parameters:
  ///   - customerName: the customer's name, as their bookings carry it.
  ///   - reason: why, for the audit trail (replicated: no personal data).
  /// - Returns: the customer IDs erased (more than one when devices first booked for the name
  ///   apart).
  /// - Throws: ``BookingError/unknownCustomer(_:)`` when no booking that can still be read carries
  ///   the name.
  func forget(customerName: String, reason: String) async throws -> [UUID]

  func delete(id: UUID) async throws

  /// Every booking, by date then ID.
  func getAll() async throws -> [Booking]

  /// The booking `id`, or `nil` (never created or deleted).
  func booking(id: UUID) async throws -> Booking?

  /// Every booking, as ``getAll()`` lists them, now and after each commit that changes the list
  /// (by this process or another): what a view shows. Ends when the consumer stops iterating;
  /// throws when the log cannot be read.
  func observeAll() -> AsyncThrowingStream<[Booking], any Error>

  /// The bookings' changes from now on, as they are committed (by this process or another):
  /// what happened, to react to (``observeAll()`` is what to show). Ends when the consumer stops
  /// iterating; throws when the log cannot be read.
  func changes() -> AsyncThrowingStream<BookingChange, any Error>
}

/// One committed change of the bookings.
public enum BookingChange: Sendable, Hashable {
  /// A booking was made.
  case created(Booking)
  /// A booking was deleted.
  case deleted(id: UUID)
}
