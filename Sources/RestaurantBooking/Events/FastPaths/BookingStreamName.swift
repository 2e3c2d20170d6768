import Foundation

// The booking stream's name written by hand, behind `RestaurantBookingStreams.booking(_:)`.

extension RestaurantBookingStreams {
  private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
  private static let bookingPrefixBytes: [UInt8] = Array(bookingPrefix.utf8)

  /// `bookingPrefix + id.uuidString`, written digit by digit: `uuidString` formats through
  /// `snprintf` on Linux, a few percent of a batched append's time. `BookingIDTests` checks the two
  /// agree.
  static func bookingStreamName(of id: UUID) -> String {
    let hex = hexDigits
    let prefix = bookingPrefixBytes
    let text = withUnsafeBytes(of: id.uuid) { bytes in
      String(unsafeUninitializedCapacity: prefix.count + 36) { buffer in
        var at = 0
        for byte in prefix {
          buffer[at] = byte
          at += 1
        }
        for index in 0..<16 {
          if index == 4 || index == 6 || index == 8 || index == 10 {
            buffer[at] = UInt8(ascii: "-")
            at += 1
          }
          buffer[at] = hex[Int(bytes[index] >> 4)]
          buffer[at + 1] = hex[Int(bytes[index] & 0x0F)]
          at += 2
        }
        return at
      }
    }
    return text
  }
}
