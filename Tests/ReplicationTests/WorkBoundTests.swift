import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// Issue 28: the server's work bounded by what it computes. A co-device's payloads whose JSON
/// text dwarfs their stored size (`1e131000`: a few bytes as `jsonb`, 131 KB as text) made every
/// pull of the owner time out, for good; one user's long polls held every connection of the API's
/// pool. Each test failed on the build before server schema version 4.
@Suite("Server work bounded by what it computes", .needsPostgres)
struct WorkBoundTests {
  func connection(_ url: String) throws -> PostgresConnection {
    try PostgresConnection(PostgresConfiguration(url: url))
  }

  /// `push` measures a payload by its text: a number whose text is out of proportion is refused
  /// before anything renders it, and so is a payload over 4 MiB as text (escapes make a 0.8 MB
  /// payload 4.8 MB of text); a payload with `Double`'s extremes is stored, with its text's length.
  @Test func aPayloadIsRefusedAtPushByItsText() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let device = try Device(ada)
    let huge = "[" + Array(repeating: "1e131000", count: 50).joined(separator: ",") + "]"
    let control = String(repeating: #"\u0001"#, count: 800_000)
    let payloads = [
      #"{"n": \#(huge)}"#, #"{"deep": [{"tiny": [1e-16383]}]}"#, #"{"zero": 0e-16383}"#,
      #"{"text": "\#(control)"}"#,
      #"{"big": 1.7976931348623157e308, "small": 5e-324, "zero": 0, "s": "é\n"}"#,
    ]
    let events = payloads.enumerated().map { index, payload in
      OutgoingEvent(
        localSequence: UInt64(index + 1), id: UUID(), stream: RestaurantBookingStreams.booking(UUID()),
        type: "BookingNote", schemaVersion: 1, payload: Array(payload.utf8),
        metadata: EventMetadata(origin: "x"),
        recordedAt: Date())
    }
    let outcomes = try await device.transport.push(events, device: .random(), through: 5)
    #expect(outcomes.count == 5)
    for (index, outcome) in outcomes.prefix(3).enumerated() {
      guard case .refused(let reason) = outcome else {
        Issue.record("payload \(index + 1) was not refused: \(outcome)")
        continue
      }
      #expect(reason.contains("out of proportion"), "\(reason)")
    }
    guard case .refused(let reason) = outcomes[3] else {
      Issue.record("a payload of 4.8 MB of text was not refused: \(outcomes[3])")
      return
    }
    #expect(reason.contains("4 MiB as JSON text"), "\(reason)")
    guard case .stored(let position) = outcomes[4] else {
      Issue.record("a payload with a Double's extremes was not stored: \(outcomes[4])")
      return
    }
    let rows = try connection(fixture.server.url(database: fixture.database)).query(
      "SELECT payload_text_bytes, octet_length(payload::text) AS rendered FROM eventlog.events WHERE id = $1",
      [.uuid(events[4].id)], purpose: "read the stored length")
    let (stored, rendered) = (try rows.integer(0, "payload_text_bytes"), try rows.integer(0, "rendered"))
    #expect(position == 1 && stored == rendered)
  }

  /// The reviewer's attack, on a server that stored it before version 4: rows whose text runs to
  /// megabytes each (inserted by the tables' owner, as version 3's push took them), between a
  /// device's events, with the owner's statements limited to 2 s (Supabase's `authenticated`
  /// role has 8). Version 3 rendered every row of a page before its budget applied: the pull
  /// timed out, every time. The upgrade measures the rows without rendering those numbers, and
  /// every pull, of an old device or a new one, passes them, each recorded by position and ID;
  /// so is a row of an operator's afterwards, and an old row whose text is over what a device
  /// takes (8 MiB).
  @Test func rowsStoredBeforeVersion4WhoseTextIsHugeWedgeNoPull() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    _ = try await owner.initializeSchema(
      migrations: Array(ServerSchema.migrations.prefix(3)),
      replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes)
    let ada = try fixture.customer("ada")
    try fixture.server.superuser("ALTER ROLE \(ada.role) SET statement_timeout = '2s'")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    let before = try await phone.book(restaurant, name: "Before")
    #expect(try await phone.push().pushed == 1)
    // 40 rows of 250 numbers of 131 KB of text each (32 MB a row), then one of 30,000 numbers of
    // 301 digits (9 MB): the tables' owner inserts them as version 3's push stored them.
    let ownerSQL = try connection(fixture.ownerURL)
    try ownerSQL.query(
      """
      INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
        schema_version, payload, metadata, recorded_at)
      SELECT e.owner, 1 + g, gen_random_uuid(), gen_random_uuid(), g, 'booking-' || gen_random_uuid(),
        'BookingNote', 1,
        CASE WHEN g <= 40
          THEN jsonb_build_object('n', (SELECT jsonb_agg('1e131000'::jsonb) FROM generate_series(1, 250)))
          ELSE jsonb_build_object('n', (SELECT jsonb_agg('1e300'::jsonb) FROM generate_series(1, 30000))) END,
        '{"origin": "hostile"}', now()
      FROM eventlog.events e, generate_series(1, 41) g WHERE e.position = 1
      """, purpose: "store rows as version 3 did")
    let after = try await phone.book(restaurant, name: "After")
    #expect(try await phone.push().pushed == 1)
    let hostile = try ownerSQL.query(
      "SELECT position, id FROM eventlog.events WHERE position BETWEEN 2 AND 42 ORDER BY position",
      purpose: "the hostile rows")
    let hostileRows = try (0..<hostile.count).map {
      (try hostile.integer($0, "position", as: UInt64.self), try hostile.uuid($0, "id"))
    }

    let upgrade = try await owner.initializeSchema()
    #expect(upgrade.from == 3 && upgrade.to == ServerSchema.latestVersion)
    // An operator's row afterwards, past the bounds push keeps.
    try fixture.superuser(
      """
      ALTER TABLE eventlog.events DROP CONSTRAINT IF EXISTS events_bounded;
      INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
        schema_version, payload, metadata, recorded_at)
      SELECT owner, 44, gen_random_uuid(), gen_random_uuid(), 1, stream, 'BookingNote', 1,
        jsonb_build_object('n', (SELECT jsonb_agg('1e131000'::jsonb) FROM generate_series(1, 250))),
        '{"origin": "operator"}', now()
      FROM eventlog.events WHERE position = 1
      """)
    let operatorRow = try ownerSQL.query(
      "SELECT id FROM eventlog.events WHERE position = 44", purpose: "the operator's row"
    ).uuid(0, "id")

    var options = Device.quickOptions
    options.retryFor = .seconds(10)
    let tablet = try Device(ada, options: options)
    try await tablet.addRestaurant(id: restaurant)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 2 && pulled.unreadable == 42 && pulled.cursor == 44, "\(pulled)")
    #expect(Set(try await tablet.allBookings().map(\.id)) == [before.id, after.id])
    let unstorable = try tablet.replicator.status().unstorable
    #expect(unstorable.map(\.position) == hostileRows.map(\.0) + [44])
    #expect(unstorable.map(\.id) == hostileRows.map(\.1) + [operatorRow])
    #expect(unstorable.allSatisfy { $0.reason.contains("without its payload") }, "\(unstorable.first!)")
    try tablet.expectHealthy()
    // The phone, which pulled nothing before, passes them too.
    #expect(try await phone.pull().cursor == 44)
  }

  /// A page the server cannot serve in time is asked for again smaller, down to its one row,
  /// and a row that cannot be served alone either is recorded by position and passed, for good:
  /// here an operator's function (the `pull_subjects` a pull calls from server schema version 6)
  /// that never answers for position 3 within the owner's 2 s statement timeout (as a server
  /// before version 4 did for pages of such rows).
  @Test func aPageThatTimesOutShrinksToTheRowAndTheRowIsPassed() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    var bookings: [Booking] = []
    for index in 0..<6 { bookings.append(try await phone.book(restaurant, name: "Guest \(index)")) }
    #expect(try await phone.push().pushed == 6)
    try fixture.superuser(
      """
      ALTER ROLE \(ada.role) SET statement_timeout = '2s';
      CREATE OR REPLACE FUNCTION eventlog_api.pull_subjects(
        p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
      RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
        pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
        metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text,
        subjects text)
      LANGUAGE plpgsql VOLATILE SET search_path = '' AS $$
      BEGIN
        IF p_after < 3 AND p_after + p_limit >= 3 THEN
          PERFORM pg_catalog.pg_sleep(30);
        END IF;
        RETURN QUERY SELECT * FROM eventlog.pull_subject_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms);
      END $$;
      """)
    var options = Device.quickOptions
    options.pullPageSize = 8
    options.retryFor = .seconds(5)
    let tablet = try Device(ada, options: options)
    try await tablet.addRestaurant(id: restaurant)
    let retries = Counter()
    let pulled = try await tablet.replicator.pull(onRetry: { _, _ in retries.add() })
    #expect(pulled.pulled == 5 && pulled.unreadable == 1 && pulled.cursor == 6, "\(pulled)")
    let lost = bookings[2].id
    #expect(Set(try await tablet.allBookings().map(\.id)) == Set(bookings.map(\.id)).subtracting([lost]))
    let unstorable = try tablet.replicator.status().unstorable
    #expect(unstorable.map(\.position) == [3] && unstorable.first?.id == nil, "\(unstorable)")
    #expect(unstorable.first?.reason.contains("could not serve this row in time") == true)
    // Pages of 8 and 4, then 3 (after a page of 2), then the row alone three times.
    #expect(retries.value >= 5, "\(retries.value) retries")
    try tablet.expectHealthy()
  }

  /// A long poll holds its request's transaction: an owner holds at most two at once, a third
  /// answers at once with what there is, and a wait whose backend dies (killed, or its client
  /// gone) gives its slot back with its transaction. Another owner's waits are its own. The
  /// waits are held in open transactions here, as a poll holds its slot until its transaction
  /// ends, so that nothing depends on timing; the owner's free slots are counted with `SKIP
  /// LOCKED` as the function takes them.
  @Test func waitsOfAnOwnerAreBoundedAndFreedWhenTheirBackendDies() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let bob = try fixture.customer("bob")
    let superuser = try connection(fixture.server.url(database: fixture.database))
    func freeSlots(_ customer: Customer) throws -> Int {
      try superuser.query(
        """
        SELECT count(*) AS n FROM (
          SELECT 1 FROM eventlog.owner_waits
          WHERE owner = 'role:' || (SELECT oid FROM pg_roles WHERE rolname = $1)::text
          FOR UPDATE SKIP LOCKED) free
        """, [.text(customer.role)], purpose: "count the free slots"
      ).integer(0, "n", as: Int.self)
    }
    let poll = "SELECT count(*) AS n FROM eventlog_api.pull(0, NULL, 1, 1024, $1)"
    // An owner's first wait makes its slots, and answers at once.
    for customer in [ada, bob] {
      try connection(customer.url).query(poll, [.integer(10_000)], purpose: "a first wait")
      #expect(try freeSlots(customer) == 2)
    }
    // Two waits of Ada's, their transactions still open.
    var holders: [PostgresConnection] = []
    for index in 0..<2 {
      let holder = try connection(ada.url)
      try holder.execute("BEGIN", purpose: "hold a wait")
      try holder.query(poll, [.integer(100)], purpose: "wait \(index + 1)")
      holders.append(holder)
    }
    #expect(try freeSlots(ada) == 0)
    // A third answers at once: under a statement timeout of 3 s, a wait of 10 s would fail.
    let third = try connection(ada.url)
    try third.execute("SET statement_timeout = '3s'", purpose: "bound the third wait")
    let answered = try third.query(poll, [.integer(10_000)], purpose: "a third wait")
    #expect(try answered.integer(0, "n") == 0)
    // Bob's waits are his own.
    let bobs = try connection(bob.url)
    try bobs.execute("BEGIN", purpose: "hold bob's wait")
    try bobs.query(poll, [.integer(100)], purpose: "bob's wait")
    #expect(try freeSlots(bob) == 1)
    try bobs.execute("COMMIT", purpose: "end bob's wait")

    // A killed backend's transaction ends, and its slot with it; so does a committed one's.
    let pid = try holders[0].query("SELECT pg_backend_pid() AS pid", purpose: "the holder's backend")
      .integer(0, "pid")
    try superuser.query("SELECT pg_terminate_backend($1)", [.integer(pid)], purpose: "kill a waiter")
    var freed = 0
    for _ in 0..<250 where freed < 1 {
      freed = try freeSlots(ada)
      if freed < 1 { try await Task.sleep(for: .milliseconds(20)) }
    }
    #expect(freed == 1)
    try holders[1].execute("COMMIT", purpose: "end the second wait")
    #expect(try freeSlots(ada) == 2 && freeSlots(bob) == 2)
  }
}
