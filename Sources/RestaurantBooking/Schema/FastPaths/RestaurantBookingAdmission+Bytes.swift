import EventLog
import Foundation

// Admission's measured fast paths, behind `RestaurantBookingAdmission.verdict(for:)`: a
// `BookingCreated` judged on its payload's bytes, and blank text judged byte by byte (decoding
// and trimming were most of admission's time in a pull: `Benchmarks/Results/FINDINGS.md`, finding 6,
// and the comments below). `AdmissionTests` checks that the verdicts equal the decoded path's
// (`decodedVerdict(for:)`, in `RestaurantBookingAdmission.swift`).

extension RestaurantBookingAdmission {
  /// The verdict on a `BookingCreated` of the current schema read on its bytes, as
  /// `BookingCreated(binary:)` reads them (UTF-8 checked), without creating its strings: half the
  /// events of a pull are these, and decoding them was most of admission's time
  /// (`Benchmarks/Results/FINDINGS.md`, finding 6). `nil` when the payload does not read: the
  /// registry's path then says why, in its words. `AdmissionTests` checks the two paths agree.
  static func bookingCreatedVerdict(_ event: RecordedEvent) -> EventVerdict? {
    event.payload.withUnsafeBytes { bytes -> EventVerdict? in
      var reader = BinaryReader(bytes)
      guard let bookingID = try? reader.uuid(), (try? reader.uuid()) != nil,
        let restaurantName = try? reader.stringBytes(), let date = try? reader.date(),
        let partySize = try? reader.int(), let customerName = try? reader.personalBytes()
      else { return nil }
      let notes: UnsafeRawBufferPointer?
      do { notes = try reader.optional { try $0.personalBytes() } } catch { return nil }
      guard let createdAt = try? reader.date(), (try? reader.finish()) != nil else { return nil }
      // A sealed value was judged by the device that sealed it; one stored in clear (before
      // sealing) is judged here, and must be UTF-8 (the registry's path says why when not).
      var clearName: UnsafeRawBufferPointer?
      var clearNotes: UnsafeRawBufferPointer?
      for (field, bytes) in [("customerName", customerName), ("notes", notes)] {
        guard let bytes else { continue }
        switch PersonalStorage.of(bytes, inEvent: event.id) {
        case .sealed: continue
        case .invalid(let reason): return .invalid(reason: "the BookingCreated's \(field) \(reason)")
        case .clear:
          guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
          if field == "notes" { clearNotes = bytes } else { clearName = bytes }
        }
      }
      // NUL is the byte 0 in UTF-8, and no other character's bytes hold a 0.
      let nulField =
        clearName?.contains(0) == true ? "customerName" : clearNotes?.contains(0) == true ? "notes" : nil
      let reason = createdRule(
        event, bookingID: bookingID, partySize: partySize,
        customerNameIsBlank: clearName.map { blank(utf8: $0) } ?? false,
        restaurantNameIsBlank: blank(utf8: restaurantName), date: date, createdAt: createdAt,
        nulField: nulField)
      return reason.map { .invalid(reason: $0) } ?? .admitted
    }
  }

  /// ``blank(_:)`` of well-formed UTF-8 bytes: ASCII answered byte by byte, anything else by the
  /// trim.
  private static func blank(utf8 bytes: UnsafeRawBufferPointer) -> Bool {
    for byte in bytes {
      switch byte {
      case 0x09...0x0D, 0x20: continue
      case 0x80...:
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
      default: return false  // a character that is not white space: not blank
      }
    }
    return true
  }

  /// Whether `text` is empty or only white space, as `BookingRules` decides it for commands
  /// (`trimmingCharacters(in: .whitespacesAndNewlines)`). ASCII is answered byte by byte: the
  /// trim goes through `NSString` on Linux and was two thirds of admission's time in a pull
  /// (`Benchmarks/Results/FINDINGS.md`, finding 6). Past ASCII the trim itself decides, since
  /// Foundation's set is not Unicode's White_Space (it trims U+200B, for one).
  static func blank(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { blank(utf8: UnsafeRawBufferPointer($0)) }
  }
}
