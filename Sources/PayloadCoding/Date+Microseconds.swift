import Foundation

extension Date {
  /// The microseconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
  private static let referenceMicroseconds: Int64 = 978_307_200_000_000

  /// The date `microseconds` after 1970-01-01T00:00:00Z, as the log stores recorded-at times:
  /// the `Date` nearest to that instant (one rounding, from the exact microseconds since the
  /// reference date), so that `ISO8601.exactString(from:)` shows at most six fraction digits.
  public init(microsecondsSince1970 microseconds: Int64) {
    let (sinceReference, overflow) = microseconds.subtractingReportingOverflow(Self.referenceMicroseconds)
    if overflow {
      self.init(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    } else {
      self.init(timeIntervalSinceReferenceDate: Double(sinceReference) / 1_000_000)
    }
  }

  /// The microseconds since 1970-01-01T00:00:00Z, to the nearest: a date made by
  /// ``init(microsecondsSince1970:)`` comes back exact, and so does one parsed from
  /// `ISO8601.string(from:)`'s text.
  ///
  /// Computed from the whole seconds and the fraction of the reference-date interval (both
  /// exact), not by scaling the interval since 1970: past 2038 that product is a `Double` whose
  /// steps are half a microsecond, and rounded some dates to the neighbouring microsecond.
  public var microsecondsSince1970: Int64 {
    let interval = timeIntervalSinceReferenceDate
    guard interval.isFinite, abs(interval) < 9e12 else {
      // Beyond ±285,000 years (or not a number): the nearest microsecond count there is.
      return interval.isNaN ? 0 : interval < 0 ? .min : .max
    }
    let seconds = interval.rounded(.down)
    let fraction = Int64(((interval - seconds) * 1_000_000).rounded())
    return Int64(seconds) * 1_000_000 + fraction + Self.referenceMicroseconds
  }
}
