import EventLog
import Foundation

/// The streams of the restaurant-booking domain.
///
/// | stream | events |
/// |---|---|
/// | `restaurant-catalog` | ``RestaurantAdded``, ``RestaurantUpdated``, ``RestaurantRemoved``, ``RestaurantsRefreshed`` |
/// | `booking-<UUID>` | ``BookingCreated`` then at most one ``BookingDeleted`` |
///
/// The whole catalog is one stream so that a sync can append its diff with the catalog's
/// expected version, and a booking can be appended only while the catalog is at the version it
/// was validated against.
public enum RestaurantBookingStreams {
  /// The one stream of every catalog event.
  public static let catalog: StreamID = "restaurant-catalog"

  /// The prefix of every booking stream.
  public static let bookingPrefix = "booking-"

  private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
  private static let bookingPrefixBytes: [UInt8] = Array(bookingPrefix.utf8)

  /// The stream of the booking `id`: `booking-<UUID>` (upper-case UUID, as `uuidString`).
  public static func booking(_ id: UUID) -> StreamID {
    // Written digit by digit: `uuidString` formats through `snprintf` on Linux, a few percent of
    // a batched append's time.
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
    return StreamID(text)
  }
}
