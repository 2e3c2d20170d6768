import Foundation
import RestaurantBooking
import TestKit

/// One hash of a set of read models, so that the parent can check that every system of a
/// workload produced the same ones: restaurants by ID and in name order, bookings by ID and in
/// date order.
///
/// Each model is hashed field by field (FNV-1a, 64 bits; dates as whole milliseconds since 1970),
/// in the order the system lists them; the by-ID part looks every listed model up by its ID, in
/// bytewise ID order, and hashes what the lookup returns, so a listing and a lookup table that
/// disagree, or a table with more entries than the listing, change the hash.
struct ReadModelFingerprint {
  private var hash = FNV1a64()

  /// The outcome line of a set of read models: `restaurants=N bookings=M fingerprint=<hex>`.
  /// - Parameters:
  ///   - restaurantsByName: every restaurant, in name order (case-insensitive, then ID).
  ///   - restaurantCount: the entries of the by-ID restaurant table.
  ///   - restaurant: the by-ID lookup.
  ///   - bookingsByDate: every booking, in date order (then ID).
  ///   - bookingCount: the entries of the by-ID booking table.
  ///   - booking: the by-ID lookup.
  /// - Returns: the counts and the fingerprint of every row, read in order and by ID, as one line.
  static func outcome(
    restaurantsByName: [Restaurant], restaurantCount: Int, restaurant: (UUID) throws -> Restaurant?,
    bookingsByDate: [Booking], bookingCount: Int, booking: (UUID) throws -> Booking?
  ) rethrows -> String {
    var fingerprint = ReadModelFingerprint()
    fingerprint.add(UInt64(restaurantCount))
    for row in restaurantsByName { fingerprint.add(row) }
    for id in restaurantsByName.map(\.id).sorted(by: precedes) {
      if let row = try restaurant(id) { fingerprint.add(row) } else { fingerprint.missing(id) }
    }
    fingerprint.add(UInt64(bookingCount))
    for row in bookingsByDate { fingerprint.add(row) }
    for id in bookingsByDate.map(\.id).sorted(by: precedes) {
      if let row = try booking(id) { fingerprint.add(row) } else { fingerprint.missing(id) }
    }
    return "restaurants=\(restaurantCount) bookings=\(bookingCount) fingerprint=\(fingerprint.hash.hex)"
  }

  /// The outcome line of a list of restaurants (a catalog after a refresh): `restaurants=N fingerprint=<hex>`.
  static func outcome(restaurants: [Restaurant]) -> String {
    var fingerprint = ReadModelFingerprint()
    fingerprint.add(UInt64(restaurants.count))
    for row in restaurants { fingerprint.add(row) }
    return "restaurants=\(restaurants.count) fingerprint=\(fingerprint.hash.hex)"
  }

  /// The outcome line of the lists a `read.all` returns: `restaurants=N bookings=M fingerprint=<hex>`.
  static func outcome(restaurants: [Restaurant], bookings: [Booking]) -> String {
    var fingerprint = ReadModelFingerprint()
    fingerprint.add(UInt64(restaurants.count))
    for row in restaurants { fingerprint.add(row) }
    fingerprint.add(UInt64(bookings.count))
    for row in bookings { fingerprint.add(row) }
    return "restaurants=\(restaurants.count) bookings=\(bookings.count) fingerprint=\(fingerprint.hash.hex)"
  }

  private mutating func add(_ value: UInt64) { hash.add(value) }

  private mutating func add(_ id: UUID) { withUnsafeBytes(of: id.uuid) { hash.add($0) } }

  private mutating func add(_ date: Date) {
    hash.add(UInt64(bitPattern: Int64((date.timeIntervalSince1970 * 1000).rounded())))
  }

  private mutating func add(_ restaurant: Restaurant) {
    add(restaurant.id)
    hash.add(restaurant.name)
    hash.add(restaurant.cuisine.rawValue)
  }

  private mutating func add(_ booking: Booking) {
    add(booking.id)
    add(booking.restaurantID)
    hash.add(booking.restaurantName)
    add(booking.date)
    hash.add(UInt64(bitPattern: Int64(booking.partySize)))
    hash.add(booking.customerName ?? "")
    if let notes = booking.notes {
      hash.add(UInt64(1))
      hash.add(notes)
    } else {
      hash.add(UInt64(0))
    }
    add(booking.createdAt)
  }

  private mutating func missing(_ id: UUID) {
    hash.add("missing")
    add(id)
  }

  /// Bytewise UUID order (LMDB's and PostgreSQL's).
  static func precedes(_ a: UUID, _ b: UUID) -> Bool {
    withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in x.lexicographicallyPrecedes(y) } }
  }
}
