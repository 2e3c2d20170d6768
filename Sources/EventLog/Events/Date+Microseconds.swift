import Foundation

extension Date {
  /// The date `microseconds` after 1970-01-01T00:00:00Z, as the log stores recorded-at times.
  public init(microsecondsSince1970 microseconds: Int64) {
    self.init(
      timeIntervalSince1970: Double(microseconds / 1_000_000) + Double(microseconds % 1_000_000) / 1_000_000)
  }

  /// The microseconds since 1970-01-01T00:00:00Z, to the nearest: a date made by
  /// ``init(microsecondsSince1970:)`` comes back exact (rounding down missed about one date in a
  /// hundred, since the double is a hair below).
  public var microsecondsSince1970: Int64 {
    Int64((timeIntervalSince1970 * 1_000_000).rounded())
  }
}
