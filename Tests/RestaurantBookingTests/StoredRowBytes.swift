import EventLog
import Foundation

@testable import RestaurantBooking

// The domain's rows as their stored bytes, for the tests of their layouts.

extension BookingRow {
  init(_ bytes: [UInt8]) throws { self = try bytes.withUnsafeBytes { try BookingRow(storedBytes: $0) } }

  /// The stored bytes.
  var bytes: [UInt8] { (try? withStoredBytes { Array($0) }) ?? [] }
}

extension RestaurantRow {
  init(_ bytes: [UInt8]) throws { self = try bytes.withUnsafeBytes { try RestaurantRow(storedBytes: $0) } }

  /// The stored bytes.
  var bytes: [UInt8] { (try? withStoredBytes { Array($0) }) ?? [] }
}
