import EventLog
import Foundation

/// The bookings as events: reads the `bookings` projection; `create` appends ``BookingCreated``
/// to `booking-<id>`, `delete` appends ``BookingDeleted`` to it.
///
/// A booking is created only while its restaurant is in the catalog: the append carries a
/// zero-event guard on `restaurant-catalog` expecting the version the restaurant was found at,
/// so a refresh that removes the restaurant meanwhile makes the append fail; `create` then
/// validates again against the new catalog (at most ``maximumAttempts`` times).
public final class EventSourcedBookingRepository: BookingRepository {
  /// How often `create` validates again after a concurrent change of the catalog.
  public static let maximumAttempts = 5

  private let store: EventStore
  private let origin: String
  private let now: @Sendable () -> Date
  /// Runs between validation and append (tests use it to change the catalog in between).
  let beforeAppend: (@Sendable () async throws -> Void)?

  /// Creates the repository.
  /// - Parameters:
  ///   - store: an event store opened with `AppSchema.restaurantBooking`.
  ///   - origin: the events' origin metadata, for example `app` or `cli`.
  ///   - now: the clock for `createdAt` and the date rule.
  public convenience init(
    store: EventStore, origin: String = "app", now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.init(store: store, origin: origin, now: now, beforeAppend: nil)
  }

  init(
    store: EventStore, origin: String, now: @escaping @Sendable () -> Date,
    beforeAppend: (@Sendable () async throws -> Void)?
  ) {
    self.store = store
    self.origin = origin
    self.now = now
    self.beforeAppend = beforeAppend
  }

  /// Books a table: validates the booking, then appends ``BookingCreated`` to a new
  /// `booking-<id>` stream, guarded by the catalog version its restaurant was found at.
  /// - Parameters:
  ///   - restaurantID: a restaurant of the catalog.
  ///   - date: when the table is booked for; see ``BookingRules``.
  ///   - partySize: guests, within ``BookingRules/partySizes``.
  ///   - customerName: who books; not empty (surrounding white space is dropped).
  ///   - notes: free text; empty notes are stored as `nil`.
  /// - Returns: the stored booking, with its new ID and creation time.
  /// - Throws: ``BookingError`` (``BookingError/catalogBusy(attempts:)`` after ``maximumAttempts``
  ///   refreshes in between), or the event store's error.
  public func create(
    restaurantID: UUID, date: Date, partySize: Int, customerName: String, notes: String?
  ) async throws -> Booking {
    let createdAt = now()
    let (name, storedNotes) = try BookingRules.validate(
      date: date, partySize: partySize, customerName: customerName, notes: notes, now: createdAt)
    // Time-ordered IDs (version 7): the booking tables and the ID index take them near their ends.
    let bookingID = UUID.version7()
    let eventID = UUID.version7()
    let metadata = EventMetadata(correlationID: UUID(), origin: origin)
    for _ in 0..<Self.maximumAttempts {
      let (restaurant, catalogVersion, known) = try store.read { snapshot in
        (
          try RestaurantsProjection.table.reader(in: snapshot).row(forKey: .uuid(restaurantID)).map(
            Restaurant.init),
          // The stream's own version, skipped events included: what the append checks.
          try snapshot.version(of: RestaurantBookingStreams.catalog),
          try Self.customers(named: name, in: snapshot).first
        )
      }
      guard let restaurant else { throw BookingError.unknownRestaurant(restaurantID) }
      // A customer is known by name within the owner: a name that booked before keeps its ID.
      let customerID = known ?? UUID.version7()
      let created = BookingCreated(
        bookingID: bookingID, restaurantID: restaurantID, restaurantName: restaurant.name, date: date,
        partySize: partySize, customerID: customerID, customerName: name, notes: storedNotes,
        createdAt: createdAt)
      // One event ID for every attempt: a retried append can never store the booking twice.
      let event = try NewEvent(created, id: eventID, metadata: metadata)
      try await beforeAppend?()
      do {
        try await store.append([
          EventStore.StreamAppend(
            stream: RestaurantBookingStreams.booking(bookingID), expectedVersion: .noStream, events: [event]),
          EventStore.StreamAppend(
            stream: RestaurantBookingStreams.catalog, expectedVersion: .exactly(catalogVersion), events: []),
        ])
        return Booking(BookingRow(created), keyring: SubjectKeyring())
      } catch EventStoreError.wrongExpectedVersion(let stream, _, _)
        where stream == RestaurantBookingStreams.catalog
      {
        continue
      }
    }
    throw BookingError.catalogBusy(attempts: Self.maximumAttempts)
  }

  /// Deletes the booking `id`: appends ``BookingDeleted`` to its stream, expecting the stream's
  /// version as it was when the booking was found listed.
  ///
  /// Whether the booking exists is the projection's answer, not the stream's version: a stream
  /// may hold events the projections skip (pulled from a newer app, or breaking the domain's
  /// rules), and they change nothing about the booking.
  /// - Parameter id: the booking's ID.
  /// - Throws: ``BookingError/unknownBooking(_:)`` or ``BookingError/alreadyDeleted(_:)`` (also
  ///   when another deletion commits first), or the event store's error.
  public func delete(id: UUID) async throws {
    let stream = RestaurantBookingStreams.booking(id)
    let event = try NewEvent(
      BookingDeleted(bookingID: id), metadata: EventMetadata(correlationID: UUID(), origin: origin))
    for _ in 0..<Self.maximumAttempts {
      let (listed, version) = try store.read { snapshot in
        (
          try BookingsProjection.table.reader(in: snapshot).row(forKey: .uuid(id)) != nil,
          try snapshot.version(of: stream)
        )
      }
      guard listed else {
        throw version == 0 ? BookingError.unknownBooking(id) : BookingError.alreadyDeleted(id)
      }
      do {
        try await store.append([event], to: stream, expectedVersion: .exactly(version))
        return
      } catch EventStoreError.wrongExpectedVersion(let failed, _, _) where failed == stream {
        continue  // the stream moved (a pull, another deletion): look again
      }
    }
    throw BookingError.alreadyDeleted(id)
  }

  /// - Complexity: O(n log n): one sequential scan of the date index, and a lookup by ID per booking.
  /// - Throws: `TableError.danglingIndexEntry` when the index names a booking that is not stored
  ///   (a damaged projection; `verify` reports it too), or the event store's error.
  public func getAll() async throws -> [Booking] {
    try store.read { try Self.bookings(in: $0) }
  }

  /// - Complexity: O(log n).
  public func booking(id: UUID) async throws -> Booking? {
    try store.read { snapshot in
      let keyring = try snapshot.keyring()
      return try BookingsProjection.table.reader(in: snapshot).row(forKey: .uuid(id)).map {
        Booking($0, keyring: keyring)
      }
    }
  }

  /// The list of ``getAll()``, read again after each commit that changes it.
  public func observeAll() -> AsyncThrowingStream<[Booking], any Error> {
    store.observe { try Self.bookings(in: $0) }
  }

  /// The bookings' changes from now on, read from the log as it is committed (by this process or
  /// another); ends when the consumer stops iterating, throws when the log cannot be read.
  public func changes() -> AsyncThrowingStream<BookingChange, any Error> {
    store.changes { [store] in try BookingChange($0, keyring: try store.keyring()) }
  }

  /// Forgets a customer: erases every customer ID whose bookings carry `customerName` (two
  /// devices that first booked for the same name offline give it two), destroying their keys and
  /// appending a `SubjectErased` for each (`EventStore.erase(subject:reason:)`). Their bookings
  /// stay, with the name and notes erased.
  /// - Returns: the customer IDs erased, in the order of their first bookings' dates.
  /// - Throws: ``BookingError/unknownCustomer(_:)`` when no booking that can still be read carries
  ///   the name; the store's errors.
  public func forget(customerName: String, reason: String) async throws -> [UUID] {
    let customers = try store.read { try Self.customers(named: customerName, in: $0) }
    guard !customers.isEmpty else { throw BookingError.unknownCustomer(customerName) }
    for customer in customers {
      _ = try await store.erase(subject: customer, reason: reason)
    }
    return customers
  }

  /// The IDs of the customers whose bookings carry `name` (opened with the snapshot's keys), in
  /// the order of their bookings' dates, without repeats.
  /// - Complexity: O(n) in the bookings, one value opened per booking.
  static func customers(named name: String, in snapshot: EventStore.StoreSnapshot) throws -> [UUID] {
    let keyring = try snapshot.keyring()
    var found: [UUID] = []
    try BookingsProjection.table.reader(in: snapshot).forEach(in: BookingsProjection.byDate) { row in
      if let customer = row.customerName.subject, !found.contains(customer),
        keyring.reveal(row.customerName).value == name
      {
        found.append(customer)
      }
      return true
    }
    return found
  }

  /// Every booking of `snapshot`, by date, its personal values opened with the snapshot's keys.
  static func bookings(in snapshot: EventStore.StoreSnapshot) throws -> [Booking] {
    let keyring = try snapshot.keyring()
    return try BookingsProjection.table.reader(in: snapshot).rows(in: BookingsProjection.byDate) {
      Booking($0, keyring: keyring)
    }
  }
}
