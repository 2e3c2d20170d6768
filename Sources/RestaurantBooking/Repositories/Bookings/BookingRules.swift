import EventLog
import Foundation

/// The rules a new booking must follow.
///
/// - The party is 1 to 20 guests (``partySizes``).
/// - The customer's name is not empty or only white space.
/// - The customer's name and the notes hold no NUL (U+0000): the replication server cannot store
///   one, so such a booking could never be pushed (``holdsNUL(_:)``, which admission checks too).
/// - The date is a real date, not in the past (at the moment of creation), and not after
///   ``latestDate`` (the last date ISO 8601 can write with a four-digit year).
public enum BookingRules {
  /// The allowed party sizes for a new booking (this app version's policy).
  public static let partySizes: ClosedRange<Int> = 1...20

  /// The party sizes any stored booking has, whatever app version made it: the domain's
  /// invariant, which admission checks on events from elsewhere (``partySizes`` may change
  /// between versions; a party of 0 or of a million never was a booking).
  public static let possiblePartySizes: ClosedRange<Int> = 1...1_000

  /// The latest date a booking may be for: 9999-12-31T23:59:59Z.
  public static let latestDate = Date(timeIntervalSince1970: 253_402_300_799)

  /// Checks the rules, returning the customer name and notes as they are stored (trimmed; empty
  /// notes as `nil`).
  /// - Parameters:
  ///   - date: the booking's date: not in the past, at most ``latestDate``.
  ///   - partySize: the number of guests, in ``partySizes``.
  ///   - customerName: the customer's name, trimmed before the rule is checked.
  ///   - notes: optional notes, trimmed; empty ones are stored as `nil`.
  ///   - now: the moment of creation.
  /// - Returns: the customer name and notes as they are stored.
  /// - Throws: ``BookingError``.
  public static func validate(
    date: Date, partySize: Int, customerName: String, notes: String?, now: Date
  ) throws(BookingError) -> (customerName: String, notes: String?) {
    guard partySizes.contains(partySize) else {
      throw .partySizeOutOfRange(partySize, allowed: partySizes)
    }
    let name = customerName.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !name.isEmpty else { throw .emptyCustomerName }
    guard !holdsNUL(name) else { throw .nulCharacter(field: "customerName") }
    let seconds = date.timeIntervalSince1970
    guard seconds.isFinite else {
      throw .invalidDate(ISO8601.messageString(from: date), reason: "is not a finite date")
    }
    guard date >= now else {
      throw .invalidDate(
        ISO8601.messageString(from: date),
        reason: "is in the past (now is \(ISO8601.messageString(from: now)))")
    }
    guard date <= latestDate else {
      throw .invalidDate(ISO8601.messageString(from: date), reason: "is after year 9999")
    }
    let trimmedNotes = notes?.trimmingCharacters(in: .whitespacesAndNewlines)
    if let trimmedNotes, holdsNUL(trimmedNotes) { throw .nulCharacter(field: "notes") }
    return (name, trimmedNotes?.isEmpty == false ? trimmedNotes : nil)
  }

  /// Whether `text` holds a NUL (U+0000). PostgreSQL's `text` and `jsonb` cannot hold one (a
  /// `\u0000` in a pushed payload is refused), so a booking whose name or notes hold one could
  /// never reach the server: the domain refuses it where it enters (``validate(date:partySize:customerName:notes:now:)``
  /// for a command, `RestaurantBookingAdmission` for an event from elsewhere). Other control
  /// characters are stored as they are (and escaped wherever the command line shows them).
  public static func holdsNUL(_ text: String) -> Bool { text.utf8.contains(0) }
}
