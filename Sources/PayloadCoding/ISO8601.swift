import Foundation

/// ISO 8601 dates in UTC with fractional seconds (`2026-11-30T12:00:00.123456Z`), and parsing of
/// the same with or without fractions.
///
/// Two ways to write a date: ``string(from:)`` to the microsecond, six digits always, for times the
/// log keeps to the microsecond (an event's recorded-at) and for display; ``exactString(from:)`` with as many
/// fraction digits as the date's `Double` needs, for dates inside payloads, which must come back
/// bit for bit. ``date(from:)`` reads both exactly.
package enum ISO8601 {
  /// Formats `date` in UTC with six fraction digits, always (`2026-12-24T19:30:00.000000Z`): every
  /// time the tool prints has the same width, so that sorting the text sorts the times.
  ///
  /// Computed from the seconds since 1970 (the inverse of the parser's day count), not through
  /// `Calendar`, which each call had to create with its time zone (export writes one per event).
  public static func string(from date: Date) -> String {
    let totalMicros = date.microsecondsSince1970
    let seconds = totalMicros.floorDiv(1_000_000)
    let micros = totalMicros - seconds * 1_000_000
    let days = seconds.floorDiv(86_400)
    let secondOfDay = Int(seconds - days * 86_400)
    let (year, month, day) = civilDate(daysSince1970: Int(days))
    func pad(_ value: Int, _ width: Int) -> String { String(value).leftPadded(to: width) }
    var text =
      "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
    text += "." + String(micros).leftPadded(to: 6)
    return text + "Z"
  }

  /// `date` in a message (an error naming a date): ``string(from:)``'s text, or the seconds since
  /// 1970 as a number when the date is not finite, which has no ISO 8601 text.
  package static func messageString(from date: Date) -> String {
    date.timeIntervalSince1970.isFinite ? string(from: date) : "\(date.timeIntervalSince1970)"
  }

  /// The exact text of `date`: UTC, and the shortest fraction of a second that parses back
  /// (``date(from:)``) to the identical `Double` (`timeIntervalSinceReferenceDate`, which is what
  /// a `Date` is and what the binary format stores). A date made to the microsecond shows at
  /// most six digits; `Date()` shows the seven or so its `Double` holds
  /// (`2026-12-01T10:00:00.1234567Z`); a whole second shows none.
  ///
  /// It is how payload dates are written as JSON (exports, `log --json`), so that JSON back to
  /// binary gives the same bytes.
  /// - Returns: `nil` for a date that has no such text: not finite, negative zero (it would
  ///   read back as positive zero), or outside the years 0000–9999.
  public static func exactString(from date: Date) -> String? {
    let interval = date.timeIntervalSinceReferenceDate
    guard interval.isFinite, !(interval == 0 && interval.sign == .minus),
      abs(interval) < 400_000_000_000
    else { return nil }
    // The shortest decimal digits that round-trip (Swift's `description`), as an integer part
    // and fraction digits.
    let (negative, whole, fraction) = decimalParts(of: interval)
    var seconds = whole
    var digits = fraction
    if negative {
      // -(w.f) = -(w + 1) + (1 - 0.f): the fraction of a second counts up from the earlier second.
      seconds = -whole
      if !digits.isEmpty {
        seconds -= 1
        digits = complement(of: digits)
      }
    }
    let since1970 = Int64(seconds) + referenceOffset
    let days = since1970.floorDiv(86_400)
    let secondOfDay = Int(since1970 - days * 86_400)
    let (year, month, day) = civilDate(daysSince1970: Int(days))
    guard (0...9999).contains(year) else { return nil }
    func pad(_ value: Int, _ width: Int) -> String { String(value).leftPadded(to: width) }
    var text =
      "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
    while digits.last == UInt8(ascii: "0") { digits.removeLast() }
    if !digits.isEmpty { text += "." + String(decoding: digits, as: UTF8.self) }
    return text + "Z"
  }

  /// What a date needs to have exact text (``exactString(from:)``), for error messages.
  static let exactRule = "a payload date must be finite, not negative zero, and in the years 0000 to 9999"

  /// The seconds between 1970-01-01 and 2001-01-01, the reference date of `Date`.
  private static let referenceOffset: Int64 = 978_307_200

  /// The sign, integer part and fraction digits of `value`'s shortest round-trip decimal text.
  private static func decimalParts(of value: Double) -> (negative: Bool, whole: Int, fraction: [UInt8]) {
    var text = Array(value.magnitude.description.utf8)
    var exponent = 0
    if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
      exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
      text.removeSubrange(e...)
    }
    // Digits without the point, and where the point goes.
    var point = text.firstIndex(of: UInt8(ascii: ".")) ?? text.count
    var digits = text
    if point < digits.count { digits.remove(at: point) }
    point += exponent
    if point < 0 {
      digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: -point), at: 0)
      point = 0
    }
    if point > digits.count { digits += repeatElement(UInt8(ascii: "0"), count: point - digits.count) }
    var whole = 0
    for digit in digits[..<point] { whole = whole * 10 + Int(digit) - 48 }
    var fraction = Array(digits[point...])
    while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
    return (value.sign == .minus, whole, fraction)
  }

  /// 10ⁿ minus the n-digit fraction `digits` (not all zeros), as n digits: `75` → `25`.
  private static func complement(of digits: [UInt8]) -> [UInt8] {
    var result = digits.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
    var index = result.count - 1
    while index >= 0 {
      if result[index] == UInt8(ascii: "9") {
        result[index] = UInt8(ascii: "0")
        index -= 1
      } else {
        result[index] += 1
        break
      }
    }
    return result
  }

  /// Parses an RFC 3339 (ISO 8601) date-time, `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z` or
  /// `±HH:MM`; `nil` for anything else, including impossible dates such as February 30.
  ///
  /// Exact: every fraction digit counts, and the `Date` is the `Double` nearest to the decimal
  /// number of seconds the text names (so ``exactString(from:)`` reads back bit for bit, and
  /// ``string(from:)`` to the microsecond).
  ///
  /// Hand-written: creating `ISO8601DateFormatter`s (ICU) for each date cost ~130 µs a date and
  /// held `eventlog import` to 3.5 k events/s (100,600 events in 28.4 s; 4.1 s with this parser).
  /// - Complexity: O(n) in the text's length.
  public static func date(from text: String) -> Date? {
    var text = text
    return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
  }

  private static func parse(_ bytes: UnsafeRawBufferPointer) -> Date? {
    var index = 0
    func number(_ width: Int) -> Int? {
      guard index + width <= bytes.count else { return nil }
      var value = 0
      for offset in index..<(index + width) {
        let digit = Int(bytes[offset]) - 48
        guard (0...9).contains(digit) else { return nil }
        value = value * 10 + digit
      }
      index += width
      return value
    }
    func expect(_ characters: String) -> Bool {
      guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
      index += 1
      return true
    }
    guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
      expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
      let second = number(2)
    else { return nil }
    guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24,
      minute < 60,
      second < 60
    else { return nil }
    var fraction: [UInt8] = []
    if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
      index += 1
      while index < bytes.count, (48...57).contains(bytes[index]) {
        fraction.append(bytes[index])
        index += 1
      }
      guard !fraction.isEmpty else { return nil }
      while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
    }
    var offset = 0
    if expect("Zz") {
      offset = 0
    } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
      let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
      index += 1
      guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else {
        return nil
      }
      offset = sign * (hours * 3600 + minutes * 60)
    } else {
      return nil
    }
    guard index == bytes.count else { return nil }
    let seconds =
      daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    let sinceReference = Int64(seconds - offset) - referenceOffset
    guard !fraction.isEmpty else { return Date(timeIntervalSinceReferenceDate: Double(sinceReference)) }
    // The decimal number of seconds since the reference date, rounded once to the nearest Double.
    let decimal: String
    if sinceReference >= 0 {
      decimal = "\(sinceReference).\(String(decoding: fraction, as: UTF8.self))"
    } else {
      // s + 0.f = -((-s - 1) + (1 - 0.f))
      decimal = "-\(-sinceReference - 1).\(String(decoding: complement(of: fraction), as: UTF8.self))"
    }
    guard let interval = Double(decimal) else { return nil }
    return Date(timeIntervalSinceReferenceDate: interval)
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`, the
  /// inverse of ``daysSince1970(year:month:day:)``).
  private static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's `days_from_civil`).
  private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}

extension Int64 {
  fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }
}

extension String {
  /// The text with zeros in front, to `width` characters (unchanged if it is that long already).
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
