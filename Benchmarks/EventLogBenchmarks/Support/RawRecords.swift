import Checksum
import Foundation
import RestaurantBooking
import Sodium

/// The baselines' own minimal layout of events and read-model rows (no self-description): what
/// the `lmdb-raw`, `lmdb-append` and `sqlite` systems store. An event carries its provenance (the
/// origin device and its sequence there) and its value in a hash chain, computed at append as
/// eventlog computes its records' (BLAKE2b-256 of the previous record's value, zero before the
/// first, then the record's bytes before the value: ``RawChainValue``). An LMDB event record ends
/// in the CRC-32C of the bytes before it, which every read verifies, as eventlog's records do
/// (SQLite stores the fields, the payload and the chain value in columns and checks nothing).
/// Replay does not verify the chain, as eventlog's replay does not (its `verify` does).
///
/// ```
/// event record: type u8 | sequence u64 | event ID 16 | stream 16 | version u64 | recorded-at i64
///               | origin device 16 | origin sequence u64 | payload
///               | chain value 32 (BLAKE2b-256 of the previous record's value, then every byte before it)
///               | CRC-32C u32 (of every byte before it)
/// booking payload / row: id 16 | restaurant 16 | restaurant name str | date f64 | party i64
///                        | customer sealed | notes opt-sealed | created-at f64   (~360 bytes)
///   (sealed: a u16 length, then a value of `RawSealing`'s format, 75 bytes more than the text
///   with its field name; the payload's and the row's are the same bytes, sealed once)
/// restaurant row: id 16 | name str | cuisine str
/// ```
enum RawRecords {
  static let eventHeaderSize = 1 + 8 + 16 + 16 + 8 + 8 + 16 + 8
  static let chainValueSize = RawChainValue.length
  static let checksumSize = 4

  /// The origin device of every event a baseline appends: its own, fixed (eventlog makes one per
  /// environment at its first writable open and stores it with each event it appends).
  static let device = UUID(
    uuid: (0x0B, 0xE4, 0xC4, 0x11, 0x5E, 0x7A, 0x4B, 0x1D, 0x9A, 0x3F, 0x6C, 0x20, 0x8E, 0x51, 0xD7, 0x02))

  /// A record whose checksum does not match its bytes, or too short to hold one.
  struct CorruptRecord: Error, CustomStringConvertible {
    var description: String
  }

  /// Writes an event's payload; a booking's name and notes as `sealed` (``RawKeyring/seal(_:eventID:store:)``).
  static func writePayload(_ event: MixedEvent, sealed: SealedBookingFields?, into writer: inout ByteWriter) {
    switch event {
    case .bookingCreated(let booking):
      guard let sealed else {
        preconditionFailure("a booking's personal fields are sealed before it is written")
      }
      writeBooking(booking, sealed: sealed, into: &writer)
    case .bookingDeleted(let id):
      writer.write(id)
    case .restaurantAdded(let row), .restaurantRemoved(let row):
      writeRestaurant(row, into: &writer)
    case .restaurantUpdated(let id, let old, let new):
      writer.write(id)
      writer.write(old.name == new.name ? nil : old.name)
      writer.write(old.name == new.name ? nil : new.name)
      writer.write(old.cuisine == new.cuisine ? nil : old.cuisine)
      writer.write(old.cuisine == new.cuisine ? nil : new.cuisine)
    case .restaurantsRefreshed(let added, let updated, let removed, let unchanged):
      writer.write(Int64(added))
      writer.write(Int64(updated))
      writer.write(Int64(removed))
      writer.write(Int64(unchanged))
    }
  }

  /// Writes an event's fields and payload: the bytes its chain value is computed over. The
  /// origin is `origin` (an event pulled from another device: that device and its sequence
  /// there), or the baselines' ``device`` and the event's sequence in this log. A booking's name
  /// and notes are `sealed`.
  static func writeEventBody(
    _ record: MixedEventRecord, sealed: SealedBookingFields?, sequence: UInt64, recordedAt: Int64,
    origin: (device: UUID, sequence: UInt64)? = nil, into writer: inout ByteWriter
  ) {
    writer.write(record.event.typeCode)
    writer.write(sequence)
    writer.write(record.eventID)
    writer.write(record.stream)
    writer.write(record.version)
    writer.write(recordedAt)
    writer.write(origin?.device ?? device)
    writer.write(origin?.sequence ?? sequence)
    writePayload(record.event, sealed: sealed, into: &writer)
  }

  /// Writes a whole LMDB event record (the writer must be empty): its body, its chain value
  /// after `chain`, which becomes the record's, and its checksum last.
  static func writeEvent(
    _ record: MixedEventRecord, sealed: SealedBookingFields?, sequence: UInt64, recordedAt: Int64,
    chain: inout RawChainValue, into writer: inout ByteWriter
  ) {
    precondition(writer.bytes.isEmpty, "an event record starts an empty writer")
    writeEventBody(record, sealed: sealed, sequence: sequence, recordedAt: recordedAt, into: &writer)
    let previous = chain
    chain = writer.bytes.withUnsafeBytes { previous.next(over: $0) }
    chain.withUnsafeBytes { writer.write(bytes: $0) }
    writer.write(writer.bytes.withUnsafeBytes { CRC32C.checksum($0) })
  }

  /// The chain value stored in an LMDB event record (its checksum not verified).
  /// - Throws: ``CorruptRecord`` when the record is too short to hold one.
  static func storedChain(of record: UnsafeRawBufferPointer) throws(CorruptRecord) -> RawChainValue {
    guard record.count >= eventHeaderSize + chainValueSize + checksumSize else {
      throw CorruptRecord(description: "event record of \(record.count) bytes is too short")
    }
    return RawChainValue(
      loadingFrom: UnsafeRawBufferPointer(rebasing: record[(record.count - checksumSize - chainValueSize)...])
    )
  }

  /// The type code and payload of an LMDB event record, after verifying its checksum (not its
  /// chain value: replay does not, as eventlog's does not).
  /// - Throws: ``CorruptRecord`` when the record is short or its checksum does not match.
  @inline(__always)
  static func verifiedEvent(
    _ record: UnsafeRawBufferPointer
  ) throws(CorruptRecord) -> (type: UInt8, payload: UnsafeRawBufferPointer) {
    guard record.count >= eventHeaderSize + chainValueSize + checksumSize else {
      throw CorruptRecord(description: "event record of \(record.count) bytes is too short")
    }
    let body = record.count - checksumSize
    let stored = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: body, as: UInt32.self))
    guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[0..<body])) == stored else {
      let sequence = UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
      throw CorruptRecord(description: "event record \(sequence): checksum mismatch")
    }
    return (record[0], UnsafeRawBufferPointer(rebasing: record[eventHeaderSize..<(body - chainValueSize)]))
  }

  /// Writes a booking's payload or row, its name and notes as `sealed`.
  static func writeBooking(_ booking: Booking, sealed: SealedBookingFields, into writer: inout ByteWriter) {
    writer.write(booking.id)
    writer.write(booking.restaurantID)
    writer.write(booking.restaurantName)
    writer.write(booking.date)
    writer.write(Int64(booking.partySize))
    writer.write(sized: sealed.customerName)
    writer.write(sized: sealed.notes)
    writer.write(booking.createdAt)
  }

  /// Reads a booking's payload or row with its name and notes sealed (replay's copy).
  static func readBookingRow(_ reader: inout ByteReader) throws -> RawBookingRow {
    RawBookingRow(
      id: try reader.uuid(), restaurantID: try reader.uuid(), restaurantName: try reader.string(),
      date: try reader.date(), partySize: Int(try reader.read(Int64.self)),
      customerName: Array(try reader.sized()), notes: try reader.optionalSized().map { Array($0) },
      createdAt: try reader.date())
  }

  /// Reads a booking's row as a read shows it: its name and notes opened with `keyring` where
  /// they lie.
  /// - Throws: ``ByteReader/Truncated``, or ``RawSealing/Unopenable`` when a value does not open.
  static func readBooking(_ reader: inout ByteReader, keyring: RawKeyring) throws -> Booking {
    let (id, restaurantID, restaurantName) = (try reader.uuid(), try reader.uuid(), try reader.string())
    let (date, partySize) = (try reader.date(), Int(try reader.read(Int64.self)))
    let name = try reader.sized()
    return Booking(
      id: id, restaurantID: restaurantID, restaurantName: restaurantName, date: date, partySize: partySize,
      customerID: try RawSealing.subject(of: name), customerName: try keyring.open(name),
      notes: try reader.optionalSized().map { try keyring.open($0) }, createdAt: try reader.date())
  }

  static func writeRestaurant(_ row: RemoteRestaurant, into writer: inout ByteWriter) {
    writer.write(row.id)
    writer.write(row.name)
    writer.write(row.cuisine)
  }

  static func readRestaurant(_ reader: inout ByteReader) throws -> Restaurant {
    Restaurant(
      id: try reader.uuid(), name: try reader.string(), cuisine: Cuisine(rawValue: try reader.string()))
  }

  /// The by-date key of a booking: the date's sortable bits (big-endian), then the ID.
  static func dateKey(_ date: Date, id: UUID) -> (UInt64, uuid_t) {
    let bits = date.timeIntervalSince1970.bitPattern
    let sortable = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
    return (sortable.bigEndian, id.uuid)
  }

  /// The by-name key of a restaurant: the lower-cased name, 0, then the ID.
  static func nameKey(_ name: String, id: UUID) -> [UInt8] {
    var key = Array(name.lowercased().utf8.prefix(400))
    key.append(0)
    withUnsafeBytes(of: id.uuid) { key.append(contentsOf: $0) }
    return key
  }
}

/// A record's value in a baseline's hash chain: 32 bytes inline, as eventlog's `ChainValue` holds
/// them, and the step to the next record's value, computed as eventlog computes it. (`ChainValue`'s
/// initializer from bytes is generic and, called from this module, runs unspecialized, which
/// would cost a baseline more than the hash itself.)
struct RawChainValue {
  /// The length of a value: 32 bytes.
  static let length = BLAKE2b256.length
  /// The value "before the first record": 32 zero bytes.
  static let zero = RawChainValue()

  private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

  private init() {}

  /// The value of the first 32 bytes of `buffer`.
  init(loadingFrom buffer: UnsafeRawBufferPointer) {
    precondition(buffer.count >= Self.length, "a chain value is 32 bytes")
    Swift.withUnsafeMutableBytes(of: &words) {
      $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<Self.length]))
    }
  }

  /// The value of the record whose bytes before its value are `body`, after this one:
  /// BLAKE2b-256 of this value followed by `body`.
  @inline(__always)
  func next(over body: UnsafeRawBufferPointer) -> RawChainValue {
    var next = RawChainValue()
    Swift.withUnsafeBytes(of: words) { prefix in
      Swift.withUnsafeMutableBytes(of: &next.words) { BLAKE2b256.hash(prefix: prefix, body: body, into: $0) }
    }
    return next
  }

  /// Calls `body` with the value's 32 bytes.
  @inline(__always)
  func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try Swift.withUnsafeBytes(of: words, body)
  }
}

/// The read models the raw baselines rebuild in `replay`: restaurants by ID and in name order,
/// bookings by ID and in date order, as eventlog's projections hold them. The bookings keep their
/// name and notes sealed, copied from the events unopened (as eventlog's replay copies them into
/// its rows); the date-order listing opens them with ``keyring`` (the store's keys, loaded by the
/// replay), as eventlog's replay lists its bookings.
///
/// The fold keeps dictionaries by ID (``apply(type:payload:)``); ``buildOrders()`` then sorts
/// the final state once into name order and date order, with the same keys as eventlog's
/// `by-name` and `by-date` tables. The state is small (a few thousand rows however long the log),
/// so this is the least work that gives the four views; eventlog's projections instead keep the
/// ordered tables up to date at every event, since the same `apply` runs against LMDB on the live
/// path.
struct RawReadModels {
  var restaurants: [UUID: Restaurant] = [:]
  var bookings: [UUID: RawBookingRow] = [:]
  /// The data keys that open the bookings' names and notes.
  var keyring = RawKeyring()
  /// Every restaurant by lower-cased name, then ID (after ``buildOrders()``).
  var restaurantsByName: [Restaurant] = []
  /// Every booking by date, then ID, opened (after ``buildOrders()``).
  var bookingsByDate: [Booking] = []

  struct UnknownType: Error, CustomStringConvertible {
    var code: UInt8
    var description: String { "unknown event type code \(code)" }
  }

  /// Folds one event given as its type code and payload bytes.
  mutating func apply(type: UInt8, payload: UnsafeRawBufferPointer) throws {
    var reader = ByteReader(payload)
    switch type {
    case 1:
      let booking = try RawRecords.readBookingRow(&reader)
      bookings[booking.id] = booking
    case 2:
      bookings[try reader.uuid()] = nil
    case 3:
      let restaurant = try RawRecords.readRestaurant(&reader)
      restaurants[restaurant.id] = restaurant
    case 4:
      let id = try reader.uuid()
      _ = try reader.optionalString()
      let name = try reader.optionalString()
      _ = try reader.optionalString()
      let cuisine = try reader.optionalString()
      if let name { restaurants[id]?.name = name }
      if let cuisine { restaurants[id]?.cuisine = Cuisine(rawValue: cuisine) }
    case 5:
      restaurants[try reader.uuid()] = nil
    case 6:
      break
    default:
      throw UnknownType(code: type)
    }
  }

  /// Folds one whole LMDB event record (header + payload + checksum), after verifying its checksum.
  mutating func apply(record: UnsafeRawBufferPointer) throws {
    let (type, payload) = try RawRecords.verifiedEvent(record)
    try apply(type: type, payload: payload)
  }

  /// Sorts the folded state into name order and date order, the bookings opened (part of the
  /// measured replay).
  /// - Throws: ``RawSealing/Unopenable`` when a booking's name or notes do not open.
  mutating func buildOrders() throws {
    restaurantsByName = restaurants.values.map { (key: RawRecords.nameKey($0.name, id: $0.id), row: $0) }
      .sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.row)
    bookingsByDate = try bookings.values.sorted { a, b in
      let (x, y) = (RawRecords.dateKey(a.date, id: a.id), RawRecords.dateKey(b.date, id: b.id))
      if x.0 != y.0 { return UInt64(bigEndian: x.0) < UInt64(bigEndian: y.0) }
      return ReadModelFingerprint.precedes(a.id, b.id)
    }.map { try $0.opened(with: keyring) }
  }

  /// The outcome: the counts and the fingerprint of the four views (after ``buildOrders()``),
  /// each booking looked up by ID opened.
  /// - Throws: ``RawSealing/Unopenable`` when a booking's name or notes do not open.
  func check() throws -> String {
    try ReadModelFingerprint.outcome(
      restaurantsByName: restaurantsByName, restaurantCount: restaurants.count,
      restaurant: { restaurants[$0] },
      bookingsByDate: bookingsByDate, bookingCount: bookings.count,
      booking: { try bookings[$0]?.opened(with: keyring) })
  }
}
