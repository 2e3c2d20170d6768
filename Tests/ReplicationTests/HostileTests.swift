import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// Issue 21: the shared log against a hostile co-device (anything holding the customer's role),
/// another customer (any other role that can connect) and an unlucky operator. Each test
/// reproduces one finding against a real PostgreSQL; on the build before server schema version
/// 3 each of them failed.
@Suite("Hostile co-devices, customers and operators", .needsPostgres)
struct HostileTests {
  func connection(_ customer: Customer) throws -> PostgresConnection {
    try PostgresConnection(PostgresConfiguration(url: customer.url))
  }

  /// Finding 1: one row with `recorded_at = 'infinity'` made `eventlog.pull()` itself fail for
  /// every device of the owner, for good. Now no role may insert it (no table privilege), push
  /// refuses it, and a row that slips past anyway (an operator's hand) is passed and recorded
  /// by the device: the pull goes on, a new device joins, the row is in `remote status`.
  @Test func aRowAtInfinityCannotWedgeTheOwner() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let before = try await phone.book(restaurant, name: "Before")
    #expect(try await phone.push().pushed == 1)

    // Through the function: refused, that event alone.
    let hostile = try connection(ada)
    let device = DeviceCredentials.random()
    let refused = try hostile.query(
      """
      SELECT outcome, reason FROM eventlog_api.push($1, $2, 1, jsonb_build_array(jsonb_build_object(
        'id', gen_random_uuid(), 'seq', 1, 'stream', 'booking-x', 'type', 'BookingDeleted', 'schemaVersion', 1,
        'payload', '{}'::jsonb, 'recordedAt', 9223372036854775807, 'metadata', jsonb_build_object('origin', 'x'))))
      """, [.uuid(device.id), .text(device.key)], purpose: "push a time past year 9999")
    #expect(try refused.string(0, "outcome") == "refused")
    #expect(try refused.string(0, "reason").contains("recordedAt"))
    // Directly: no privilege.
    let direct = #expect(throws: PostgresError.self) {
      try hostile.query(
        """
        INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
          schema_version, payload, recorded_at)
        VALUES (eventlog.current_owner(), 2, gen_random_uuid(), gen_random_uuid(), 1, 'booking-x', 'T', 1, '{}',
          'infinity')
        """, purpose: "insert at infinity")
    }
    #expect(direct?.sqlState == "42501")
    // An operator's hand, past the constraint: the row is there.
    try fixture.superuser(
      """
      ALTER TABLE eventlog.events DROP CONSTRAINT events_bounded;
      INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
        schema_version, payload, recorded_at)
      SELECT owner, 2, gen_random_uuid(), gen_random_uuid(), 1, stream, 'BookingDeleted', 1, '{}', 'infinity'
      FROM eventlog.events WHERE position = 1;
      """)
    let after = try await phone.book(restaurant, name: "After")
    #expect(try await phone.push().pushed == 1)

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 1 && pulled.cursor == 3, "\(pulled)")
    #expect(Set(try await tablet.allBookings().map(\.id)) == [before.id, after.id])
    let status = try tablet.replicator.status()
    #expect(status.unstorable.map(\.position) == [2])
    #expect(status.unstorable.first?.reason.contains("years 1 and 9999") == true)
    try tablet.expectHealthy()
    // And it keeps going: the phone pulls past the row too.
    #expect(try await phone.pull().cursor == 3)
  }

  /// Finding 2: a row on `restaurant-catalog` (through push too) was pulled, added or removed
  /// other devices' restaurants, and an unreadable one wedged `bookings create` for good. The
  /// server refuses a stream the app does not replicate (remote init told it which); a server
  /// that does not know (no prefixes recorded) passes it, and the device does not store it.
  @Test(arguments: [true, false])
  func theCatalogStreamIsNeverPulled(serverKnowsTheStreams: Bool) async throws {
    let fixture = try await ServerFixture(
      replicatedStreamPrefixes: serverKnowsTheStreams ? RestaurantBookingSchema.replicatedStreamPrefixes : [])
    let ada = try fixture.customer("ada")
    let hostile = try Device(ada)
    // A co-device pushes catalog events: one that removes the restaurant, one of a newer app.
    let restaurant = UUID()
    let removed = try NewEvent(RestaurantRemoved(restaurantID: restaurant, name: "Pasta", cuisine: "italian"))
    let foreign = NewEvent(
      id: UUID(), type: "RestaurantMoved", schemaVersion: 1, payload: [1],
      metadata: EventMetadata(origin: "x"))
    let outgoing = [removed, foreign].enumerated().map { index, event in
      OutgoingEvent(
        localSequence: UInt64(index + 1), id: event.id, stream: RestaurantBookingStreams.catalog,
        type: event.type,
        schemaVersion: event.schemaVersion,
        payload: Array(#"{"restaurantID":"\#(restaurant.lowercasedString)"}"#.utf8),
        metadata: event.metadata, recordedAt: Date())
    }
    let outcomes = try await hostile.transport.push(outgoing, device: .random(), through: 2)
    if serverKnowsTheStreams {
      for outcome in outcomes {
        guard case .refused(let reason) = outcome else {
          Issue.record("stored: \(outcome)")
          continue
        }
        #expect(reason.contains("is not replicated on this server"))
      }
    } else {
      #expect(outcomes.allSatisfy { if case .stored = $0 { true } else { false } })
    }

    let tablet = try Device(ada)
    try await tablet.addRestaurant("Pasta", id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 0)
    #expect(try tablet.store.head() == 1)
    #expect(try tablet.replicator.status().unstorable.count == (serverKnowsTheStreams ? 0 : 2))
    // The catalog is the device's own: the restaurant is there and bookings go on.
    let booking = try await tablet.book(restaurant)
    #expect(try await tablet.allBookings().map(\.id) == [booking.id])
    try tablet.expectHealthy()
  }

  /// Finding 3, the second half: a server that acknowledges a push without keeping it. The
  /// device that pushed finds out on its next pull (the server holds fewer events than it
  /// acknowledged) and says so until a resync, which pushes the event again.
  @Test func aServerThatAcknowledgedAPushItDidNotKeepIsCaught() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let booking = try await phone.book(try await phone.addRestaurant())
    #expect(try await phone.push().pushed == 1)
    try fixture.superuser(
      """
      ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
      DELETE FROM eventlog.events;
      ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
      """)
    let error = await #expect(throws: ReplicationError.self) { try await phone.pull() }
    #expect(error?.description.contains("acknowledged") == true, "\(String(describing: error))")
    await #expect(throws: ReplicationError.self) { try await phone.push() }
    try await phone.replicator.resync()
    #expect(try await phone.push().pushed == 1)
    _ = try await phone.pull()
    let tablet = try Device(ada)
    _ = try await tablet.pull()
    #expect(try await tablet.allBookings().map(\.id) == [booking.id])
  }

  /// Finding 4: a co-device moved another device's pushed mark (`push(victim, N, '[]')` or an
  /// `UPDATE`), and the victim's offline bookings never reached the server. A mark belongs to
  /// the device's secret key now.
  @Test func aCoDeviceCannotMoveAnotherDevicesMark() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let victim = try Device(ada)
    let restaurant = try await victim.addRestaurant()
    _ = try await victim.book(restaurant, name: "Online")
    #expect(try await victim.push().pushed == 1)
    _ = try await victim.book(restaurant, name: "Offline 1")
    _ = try await victim.book(restaurant, name: "Offline 2")

    let hostile = try connection(ada)
    let victimID = try #require(victim.store.deviceID)
    try hostile.query(
      "SELECT * FROM eventlog_api.push($1, $2, 1000000, '[]'::jsonb)",
      [.uuid(victimID), .text(String(repeating: "f", count: 64))], purpose: "move the victim's mark")
    let update = #expect(throws: PostgresError.self) {
      try hostile.query(
        "UPDATE eventlog.device_marks SET pushed_through = 1000000", purpose: "move all marks")
    }
    #expect(update?.sqlState == "42501")

    let summary = try await victim.push()
    #expect(summary.pushed == 2 && summary.pending == 0, "\(summary)")
    #expect(try serverEventIDs(fixture, owner: ada.role).count == 3)
  }

  /// Finding 5: another customer blocked pushes, with an advisory lock on the owner's hash (one
  /// customer) or `LOCK TABLE eventlog.devices` (every customer). Appends take turns on a row
  /// only the functions can lock, and no client role may lock a table.
  @Test func anotherCustomerCannotBlockAPush() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let bob = try fixture.customer("bob")
    let phone = try Device(ada)
    _ = try await phone.book(try await phone.addRestaurant())

    let blocker = try connection(bob)
    try blocker.execute("BEGIN", purpose: "hold locks")
    // Version 2's lock: the advisory lock on the owner's hash, in every form Bob can guess.
    for key in [ada.role, "role:" + (try roleOID(fixture, ada.role))] {
      try blocker.query(
        "SELECT pg_advisory_xact_lock(1163283527, hashtext($1))", [.text(key)], purpose: "advisory lock")
    }
    for table in ["events", "device_marks", "owners"] {
      try blocker.execute("SAVEPOINT attempt", purpose: "try a lock")
      let locked = #expect(throws: PostgresError.self) {
        try blocker.query("LOCK TABLE eventlog.\(table) IN ACCESS EXCLUSIVE MODE", purpose: "lock \(table)")
      }
      #expect(locked?.sqlState == "42501", "\(table)")
      try blocker.execute("ROLLBACK TO SAVEPOINT attempt", purpose: "after the attempt")
    }
    // Bob holds his transaction until after the push: a push that waited for his locks would end in
    // lock_timeout (10 s) on every attempt until its 30 s deadline, and throw, since he never lets
    // go before it returns. So the push returning is the proof (no clock: it is not a speed test).
    #expect(try await phone.push().pushed == 1)
    try blocker.execute("ROLLBACK", purpose: "let go")
  }

  /// Finding 6: without a pinned `search_path`, another customer's operator `numeric * integer`
  /// in `public` (writable by every role up to PostgreSQL 14) ran as the victim inside
  /// `eventlog.pull` and copied her rows. Every function pins an empty `search_path` now, and
  /// `remote init` warns that `public` is writable.
  @Test func anotherCustomersOperatorInPublicNeverRuns() async throws {
    let fixture = try await ServerFixture()
    try fixture.superuser("GRANT CREATE ON SCHEMA public TO PUBLIC")
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    let report = try await owner.initializeSchema()
    #expect(report.warnings.contains { $0.contains("schema 'public'") })
    let ada = try fixture.customer("ada")
    let bob = try fixture.customer("bob")
    let trap = try connection(bob)
    try trap.execute(
      """
      CREATE TABLE public.stolen (who text, what text);
      GRANT INSERT ON public.stolen TO PUBLIC;
      CREATE FUNCTION public.steal(numeric, integer) RETURNS numeric LANGUAGE sql AS $$
        INSERT INTO public.stolen VALUES (current_user, 'numeric * integer');
        SELECT $1 * $2::numeric $$;
      CREATE OPERATOR public.* (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = public.steal);
      CREATE FUNCTION public.steal2(bigint, interval) RETURNS interval LANGUAGE sql AS $$
        INSERT INTO public.stolen VALUES (current_user, 'bigint * interval');
        SELECT $1::double precision * $2 $$;
      CREATE OPERATOR public.* (LEFTARG = bigint, RIGHTARG = interval, FUNCTION = public.steal2);
      """, purpose: "set the trap")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    _ = try await phone.book(restaurant)
    #expect(try await phone.push().pushed == 1)
    let tablet = try Device(ada)
    #expect(try await tablet.pull().pulled == 1)
    #expect(try trap.query("SELECT count(*) AS n FROM public.stolen", purpose: "check").integer(0, "n") == 0)
  }

  /// Finding 7: no byte budget per pulled page; six 60 MiB events took a pull to 1.6 GB. An event
  /// holds at most 4 MiB on the server, and a page at most the budget past its first event.
  @Test func pagesAreBoundedByBytes() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let hostile = try Device(ada)
    let big = String(repeating: "x", count: 3 << 20)
    func event(_ index: Int, _ text: String) -> OutgoingEvent {
      OutgoingEvent(
        localSequence: UInt64(index), id: UUID(), stream: RestaurantBookingStreams.booking(UUID()),
        type: "BookingNote", schemaVersion: 1, payload: Array(#"{"text":"\#(text)"}"#.utf8),
        metadata: EventMetadata(origin: "x"), recordedAt: Date())
    }
    let device = DeviceCredentials.random()
    let tooBig = try await hostile.transport.push(
      [event(1, String(repeating: "y", count: 5 << 20))], device: device, through: 1)
    guard case .refused(let reason) = tooBig.first else {
      Issue.record("stored an event over 4 MiB: \(tooBig)")
      return
    }
    #expect(reason.contains("4 MiB"))
    for index in 2...7 {
      _ = try await hostile.transport.push([event(index, big)], device: device, through: UInt64(index))
    }
    let transport = try PostgresTransport(url: ada.url)
    defer { transport.close() }
    var cursor = PullCursor(position: 0, eventID: nil)
    var pages = 0
    while true {
      let page = try await transport.pull(after: cursor, limit: 1_000, maxBytes: 4 << 20, wait: .zero)
      guard let last = page.last else { break }
      pages += 1
      let bytes = page.reduce(0) { total, row in
        guard case .event(let event) = row else { return total }
        return total + event.payload.count
      }
      // The budget, plus the event that crosses it.
      #expect(bytes <= (4 << 20) + (4 << 20), "a page of \(bytes) bytes")
      #expect(page.count <= 2)
      cursor = PullCursor(position: last.position, eventID: last.id)
    }
    #expect(pages >= 3 && cursor.position == 6)
  }

  /// Medium: one unknown-type event on a booking's stream made the booking impossible to cancel
  /// ("already deleted") while it was listed.
  @Test func aBookingWithAnEventTheProjectionsSkipStillDeletes() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let tablet = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant)
    #expect(try await phone.push().pushed == 1)
    // A newer app's event on the booking's stream.
    _ = try await phone.transport.push(
      [
        OutgoingEvent(
          localSequence: 1, id: UUID(), stream: RestaurantBookingStreams.booking(booking.id),
          type: "BookingMoved",
          schemaVersion: 1, payload: Array(#"{"$binary":"BA=="}"#.utf8),
          metadata: EventMetadata(origin: "app 2"),
          recordedAt: Date())
      ], device: .random(), through: 1)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 1, "\(pulled)")
    #expect(try tablet.store.version(of: RestaurantBookingStreams.booking(booking.id)) == 2)
    #expect(try await tablet.allBookings().map(\.id) == [booking.id])
    try await tablet.bookings.delete(id: booking.id)
    #expect(try await tablet.allBookings().isEmpty)
    try tablet.expectHealthy()
  }

  /// A co-device's second `BookingCreated` of a booking (a new event ID, other content) would
  /// have replaced it: the bookings projection refuses it, and a pulled event that a projection
  /// refuses is stored and skipped, never failing the pull or an open.
  @Test func aSecondCreateOfABookingIsSkippedNotApplied() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant, name: "Ada")
    #expect(try await phone.push().pushed == 1)
    var second = try #require(try phone.store.events(from: 1).last).decode(BookingCreated.self)
    second.customerName = Personal(storedBytes: Array("Mallory".utf8))
    let copy = RecordedEvent(
      sequence: 1, id: UUID(), stream: RestaurantBookingStreams.booking(booking.id), version: 2,
      type: BookingCreated.eventType, schemaVersion: BookingCreated.schemaVersion, recordedAt: Date(),
      metadata: EventMetadata(origin: "x"), payload: try BinaryEncoder().encode(second))
    let pushed = try await phone.transport.push(
      [OutgoingEvent(copy, payload: PayloadConversionProbe.json(copy))], device: .random(), through: 1)
    #expect(pushed.first.map { if case .stored = $0 { true } else { false } } == true, "\(pushed)")

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 1, "\(pulled)")
    #expect(try await tablet.allBookings().map(\.customerName) == ["Ada"])
    let skipped = try tablet.store.skippedEvents()
    #expect(skipped.map(\.kind) == [.refused])
    #expect(skipped.first?.reason.contains("created already") == true)
    try tablet.expectHealthy()
  }

  /// Medium: events a pull keeps but skips (invalid, refused by a projection, of an unknown type)
  /// made the device's `export` impossible to `import`, while `verify` said OK. The export marks
  /// them skipped, and the import keeps them so: the backup restores the same log, and exports
  /// the same bytes again.
  @Test func everyExportOfAPullingDeviceImports() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant, name: "Ada")
    #expect(try await phone.push().pushed == 1)
    let created = try #require(try phone.store.events(from: 1).last)
    // A co-device's events: a party of 0 (invalid), a second create of the booking (refused by
    // the projection), and a newer app's type (unreadable).
    var empty = try created.decode(BookingCreated.self)
    empty.partySize = 0
    empty.bookingID = UUID()
    var second = try created.decode(BookingCreated.self)
    second.customerName = Personal(storedBytes: Array("Mallory".utf8))
    func outgoing(_ payload: BookingCreated, sequence: UInt64) throws -> OutgoingEvent {
      let event = RecordedEvent(
        sequence: sequence, id: UUID(), stream: RestaurantBookingStreams.booking(payload.bookingID),
        version: 1,
        type: BookingCreated.eventType, schemaVersion: 1, recordedAt: Date(),
        metadata: EventMetadata(origin: "x"),
        payload: try BinaryEncoder().encode(payload))
      return OutgoingEvent(event, payload: PayloadConversionProbe.json(event))
    }
    let foreign = OutgoingEvent(
      localSequence: 3, id: UUID(), stream: RestaurantBookingStreams.booking(booking.id),
      type: "BookingMoved",
      schemaVersion: 1, payload: Array(#"{"table":4}"#.utf8), metadata: EventMetadata(origin: "app 2"),
      recordedAt: Date())
    _ = try await phone.transport.push(
      [try outgoing(empty, sequence: 1), try outgoing(second, sequence: 2), foreign], device: .random(),
      through: 3)

    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 4 && pulled.unreadable == 3, "\(pulled)")
    #expect(Set(try tablet.store.skippedEvents().map(\.kind)) == [.invalid, .refused, .unreadable])
    try tablet.expectHealthy()

    let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
    let exported = try runChild(binary, ["--db", tablet.store.path, "export"])
    #expect(exported.status == 0, "\(exported)")
    #expect(exported.stdout.components(separatedBy: #""skipped":{"#).count == 3)
    let file = try tablet.directory.file("backup.jsonl", Data(exported.stdout.utf8))
    let restored = TemporaryDirectory("restored")
    let imported = try runChild(binary, ["--db", restored.environment(), "import", file])
    #expect(imported.status == 0, "\(imported)")
    let again = try runChild(binary, ["--db", restored.environment(), "export"])
    #expect(exportedEvents(again.stdout) == exportedEvents(exported.stdout))
    #expect(try runChild(binary, ["--db", restored.environment(), "verify"]).status == 0)
  }

  /// Medium: the same event ID with other content: the first push won and nobody noticed. Now
  /// the pusher's event is a conflict (recorded, not stored), and the device that holds the
  /// other content records the conflict when it pulls.
  @Test func theSameIDWithOtherContentIsAConflictOnBothSides() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let forger = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant, name: "Ada")
    let original = try #require(try phone.store.events(from: 1).last)
    // The forger holds the same event ID with another customer's name.
    var changed = try original.decode(BookingCreated.self)
    changed.customerName = Personal(storedBytes: Array("Mallory".utf8))
    try await forger.addRestaurant(id: restaurant)
    _ = try await forger.store.ingest([
      EventStore.IngestedEvent(
        stream: original.stream,
        event: NewEvent(
          id: original.id, type: original.type, schemaVersion: original.schemaVersion,
          payload: try BinaryEncoder().encode(changed), metadata: original.metadata,
          recordedAt: original.recordedAt))
    ])
    #expect(try await phone.push().pushed == 1)
    let forged = try await forger.push()
    #expect(forged.rejected == 1 && forged.conflicts == 1 && forged.pushed == 0, "\(forged)")
    #expect(try forger.replicator.status().rejected.first?.reason.contains("conflict") == true)
    let pulled = try await forger.pull()
    #expect(pulled.conflicts == 1 && pulled.alreadyPresent == 1, "\(pulled)")
    #expect(try forger.replicator.status().conflicts.first?.id == original.id)
    // The server kept the first.
    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    _ = try await tablet.pull()
    #expect(try await tablet.allBookings().map(\.customerName) == ["Ada"])
    _ = booking
  }

  /// Low: an empty page while the server's head is higher ended a pull silently.
  @Test func anEmptyPageBelowTheHeadIsAProtocolViolation() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    _ = try await phone.book(try await phone.addRestaurant())
    #expect(try await phone.push().pushed == 1)
    // A server that answers nothing (an operator's function, or a broken proxy): the function a
    // pull calls (from server schema version 5, pull_chained's).
    try fixture.superuser(
      """
      CREATE OR REPLACE FUNCTION eventlog.pull_chained_events(
        p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
      RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
        pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
        metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text)
      LANGUAGE sql AS $$ SELECT * FROM (SELECT 1::bigint, null::uuid, null::uuid, 1::bigint, null::uuid,
        1::bigint, '', '', 1, '', '', '', '', '', 1::bigint, '') x WHERE false $$
      """)
    let tablet = try Device(ada)
    let error = await #expect(throws: ReplicationError.self) { try await tablet.pull() }
    #expect(error?.description.contains("empty page") == true, "\(String(describing: error))")
  }

  /// Low: `remote init` trapped on a negative server schema version.
  @Test func aNegativeServerVersionIsAnErrorNotATrap() async throws {
    let fixture = try await ServerFixture()
    try fixture.superuser("UPDATE eventlog.schema_info SET version = -1")
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    await #expect(throws: ServerSchema.InitError.invalidVersion(found: -1)) {
      try await owner.initializeSchema()
    }
  }

  /// Low: the owner was the role's name: a rename broke the devices, and a new role with the old
  /// name inherited the log. Owners are keyed on the role's OID now.
  @Test func aRenamedRoleKeepsItsLogAndANewRoleWithTheOldNameGetsNone() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let booking = try await phone.book(try await phone.addRestaurant())
    #expect(try await phone.push().pushed == 1)
    let renamed = ada.role + "_renamed"
    try fixture.server.superuser(
      "ALTER ROLE \(ada.role) RENAME TO \(renamed); ALTER ROLE \(renamed) PASSWORD '\(ada.password)'")
    let tablet = try Device(
      Customer(
        role: renamed, password: ada.password,
        url: fixture.server.url(user: renamed, password: ada.password, database: fixture.database)))
    _ = try await tablet.pull()
    #expect(try tablet.store.events(from: 1).map(\.id).count == 1)
    try fixture.server.superuser("CREATE ROLE \(ada.role) LOGIN PASSWORD '\(ada.password)'")
    let impostor = try Device(ada)
    #expect(try await impostor.pull().pulled == 0)
    _ = booking
  }

  /// Low: `--retry-for` did not bound the time (a statement could take 60 s). A push blocked by
  /// a co-device's open transaction ends at the deadline, not after it.
  @Test func theRetryBudgetBoundsTheWholePush() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    var options = Device.quickOptions
    options.retryFor = .seconds(2)
    let phone = try Device(ada, options: options)
    _ = try await phone.book(try await phone.addRestaurant())
    // The co-device holds the owner's turn: a push of its own, never committed.
    let holder = try connection(ada)
    let device = DeviceCredentials.random()
    try holder.execute("BEGIN", purpose: "hold the owner's turn")
    try holder.query(
      "SELECT * FROM eventlog_api.push($1, $2, 0, '[]'::jsonb)", [.uuid(device.id), .text(device.key)],
      purpose: "take the turn")
    let started = ContinuousClock.now
    let error = await #expect(throws: ReplicationError.self) { try await phone.push() }
    let elapsed = ContinuousClock.now - started
    guard case .gaveUp = error else {
      Issue.record("expected gaveUp, got \(String(describing: error))")
      return
    }
    // The function's lock_timeout is 10 s and a statement's deadline 60 s: 2 s and some slack.
    #expect(elapsed < .seconds(8), "the push took \(elapsed)")
    try holder.execute("ROLLBACK", purpose: "let go")
  }

  /// The budget bounds a command without progress, not one that keeps moving: a push of many
  /// batches that takes longer than the budget in all goes through (each batch moves the
  /// deadline on).
  @Test func aLongPushThatKeepsMovingIsNotCutShort() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    var options = Device.quickOptions
    options.retryFor = .seconds(1)
    options.pushBatchSize = 1
    let phone = try Device(ada, options: options)
    let restaurant = try await phone.addRestaurant()
    for index in 0..<1_000 { _ = try await phone.book(restaurant, name: "Guest \(index)") }
    let started = ContinuousClock.now
    let summary = try await phone.push()
    let elapsed = ContinuousClock.now - started
    #expect(summary.pushed == 1_000 && summary.pending == 0)
    // The test means something only when the push outlasted its budget.
    #expect(elapsed > options.retryFor ?? .zero, "the push took \(elapsed): make it longer")
  }

  /// Medium: any role could `LISTEN`/`NOTIFY` a customer's channel, and `NOTIFY` spam drove one
  /// `--watch` from 2 to 4,306 pulls in 10 s. The channel is derived from a key only the owner
  /// can read, and notifications start at most one pull per interval.
  @Test func notificationsCannotBeDerivedOrSpammedIntoPulls() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let bob = try fixture.customer("bob")
    let adasChannel = try connection(ada).query("SELECT eventlog_api.channel() AS c", purpose: "channel")
      .string(0, "c")
    let bobsChannel = try connection(bob).query("SELECT eventlog_api.channel() AS c", purpose: "channel")
      .string(0, "c")
    #expect(adasChannel != bobsChannel)
    // Version 2's derivation, from the owner's name alone, is not the channel any more.
    for guess in [ada.role, "role:" + (try roleOID(fixture, ada.role))] {
      let derived = try connection(bob).query(
        "SELECT 'eventlog_' || md5($1) AS c", [.text(guess)], purpose: "guess"
      )
      .string(0, "c")
      #expect(derived != adasChannel)
    }

    var options = Device.quickOptions
    options.pollInterval = .seconds(60)
    options.minimumPullInterval = .seconds(1)
    let phone = try Device(ada, options: options)
    let rounds = Counter()
    let stop = Counter()
    let watch = Task {
      try await phone.replicator.watch(shouldStop: { stop.value > 0 }) { event in
        if case .round = event { rounds.add() }
      }
    }
    // Someone who learned the channel floods it: 300 notifications.
    let spammer = try PostgresConnection(
      PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
    let started = ContinuousClock.now
    for _ in 0..<300 {
      try spammer.query("SELECT pg_notify($1, '')", [.text(adasChannel)], purpose: "spam")
      try await Task.sleep(for: .milliseconds(5))
    }
    let seconds = Double((ContinuousClock.now - started).components.seconds) + 1
    stop.add()
    _ = try await watch.value
    // One round at the start, then at most one a second (and one more as it stops).
    #expect(
      Double(rounds.value) <= seconds + 3, "\(rounds.value) rounds in \(seconds) s of 300 notifications")
  }

  private func roleOID(_ fixture: ServerFixture, _ role: String) throws -> String {
    try PostgresConnection(PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
      .query("SELECT oid::text AS oid FROM pg_roles WHERE rolname = $1", [.text(role)], purpose: "oid")
      .string(0, "oid")
  }
}

/// The JSON a push sends for a payload of the domain.
enum PayloadConversionProbe {
  static func json(_ event: RecordedEvent) -> [UInt8] {
    (try? RestaurantBookingSchema.eventTypes.json(of: event)).map(Array.init)
      ?? Array(#"{"$binary":"\#(Data(event.payload).base64EncodedString())"}"#.utf8)
  }
}
