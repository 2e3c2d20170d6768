import EventLog
import Foundation
import Testing

@testable import RestaurantBooking

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// The projection rows are stored in LMDB: their bytes are a contract (a change needs a new
/// projection version), so they are checked byte for byte against the documented layout.
@Suite("Projection row layout")
struct RowLayoutTests {
  @Test("a booking row: format, IDs, LEB128-prefixed strings, little-endian numbers, optional notes")
  func bookingBytes() throws {
    let longName = String(repeating: "é", count: 100)  // 200 UTF-8 bytes: a two-byte length
    for notes in [nil, "window seat"] as [String?] {
      let created = BookingCreated(
        bookingID: Self.id1, restaurantID: Self.id2, restaurantName: longName,
        date: Date(timeIntervalSince1970: 1_900_000_000.5), partySize: 4, customerID: testCustomerID,
        customerName: "Ada",
        notes: notes, createdAt: Date(timeIntervalSince1970: -1.25))
      // As the log stores it (the name and notes sealed), and as a build before sealing stored
      // it (in clear): the row holds the stored bytes either way, never the opened value.
      let sealed = try Self.stored(created)
      let clear = BookingCreated(
        bookingID: Self.id1, restaurantID: Self.id2, restaurantName: longName,
        date: Date(timeIntervalSince1970: 1_900_000_000.5), partySize: 4,
        customerName: Personal(storedBytes: Array("Ada".utf8)),
        notes: notes.map { Personal(storedBytes: Array($0.utf8)) },
        createdAt: Date(timeIntervalSince1970: -1.25))
      for event in [sealed, clear] {
        let row = BookingRow(event)
        let name = try #require(event.customerName.storedBytes)
        let storedNotes = try event.notes.map { try #require($0.storedBytes) }
        #expect(event.customerName.isSealed == (event == sealed))
        #expect(name.count < 128 && (storedNotes?.count ?? 0) < 128)  // one-byte lengths below
        var expected: [UInt8] = [2]
        expected += Self.bytes(of: Self.id1.uuid) + Self.bytes(of: Self.id2.uuid)
        expected += [0xC8, 0x01] + Array(longName.utf8)
        // Dates: the 8 bytes `BinaryEncoder` writes for a `Date` (format 4; before, the seconds
        // since 1970, which did not round-trip).
        expected += try BinaryEncoder().encode(Date(timeIntervalSince1970: 1_900_000_000.5))
        expected += Self.bytes(of: UInt64(4).littleEndian)
        expected += [UInt8(name.count)] + name
        expected += storedNotes.map { [1, UInt8($0.count)] + $0 } ?? [0]
        expected += Self.bytes(of: (-1.25 - 978_307_200 as Double).bitPattern.littleEndian)
        #expect(row.bytes == expected)
        #expect(try BookingRow(row.bytes) == row)
        // Format 1 (before sealing): the same fields, the name and notes as text; it still reads.
        if event == clear {
          let format1 = [1] + expected.dropFirst()
          #expect(try BookingRow(Array(format1)) == row)
        }
        // Opened with the customer's key, the row shows the booking's name and notes.
        let booking = Booking(row, keyring: SubjectKeyring(keys: [testCustomerID: Self.key], erased: []))
        #expect(booking.customerName == "Ada" && booking.notes == notes)
        #expect(booking.customerID == (event == sealed ? testCustomerID : nil))
        #expect(booking.erasedFields.isEmpty && booking.unavailableFields.isEmpty)
        // The index's fast path reads the same key from the stored bytes as its column makes.
        let index = BookingsProjection.byDate
        #expect(try row.bytes.withUnsafeBytes { try index.key(ofStoredRow: $0) } == index.key(of: row))
        #expect(
          TableKey(index.key(of: row), .uuid(row.id)).bytes == ProjectionKeys.date(row.date, id: row.id))
        for date in [row.date, row.createdAt, Date(timeIntervalSince1970: 0)] {
          #expect(TableKey.date(date).bytes.withUnsafeBytes { TableKey.date(sortable: $0) } == date)
        }
      }
    }
  }

  @Test("a booking stored in clear (before sealing), one sealed and one to seal show one payload layout")
  func oneLayoutHowEverTheNameIsStored() throws {
    // A clear value observed as a string made the process's layout of BookingCreated
    // indescribable once a sealed one was observed too (an upgrade recorded no layout of it).
    let created = BookingCreated(
      bookingID: Self.id1, restaurantID: Self.id2, restaurantName: "Pasta",
      date: Date(timeIntervalSince1970: 0), partySize: 2, customerID: testCustomerID, customerName: "Ada",
      notes: "x", createdAt: Date(timeIntervalSince1970: 1))
    let sealed = try Self.stored(created)
    var clear = created
    clear.customerName = Personal(storedBytes: Array("Ada".utf8))
    clear.notes = Personal(storedBytes: Array("x".utf8))
    let layouts = try [created, sealed, clear].map { try PayloadLayout(observing: $0) }
    #expect(layouts[0] == layouts[1] && layouts[1] == layouts[2])
    for payload in [try BinaryEncoder().encode(sealed), try BinaryEncoder().encode(clear)] {
      #expect(layouts.allSatisfy { $0.describes(payload) })
    }
  }

  @Test("name keys: the lower-cased name's first 400 UTF-8 bytes, 0, the ID; ASCII made byte by byte")
  // The restaurants' `by-name` entries of projection version 1, now made by `TableKey.caseInsensitive`.
  func nameKeys() {
    let names = [
      "", "Golden Pho 12", "ABCXYZ abcxyz @[`{", "Chez Zoë", "İstanbul Grill", "ẞ Straße", "ÀÉÎ",
      String(repeating: "Ab", count: 300), String(repeating: "é", count: 300) + "A",
    ]
    for name in names {
      var expected = Array(name.lowercased().utf8.prefix(400))
      expected.append(0)
      expected += Self.bytes(of: Self.id1.uuid)
      #expect(ProjectionKeys.name(name, id: Self.id1) == expected, "\(name.prefix(20))")
    }
  }

  @Test("a deleted booking's payload is its ID's 16 bytes, which the projection uses as its key")
  func deletedPayload() throws {
    #expect(try BinaryEncoder().encode(BookingDeleted(bookingID: Self.id1)) == Self.bytes(of: Self.id1.uuid))
  }

  @Test("a damaged row's error names the kind of row and where it broke")
  func damagedRowsNamed() throws {
    let booking = BookingRow(
      BookingCreated(
        bookingID: Self.id1, restaurantID: Self.id2, restaurantName: "Pasta",
        date: Date(timeIntervalSince1970: 0),
        partySize: 2, customerID: testCustomerID, customerName: "Ada", notes: nil,
        createdAt: Date(timeIntervalSince1970: 0)))
    #expect(throws: RowError.unreadable(row: "booking", reason: "truncated at byte 17")) {
      _ = try BookingRow(Array(booking.bytes.prefix(20)))
    }
    var badTag = booking.bytes
    badTag[badTag.count - 9] = 7  // the notes' optional tag
    #expect(throws: RowError.unreadable(row: "booking", reason: "bad optional tag 7")) {
      _ = try BookingRow(badTag)
    }
    let restaurant = RestaurantRow(id: Self.id1, name: "Chez Zoë", cuisine: "")
    #expect(throws: RowError.unreadable(row: "restaurant", reason: "truncated at byte 18")) {
      _ = try RestaurantRow(Array(restaurant.bytes.prefix(18)))
    }
  }

  @Test("a restaurant row: format, ID, name, cuisine")
  func restaurantBytes() throws {
    let row = RestaurantRow(id: Self.id1, name: "Chez Zoë", cuisine: "")
    let expected: [UInt8] = [1] + Self.bytes(of: Self.id1.uuid) + [9] + Array("Chez Zoë".utf8) + [0]
    #expect(row.bytes == expected)
    #expect(try RestaurantRow(row.bytes) == row)
  }

  @Test(
    "string sizes match what is written, across LEB128 length boundaries",
    arguments: [0, 1, 127, 128, 16_383, 16_384])
  func stringSizes(length: Int) throws {
    let text = String(repeating: "a", count: length)
    let row = try RowWriter.withRow(
      {
        $0.byte(7)
        $0.string(text)
      }, { Array($0) })
    #expect(row.count == 1 + RowWriter.size(of: text))
    let read = try row.withUnsafeBytes { buffer throws(RowError) in
      var reader = RowReader(buffer, row: "test")
      try reader.skip(1)
      return try reader.string()
    }
    #expect(read == text)
    #expect(RowWriter.size(of: text) == length + (length < 128 ? 1 : length < 16_384 ? 2 : 3))
  }

  @Test("a booking row transcoded from a payload equals the row of the decoded event")
  func transcoding() throws {
    let names = ["", "Ada", "Chez Zoë", String(repeating: "ß", count: 80), "日本料理 🍣"]
    var index = 0
    for restaurantName in names {
      for customerName in names.reversed() {
        for notes in [nil, "", "window seat", names[index % names.count]] as [String?] {
          index += 1
          let created = BookingCreated(
            bookingID: UUID(), restaurantID: UUID(), restaurantName: restaurantName,
            date: Date(timeIntervalSince1970: 1_900_000_000 + Double(index) * 0.1), partySize: index - 40,
            customerID: testCustomerID, customerName: customerName, notes: notes,
            createdAt: Date(timeIntervalSinceReferenceDate: -Double(index)))
          // Payloads as the log stores them: sealed, and (from before sealing) in clear.
          let sealed = try NewEvent(created).sealingPendingValues(with: { _ in Self.key }).payload
          var clear = created
          clear.customerName = Personal(storedBytes: Array(customerName.utf8))
          clear.notes = notes.map { Personal(storedBytes: Array($0.utf8)) }
          for payload in [sealed, try BinaryEncoder().encode(clear)] {
            let transcoded = try payload.withUnsafeBytes { try BookingRow.transcoding($0) }
            let row = BookingRow(try BinaryDecoder().decode(BookingCreated.self, from: payload))
            #expect(transcoded == row.bytes)
            #expect(try BookingRow(transcoded) == row)
          }
        }
      }
    }
  }

  @Test("a damaged payload fails transcoding exactly as it fails decoding")
  func transcodingErrors() throws {
    let created = BookingCreated(
      bookingID: Self.id1, restaurantID: Self.id2, restaurantName: "Pasta",
      date: Date(timeIntervalSince1970: 0),
      partySize: 2, customerID: testCustomerID, customerName: "Ada", notes: "x",
      createdAt: Date(timeIntervalSince1970: 1))
    let payload = try NewEvent(created).sealingPendingValues(with: { _ in Self.key }).payload
    var damaged: [[UInt8]] = (0..<payload.count).map { Array(payload.prefix($0)) }  // every truncation
    damaged.append(payload + [0])  // a trailing byte
    var badUTF8 = payload
    badUTF8[33] = 0xFF  // the first byte of the restaurant name
    damaged.append(badUTF8)
    for bytes in damaged {
      let decodeError =
        "\(String(describing: Self.error { _ = try BinaryDecoder().decode(BookingCreated.self, from: bytes) }))"
      let fastError =
        "\(String(describing: Self.error { _ = try bytes.withUnsafeBytes { var reader = BinaryReader($0); _ = try BookingCreated(binary: &reader); try reader.finish() } }))"
      let transcodeError =
        "\(String(describing: Self.error { _ = try bytes.withUnsafeBytes { try BookingRow.transcoding($0) } }))"
      #expect(decodeError != "nil", "\(bytes.count) bytes decoded")
      #expect(transcodeError == fastError, "\(bytes.count) bytes")
    }
  }

  /// The key this file's personal values are sealed with.
  static let key = [UInt8](repeating: 3, count: 32)

  /// `created` as the log stores it: its personal values sealed (with ``key``), read back.
  static func stored(_ created: BookingCreated) throws -> BookingCreated {
    let payload = try NewEvent(created).sealingPendingValues(with: { _ in key }).payload
    return try BinaryDecoder().decode(BookingCreated.self, from: payload)
  }

  static func error(_ body: () throws -> Void) -> (any Error)? {
    do {
      try body()
      return nil
    } catch {
      return error
    }
  }

  static let id1 = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF") ?? UUID()
  static let id2 = UUID(uuidString: "FFEEDDCC-BBAA-9988-7766-554433221100") ?? UUID()

  static func bytes<T>(of value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
}
