import Foundation

/// ISO 8601 dates in UTC with fractional seconds (`2026-11-30T12:00:00.123456Z`), and parsing of
/// the same with or without fractions.
public enum ISO8601 {
  /// Formats `date` in UTC with microseconds, dropping trailing zero fractions.
  ///
  /// Computed from the seconds since 1970 (the inverse of the parser's day count), not through
  /// `Calendar`, which each call had to create with its time zone (export writes one per event).
  public static func string(from date: Date) -> String {
    let totalMicros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    let seconds = totalMicros.floorDiv(1_000_000)
    let micros = totalMicros - seconds * 1_000_000
    let days = seconds.floorDiv(86_400)
    let secondOfDay = Int(seconds - days * 86_400)
    let (year, month, day) = civilDate(daysSince1970: Int(days))
    func pad(_ value: Int, _ width: Int) -> String { String(value).leftPadded(to: width) }
    var text =
      "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
    if micros != 0 {
      var fraction = String(micros).leftPadded(to: 6)
      while fraction.hasSuffix("0") { fraction.removeLast() }
      text += "." + fraction
    }
    return text + "Z"
  }

  /// Parses an RFC 3339 (ISO 8601) date-time, `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z` or
  /// `±HH:MM`, to the microsecond (digits past the sixth are dropped); `nil` for anything else,
  /// including impossible dates such as February 30.
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
    var micros = 0
    if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
      index += 1
      var digits = 0
      while index < bytes.count, (48...57).contains(bytes[index]) {
        if digits < 6 { micros = micros * 10 + Int(bytes[index]) - 48 }
        digits += 1
        index += 1
      }
      guard digits > 0 else { return nil }
      for _ in digits..<max(digits, 6) { micros *= 10 }
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
    return Date(timeIntervalSince1970: Double(seconds - offset) + Double(micros) / 1_000_000)
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
