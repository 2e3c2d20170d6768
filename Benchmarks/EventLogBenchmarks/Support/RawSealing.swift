import Foundation
import RestaurantBooking
import Sodium

/// What the baselines (`lmdb-raw`, `lmdb-append`, `sqlite`) do with a booking's two personal
/// fields, its customer's name and notes, so that their appends and reads do eventlog's work for
/// them (`Docs/Erasure.md`): each value sealed at append with XChaCha20-Poly1305 under its
/// customer's data key, the same sealed bytes stored in the event and in the bookings row, and
/// opened wherever a booking is shown.
///
/// A sealed value, in the size and order of eventlog's (`SealedValue`, `Docs/OnDiskFormat.md`,
/// "Sealed values"):
///
/// ```
/// offset size field
///  0      1   0xFF
///  1      1   version, 1
///  2     16   data subject (the customer's ID)
/// 18     16   the event's ID
/// 34      1   field name length F
/// 35      F   field name, UTF-8 (`customerName` or `notes`, eventlog's coding paths)
/// 35+F   24   nonce (random)
/// 59+F  n+16  the text's UTF-8 bytes, XChaCha20-Poly1305 ciphertext and tag
/// ```
///
/// Bytes 0 to 35+F are the associated data: a value opens only as the field of the event and
/// subject it was sealed for, as eventlog's.
///
/// **Equal to eventlog**: one random 32-byte key per data subject (``RawKeyring``), made when the
/// subject is first sealed for and stored in the baseline's store apart from the events (an LMDB
/// database, a SQLite table) in the same transaction, kept in memory for the appends; one
/// XChaCha20-Poly1305 seal per value (random nonce, sealed in place), the header as associated
/// data; the sealed bytes copied unopened from the event into the row; a read loads the keys and
/// opens every value it shows. **What differs**: the plaintext is the text's UTF-8 bytes, where
/// eventlog's is their `BinaryEncoder` form (a varint length first: one byte more for these
/// texts); the record lists no data subjects (eventlog's count byte and 16 bytes a subject); a
/// key is stored without its creation time, and there is no erasure fence to check at append;
/// a value that does not open fails the read, where eventlog shows the field as unavailable.
enum RawSealing {
  /// The two personal fields of a booking, by eventlog's field names.
  enum Field: String {
    case customerName
    case notes
  }

  static let marker: UInt8 = 0xFF
  static let version: UInt8 = 1
  static let fixedHeaderSize = 35

  /// A sealed value that does not open: too short, another format, no key for its subject, or
  /// altered bytes.
  struct Unopenable: Error, CustomStringConvertible {
    var description: String
  }

  /// `text` sealed under `key` as `field` of event `eventID`, whose data subject is `subject`.
  static func seal(_ text: String, field: Field, subject: UUID, eventID: UUID, key: [UInt8]) -> [UInt8] {
    let name = field.rawValue.utf8
    let headerSize = fixedHeaderSize + name.count
    var writer = ByteWriter(capacity: headerSize + XChaCha20Poly1305.nonceLength + 128)
    writer.write(marker)
    writer.write(version)
    writer.write(subject)
    writer.write(eventID)
    writer.write(UInt8(name.count))
    writer.write(contentsOf: name)
    writer.write(zeros: XChaCha20Poly1305.nonceLength)
    writer.write(contentsOf: text.utf8)
    writer.write(zeros: XChaCha20Poly1305.tagLength)
    var sealed = writer.bytes
    sealed.withUnsafeMutableBytes { bytes in
      // The nonce, the text and the tag's room after the header: sealed where they lie.
      XChaCha20Poly1305.sealInPlace(
        UnsafeMutableRawBufferPointer(rebasing: bytes[headerSize...]), key: key,
        associatedData: UnsafeRawBufferPointer(rebasing: bytes[..<headerSize]))
    }
    return sealed
  }

  /// The data subject a sealed value names.
  /// - Throws: ``Unopenable`` when `sealed` is not a whole header of this format.
  static func subject(of sealed: UnsafeRawBufferPointer) throws(Unopenable) -> UUID {
    guard sealed.count >= fixedHeaderSize, sealed[0] == marker, sealed[1] == version else {
      throw Unopenable(description: "not a sealed value (\(sealed.count) bytes)")
    }
    return UUID(uuid: sealed.loadUnaligned(fromByteOffset: 2, as: uuid_t.self))
  }

  /// The text of a sealed value, opened with its subject's key from `keys`, read where it lies.
  /// - Throws: ``Unopenable`` when it is not a sealed value, its subject has no key in `keys`, or
  ///   the key, the header or a byte is not what sealed it.
  static func open(_ sealed: UnsafeRawBufferPointer, keys: [UUID: [UInt8]]) throws(Unopenable) -> String {
    let subject = try subject(of: sealed)
    let headerSize = fixedHeaderSize + Int(sealed[34])
    guard sealed.count >= headerSize + XChaCha20Poly1305.nonceLength + XChaCha20Poly1305.tagLength else {
      throw Unopenable(description: "sealed value of \(sealed.count) bytes is too short")
    }
    guard let key = keys[subject] else { throw Unopenable(description: "no key for subject \(subject)") }
    guard
      let text = XChaCha20Poly1305.open(
        UnsafeRawBufferPointer(rebasing: sealed[headerSize...]), key: key,
        associatedData: UnsafeRawBufferPointer(rebasing: sealed[..<headerSize]))
    else { throw Unopenable(description: "a sealed value of subject \(subject) does not open") }
    return String(decoding: text, as: UTF8.self)
  }
}

/// A booking's name and notes as a baseline stores them: sealed (``RawSealing``).
struct SealedBookingFields {
  var customerName: [UInt8]
  var notes: [UInt8]?
}

/// A baseline's data keys: one random 32-byte key per data subject (a booking's customer), made
/// the first time a value of the subject is sealed and kept in memory; the store keeps a copy
/// apart from the events (``RawSealing``). A read loads them from the store into one of these.
struct RawKeyring {
  /// Every key, by subject.
  private(set) var keys: [UUID: [UInt8]]

  init(keys: [UUID: [UInt8]] = [:]) { self.keys = keys }

  /// The subject of a fixture booking: its customer, as eventlog's append names it.
  static func subject(of booking: Booking) -> UUID {
    booking.customerID ?? Fixtures.customerID(of: booking.customerName ?? "")
  }

  /// The sealed personal fields of a booking event (`nil` for any other event), sealed in event
  /// `eventID` under the customer's key, made first (and handed to `store`, which writes it in
  /// the same transaction as the event) when the customer is new.
  mutating func seal(
    _ event: MixedEvent, eventID: UUID, store: (UUID, [UInt8]) throws -> Void
  ) rethrows -> SealedBookingFields? {
    guard case .bookingCreated(let booking) = event else { return nil }
    let subject = Self.subject(of: booking)
    let key: [UInt8]
    if let known = keys[subject] {
      key = known
    } else {
      key = XChaCha20Poly1305.generateKey()
      try store(subject, key)
      keys[subject] = key
    }
    return SealedBookingFields(
      customerName: RawSealing.seal(
        booking.customerName ?? "", field: .customerName, subject: subject, eventID: eventID, key: key),
      notes: booking.notes.map {
        RawSealing.seal($0, field: .notes, subject: subject, eventID: eventID, key: key)
      })
  }

  /// The text of a sealed value (``RawSealing/open(_:keys:)``).
  func open(_ sealed: UnsafeRawBufferPointer) throws(RawSealing.Unopenable) -> String {
    try RawSealing.open(sealed, keys: keys)
  }
}

/// A bookings row as a baseline's read model holds it: the name and notes sealed, copied from the
/// event unopened; ``opened(with:)`` is the booking a read shows.
struct RawBookingRow {
  var id: UUID
  var restaurantID: UUID
  var restaurantName: String
  var date: Date
  var partySize: Int
  var customerName: [UInt8]
  var notes: [UInt8]?
  var createdAt: Date

  /// The booking, its name and notes opened with `keyring` (its customer from the sealed name).
  /// - Throws: ``RawSealing/Unopenable`` when a value does not open.
  func opened(with keyring: RawKeyring) throws -> Booking {
    try customerName.withUnsafeBytes { name in
      Booking(
        id: id, restaurantID: restaurantID, restaurantName: restaurantName, date: date, partySize: partySize,
        customerID: try RawSealing.subject(of: name), customerName: try keyring.open(name),
        notes: try notes?.withUnsafeBytes { try keyring.open($0) }, createdAt: createdAt)
    }
  }
}
