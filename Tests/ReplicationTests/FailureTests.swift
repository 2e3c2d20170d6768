import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// Failures: clear errors, nothing lost, nothing marked that the server did not take.
@Suite("Failures", .needsPostgres)
struct FailureTests {
  @Test func aWrongPasswordFailsAtOnceAndMarksNothing() async throws {
    let fixture = try await ServerFixture()
    var customer = try fixture.customer()
    let secret = "wrong-\(UUID().uuidString.prefix(6))"
    customer.url = fixture.server.url(user: customer.role, password: secret, database: fixture.database)
    let phone = try Device(customer)
    _ = try await phone.book(try await phone.addRestaurant())
    let started = ContinuousClock.now
    let error = await #expect(throws: PostgresError.self) { try await phone.push() }
    // Not retried for the budget (60 s): it fails as soon as the server says no.
    #expect(ContinuousClock.now - started < .seconds(20), "a wrong password is not retried")
    #expect(error?.description.contains("password authentication failed") == true)
    #expect(error?.description.contains(secret) == false)
    #expect(try phone.replicator.status().pending == 1)
    #expect(try phone.replicator.status().pushedThrough == 0)
  }

  @Test func aServerThatIsDownIsRetriedForTheBudgetThenGivenUp() async throws {
    let server = try PostgresTestServer()
    defer { server.destroy() }
    let (database, owner, password) = try server.createDatabase()
    let setup = try PostgresTransport(url: server.url(user: owner, password: password, database: database))
    _ = try await setup.initializeSchema()
    setup.close()
    try server.createRole("carol", password: "carolpw")
    let customer = Customer(
      role: "carol", password: "carolpw",
      url: server.url(user: "carol", password: "carolpw", database: database))
    var options = Device.quickOptions
    options.retryFor = .seconds(1)
    let phone = try Device(customer, options: options)
    _ = try await phone.book(try await phone.addRestaurant())
    try server.stop()
    let error = await #expect(throws: ReplicationError.self) { try await phone.push() }
    guard case .gaveUp(_, let last) = error else {
      Issue.record("expected gaveUp, got \(String(describing: error))")
      return
    }
    #expect(last.contains("cannot connect"))
    #expect(try phone.replicator.status().pending == 1)
    // Back up: the same push goes through, once (with the usual budget: one second is short
    // for a server that has just started, on a loaded machine).
    try server.start()
    let patient = Replicator(store: phone.store, transport: phone.transport, options: Device.quickOptions)
    #expect(try await patient.push().pushed == 1)
  }

  /// Finding 3 of issue 21: a server restored from an older backup. The tablet had pulled
  /// both events; the server lost the second and a phone pushes a new event at its position. The
  /// tablet's pull says so (the server holds another event at its cursor), records it, and keeps
  /// refusing until a resync; the phone pushes again from the server's lower mark.
  @Test func aServerRestoredFromAnOlderBackupIsReportedUntilAResyncAndLosesNothing() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let tablet = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let first = try await phone.book(restaurant)
    let second = try await phone.book(restaurant)
    _ = try await phone.push()
    _ = try await tablet.pull()
    // The server is restored from a backup taken when it held the first event only (the phone's
    // mark as it was then).
    try fixture.superuser(
      """
      ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
      DELETE FROM eventlog.events WHERE position = 2;
      ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
      """)
    try fixture.superuser(
      """
      UPDATE eventlog.device_marks d SET pushed_through = e.origin_sequence, last_sequence = e.origin_sequence,
        last_id = e.id FROM eventlog.events e WHERE e.position = 1 AND e.owner = d.owner
      """)
    // A third device pushes meanwhile: its event takes position 2 again.
    let laptop = try Device(customer)
    try await laptop.addRestaurant(id: restaurant)
    _ = try await laptop.pull()
    let third = try await laptop.book(restaurant, name: "Laptop")
    #expect(try await laptop.push().pushed == 1)

    let error = await #expect(throws: ReplicationError.self) { try await tablet.pull() }
    #expect(
      error?.description.contains("no longer holds what this device replicated") == true,
      "\(String(describing: error))")
    #expect(try tablet.replicator.status().diverged != nil)
    // It keeps saying so: nothing is pulled or pushed until a resync.
    let again = await #expect(throws: ReplicationError.self) { try await tablet.pull() }
    #expect(again?.description.contains("--resync") == true)
    await #expect(throws: ReplicationError.self) { try await tablet.push() }

    // The phone's server mark is below its own: it pushes the lost event again.
    let phonePush = try await phone.push()
    #expect(phonePush.pushed == 1 && phonePush.alreadyStored == 0, "\(phonePush)")
    try await tablet.replicator.resync()
    _ = try await tablet.push()
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 1, "\(pulled)")
    let everyone = Set([first.id, second.id, third.id])
    for device in [phone, laptop, tablet] {
      _ = try await device.pull()
      #expect(Set(try await device.allBookings().map(\.id)) == everyone)
      try device.expectHealthy()
    }
    #expect(try tablet.replicator.status().diverged == nil)
  }

  /// Finding 6 of issue 28, without the power-cut harness: a phone restored from an older copy
  /// of its environment (a backup) while the server's mark for it covers a pulled event past its
  /// last own event. The restored log numbers its next booking at a sequence that mark covers; the
  /// booking must be pushed (it was skipped for good, with nothing pending, when the device trusted
  /// the server's mark past the event the mark names).
  @Test func aDeviceRestoredFromAnOlderCopyPushesWhatItMakesNext() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let tablet = try Device(customer)
    let restaurant = try await tablet.addRestaurant()
    let tablets = try await tablet.book(restaurant, name: "Tablet")
    _ = try await tablet.push()
    let directory = TemporaryDirectory("restored-phone")
    let dataFile = URL(fileURLWithPath: directory.environment()).appendingPathComponent("data.mdb")
    var phone = try Device(customer, at: directory)
    try await phone.addRestaurant(id: restaurant)
    let first = try await phone.book(restaurant, name: "Phone 1")
    #expect(try await phone.push().pushed == 1)
    let second = try await phone.book(restaurant, name: "Phone 2")
    // The backup: the environment as it is now, closed.
    await phone.store.close()
    let backup = try Data(contentsOf: dataFile)
    phone = try Device(customer, at: directory)
    // Then the phone pulls the tablet's booking, after its own, and pushes: the server's mark
    // covers the pulled event, past the last event it names.
    _ = try await phone.pull()
    #expect(try await phone.push().pushed == 1)
    let mark = try await phone.transport.pushedMark(device: try await phone.replicator.deviceCredentials())
    let named = try #require(mark.lastSequence)
    #expect(mark.pushedThrough > named, "\(mark)")

    // The phone is restored from the backup, and books.
    await phone.store.close()
    try? FileManager.default.removeItem(atPath: directory.environment() + "/lock.mdb")
    try backup.write(to: dataFile)
    phone = try Device(customer, at: directory)
    let third = try await phone.book(restaurant, name: "After the restore")
    let head = try phone.store.head()
    #expect(head > named && head <= mark.pushedThrough, "the booking at \(head), the server's mark \(mark)")
    let summary = try await phone.push()
    #expect(summary.pushed == 1 && summary.pending == 0, "\(summary)")
    _ = try await phone.pull()
    _ = try await tablet.pull()
    let everyone = Set([tablets.id, first.id, second.id, third.id])
    for device in [phone, tablet] {
      #expect(Set(try await device.allBookings().map(\.id)) == everyone)
      #expect(try device.replicator.status().pending == 0)
      try device.expectHealthy()
    }
    #expect(
      Set(try serverEventIDs(fixture, owner: customer.role)).isSuperset(of: try phone.outgoing().map(\.id)))
  }

  @Test func aPermanentRejectionIsRecordedAndTheEventsAfterItStillGo() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let bob = try fixture.customer("bob")
    // Alice's booking reaches the server; Bob's device then holds the same event (a backup of
    // Alice's log imported by mistake) between two bookings of his own.
    let alicesPhone = try Device(alice)
    let restaurant = try await alicesPhone.addRestaurant()
    _ = try await alicesPhone.book(restaurant, name: "Alice")
    _ = try await alicesPhone.push()
    let alicesEvent = try #require(try alicesPhone.store.events(from: 1).last)

    let bobsPhone = try Device(bob)
    let bobsRestaurant = try await bobsPhone.addRestaurant()
    _ = try await bobsPhone.book(bobsRestaurant, name: "Bob 1")
    try await bobsPhone.store.ingest([
      EventStore.IngestedEvent(
        stream: alicesEvent.stream,
        event: NewEvent(
          id: alicesEvent.id, type: alicesEvent.type, schemaVersion: alicesEvent.schemaVersion,
          payload: alicesEvent.payload, metadata: alicesEvent.metadata, recordedAt: alicesEvent.recordedAt))
    ])
    _ = try await bobsPhone.book(bobsRestaurant, name: "Bob 2")

    let summary = try await bobsPhone.push()
    #expect(summary.pushed == 2 && summary.rejected == 1 && summary.pending == 0)
    let status = try bobsPhone.replicator.status()
    #expect(status.rejected.map(\.sequence) == [3])
    #expect(status.rejected.first?.id == alicesEvent.id)
    #expect(status.rejected.first?.reason.contains("the event ID is taken") == true)
    // Not pushed again, and Alice's log is untouched.
    #expect(try await bobsPhone.push().rejected == 0)
    #expect(try serverEventIDs(fixture, owner: alice.role) == [alicesEvent.id])
    #expect(try serverEventIDs(fixture, owner: bob.role).count == 2)
  }

  @Test func aPulledEventOfAnUnknownTypeOrNewerSchemaIsKeptAndReportedAndTheProjectionsGoOn() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let newer = try Device(customer)
    let restaurant = try await newer.addRestaurant()
    let booking = try await newer.book(restaurant)
    #expect(try await newer.push().pushed == 1)
    // What a newer app would push: a type this build does not know, and a newer BookingCreated.
    func foreign(
      _ type: String, _ version: UInt16, _ payload: [UInt8], on stream: StreamID, seq: UInt64
    )
      -> OutgoingEvent
    {
      OutgoingEvent(
        RecordedEvent(
          sequence: seq, id: UUID(), stream: stream, version: 1, type: type, schemaVersion: version,
          recordedAt: Date(), metadata: EventMetadata(origin: "app 2.0"), payload: []),
        payload: Array(#"{"$binary":"\#(Data(payload).base64EncodedString())"}"#.utf8))
    }
    let device = DeviceCredentials.random()
    _ = try await newer.transport.push(
      [
        foreign("BookingMoved", 1, [1, 2, 3], on: RestaurantBookingStreams.booking(booking.id), seq: 1),
        foreign("BookingCreated", 9, [9, 9], on: RestaurantBookingStreams.booking(UUID()), seq: 2),
      ], device: device, through: 2)
    let after = try await newer.book(restaurant, name: "After")
    #expect(try await newer.push().pushed == 1)

    let older = try Device(customer)
    let pulled = try await older.pull()
    #expect(pulled.pulled == 4 && pulled.unreadable == 2)
    #expect(
      try await older.allBookings().map(\.id).sorted { $0.uuidString < $1.uuidString }
        == [booking.id, after.id].sorted { $0.uuidString < $1.uuidString })
    #expect(try older.replicator.status().unreadable == 2)
    let report = try older.store.verify()
    #expect(report.isClean, "\(report.problems)")
    #expect(report.skipped.map(\.kind) == [.unreadable, .unreadable])
    #expect(report.skipped.first?.reason.contains("BookingMoved") == true)
    try older.expectHealthy()
    // And they are stored verbatim: pushed on from here, they are the same events.
    #expect(try older.store.event(at: 2)?.payload == [1, 2, 3])
  }

  /// Issue 23: payloads are JSON on the server. A newer app's event type travels as its JSON
  /// (SQL reads its fields); a device of an older build stores it as it came (JSON), skips it,
  /// renders it in `log --json` and `export` as it is, and folds it in once a build that knows
  /// the type opens the log.
  @Test func aNewerAppsEventTravelsAsJSONAndIsFoldedByABuildThatKnowsIt() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let newer = try Device(customer, schema: NotedBookings.schema)
    let restaurant = try await newer.addRestaurant()
    let booking = try await newer.book(restaurant)
    let noted = BookingNoted(bookingID: booking.id, note: "window seat, please", at: Date())
    try await newer.store.append(
      [try NewEvent(noted)], to: RestaurantBookingStreams.booking(booking.id), expectedVersion: .exactly(1))
    #expect(try await newer.push().pushed == 2)
    let sql = try PostgresConnection(
      PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
    let note = try sql.query(
      "SELECT payload->>'note' AS note FROM eventlog.events WHERE type = 'BookingNoted'",
      purpose: "read a field")
    #expect(try note.string(0, "note") == "window seat, please")

    let directory = TemporaryDirectory("older")
    var older: Device? = try Device(customer, at: directory)
    try await older?.addRestaurant(id: restaurant)
    let pulled = try await older?.pull()
    #expect(pulled?.pulled == 2 && pulled?.unreadable == 1, "\(String(describing: pulled))")
    let stored = try #require(try older?.store.event(at: 3))
    #expect(stored.payloadEncoding == .json)
    let rendered = try #require(try older?.store.payloadJSON(of: stored))
    #expect(rendered.form == .stored)
    #expect(String(decoding: rendered.json, as: UTF8.self).contains(#""note":"window seat, please""#))
    #expect(try older?.store.skippedEvents().map(\.kind) == [.unreadable])
    try older?.expectHealthy()
    // Pushed on from here, it is the same event.
    #expect(try await older?.push().rejected == 0)

    await older?.store.close()
    older = nil
    let upgraded = try EventStore(path: directory.environment(), schema: NotedBookings.schema, options: .fast)
    #expect(try upgraded.skippedCount() == 0)
    #expect(try upgraded.event(at: 3).map { try $0.decode(BookingNoted.self) } == noted)
    #expect(try upgraded.verify().isClean)
  }
}

/// A newer app: the restaurant-booking schema and a note on a booking.
struct BookingNoted: EventPayload, Equatable {
  static let eventType = "BookingNoted"
  var bookingID: UUID
  var note: String
  var at: Date
}

enum NotedBookings {
  static let schema = AppSchema(
    name: "noted-bookings",
    composing: [
      .restaurantBooking,
      AppSchema(name: "notes", eventTypes: [BookingNoted.self]),
    ])
}
