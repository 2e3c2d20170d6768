import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Sodium
import TestKit
import Testing

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// Server schema version 5 (issue 29 item 2): heads attested by pushes, the server's own chain,
/// provenance through the server, the server's head recorded by pulls, positions kept locally,
/// and `verify --remote` catching what a forger does on either side.
@Suite("Anchoring the chain", .needsPostgres)
struct AnchorTests {
  /// A phone that books three tables and pushes them, then pulls them back.
  static func phoneWithPushedBookings(
    _ fixture: ServerFixture, _ customer: Customer, count: Int = 3
  ) async throws -> (Device, [Booking]) {
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    var bookings: [Booking] = []
    for index in 0..<count { bookings.append(try await phone.book(restaurant, name: "Guest \(index)")) }
    #expect(try await phone.push().pushed == count)
    _ = try await phone.pull()
    return (phone, bookings)
  }

  @Test func aPushAttestsTheDevicesHeadAndThePullRecordsTheServersChain() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    let head = try phone.store.head()
    let chainAtHead = try #require(try phone.store.event(at: head)?.chain)

    // The server keeps the head, under the device's key, with its own position and chain then.
    let heads = try await phone.transport.attestedHeads(
      device: try #require(phone.store.deviceID), after: 0, limit: 10)
    let key = try await phone.replicator.deviceCredentials().key
    #expect(heads.map(\.sequence) == [head] && heads.map(\.head) == [chainAtHead], "\(heads)")
    #expect(heads.first?.keyHash == SHA256.hash(Array(key.utf8)))
    #expect(heads.first?.serverPosition == 3)

    // Each row: chained, pushed by the phone, its origin the phone's own record.
    let rows = try asTableOwner(
      fixture,
      """
      SELECT position, origin_device, origin_sequence, pushed_by, pushed_sequence, encode(chain, 'hex') AS chain
      FROM eventlog.events ORDER BY position
      """)
    #expect(rows.count == 3)
    let device = try #require(phone.store.deviceID)
    for row in 0..<rows.count {
      #expect(try rows.uuid(row, "pushed_by") == device && rows.uuid(row, "origin_device") == device)
      #expect(try rows.integer(row, "pushed_sequence") == rows.integer(row, "origin_sequence"))
    }
    #expect(heads.first?.serverHead.hex == (try rows.string(2, "chain")))

    // The pull recorded the server's chain at its cursor, and every event's position.
    let status = try phone.replicator.status()
    #expect(
      status.serverHead
        == ServerChainHead(position: 3, value: try #require(ChainValue(hex: try rows.string(2, "chain")))))
    let order = try phone.replicator.local.serverOrder()
    #expect(order.map(\.position) == [1, 2, 3] && order.map(\.sequence) == [2, 3, 4], "\(order)")
    #expect(try phone.replicator.local.position(ofLocalSequence: 3) == 2)
    #expect(try phone.replicator.local.position(ofLocalSequence: 1) == nil, "the catalog is not replicated")

    // A tablet's pull learns the same, and the check passes for both.
    let tablet = try Device(ada)
    _ = try await tablet.pull()
    #expect(try tablet.replicator.local.serverOrder().map(\.position) == [1, 2, 3])
    #expect(try tablet.replicator.status().serverHead == status.serverHead)
    for device in [phone, tablet] {
      let report = try await device.replicator.verifyRemote()
      #expect(report.isClean, "\(report.problems)")
      #expect(
        report.checked.serverEvents == 3 && report.checked.matched == 3 && report.checked.chainRecomputed == 3
      )
    }
    let phoneReport = try await phone.replicator.verifyRemote()
    #expect(phoneReport.checked.attestedHeads == 1 && phoneReport.checked.ownEvents == 3)
  }

  @Test func aRecordEditedAndTheChainRecomputedPassesVerifyButNotTheAttestedHead() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    let edited = try #require(try phone.store.event(at: 3)).id
    let directory = phone.directory
    await phone.store.close()
    // The booking at seq 3 gets another origin (not a field any projection reads), and every
    // record from there on a chain value and a checksum that fit.
    try ForgedLog(directory.environment()).rewrite(3) { ForgedLog.replace("test", with: "tezt", in: &$0) }
    let forged = try Device(ada, at: directory)
    let local = try forged.store.verify()
    #expect(local.isClean, "\(local.problems)")
    let report = try await forged.replicator.verifyRemote()
    #expect(report.kinds == [.attestedHeadDiffers, .contentDiffers], "\(report.problems)")
    let attested = try #require(report.problems.first { $0.kind == .attestedHeadDiffers })
    #expect(
      attested.sequence == 4 && attested.problem.contains("its history up to seq 4 was changed"),
      "\(attested)")
    let content = try #require(report.problems.first { $0.kind == .contentDiffers })
    #expect(content.id == edited && content.problem.contains("metadata"), "\(content)")
  }

  @Test func theNewestPushedEventRemovedLocallyIsMissingHereAndUnderItsAttestedHead() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    let removed = try #require(try phone.store.event(at: 4))
    let directory = phone.directory
    await phone.store.close()
    try ForgedLog(directory.environment()).removeLast()
    let forged = try Device(ada, at: directory)
    #expect(try forged.store.head() == 3)
    let report = try await forged.replicator.verifyRemote()
    #expect(report.kinds == [.missingHere, .attestedHeadDiffers], "\(report.problems)")
    let missing = try #require(report.problems.first { $0.kind == .missingHere })
    let device = try #require(forged.store.deviceID).lowercasedString
    #expect(
      missing.problem
        == "the server holds device \(device)'s seq 4 (id \(removed.id.lowercasedString), position 3); this environment does not",
      "\(missing)")
    let attested = try #require(report.problems.first { $0.kind == .attestedHeadDiffers })
    #expect(
      attested.problem.contains("this environment has no event at seq 4 (its last is seq 3)"), "\(attested)")
  }

  @Test func aServerRowEditedWithTheTriggerDisabledBreaksTheServersChain() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    try asTableOwner(
      script: """
        ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
        UPDATE eventlog.events SET payload = jsonb_set(payload, '{customerName}', '"Mallory"') WHERE position = 2;
        ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
        """, fixture)
    let report = try await phone.replicator.verifyRemote()
    #expect(report.kinds == [.chainBroken, .contentDiffers], "\(report.problems)")
    let broken = try #require(report.problems.first { $0.kind == .chainBroken })
    #expect(broken.position == 2 && broken.problem.contains("the row was changed after it was chained"))
    #expect(report.problems.first { $0.kind == .contentDiffers }?.problem.contains("payload") == true)
    #expect(report.problemCounts[.chainBroken] == 1, "the walk goes on from the value the server holds")
  }

  @Test func aServerRowEditedAndItsChainRecomputedNoLongerMatchesTheHeadsDevicesRecorded() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    let encoding = ServerSchema.storedRowEncoding(
      "x", pushedBy: "x.pushed_by", pushedSequence: "x.pushed_sequence", metadataText: "x.metadata::text",
      payloadText: "x.payload::text")
    // The owner of the tables rewrites a row and the chain from it on, as a careful forger would.
    try asTableOwner(
      script: """
        ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
        UPDATE eventlog.events SET payload = jsonb_set(payload, '{customerName}', '"Mallory"') WHERE position = 2;
        UPDATE eventlog.events e SET chain = c.chain FROM (
          SELECT x.owner, x.position, eventlog.chain(\(ServerSchema.genesis), \(encoding))
            OVER (PARTITION BY x.owner ORDER BY x.position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS chain
          FROM eventlog.events x) c
        WHERE e.owner = c.owner AND e.position = c.position;
        ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
        """, fixture)
    #expect(try asTableOwner(fixture, ServerSchema.chainBreaksSQL).integer(0, "breaks") == 0)
    let report = try await phone.replicator.verifyRemote()
    #expect(
      report.kinds == [.contentDiffers, .serverHeadChanged, .attestationServerHeadDiffers],
      "\(report.problems)")
    let changed = try #require(report.problems.first { $0.kind == .serverHeadChanged })
    #expect(changed.position == 3 && changed.problem.contains("its rows and its chain"), "\(changed)")
    // A device that never pulled before the edit has nothing to hold it against but the content.
    let tablet = try Device(ada)
    _ = try await tablet.pull()
    #expect(try await tablet.replicator.verifyRemote().isClean)
  }

  @Test func aServerRowRemovedIsMissingOnTheServer() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    try asTableOwner(
      script: """
        ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
        DELETE FROM eventlog.events WHERE position = 3;
        ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
        """, fixture)
    let report = try await phone.replicator.verifyRemote()
    #expect(
      report.kinds == [.missingOnServer, .serverHeadChanged, .attestationServerHeadDiffers],
      "\(report.problems)")
    #expect(report.problems.first { $0.kind == .missingOnServer }?.sequence == 4)
  }

  /// A restored device's history differs at sequences it attested before: the server records the
  /// new head beside the old (it cannot tell a restore from a rewrite), and the check reports the
  /// old one, saying that a later head at that sequence matches.
  @Test func aDeviceRestoredFromAnOlderCopyAttestsANewHeadBesideTheOld() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    let restaurant = try await phone.addRestaurant()
    _ = try await phone.book(restaurant, name: "First")
    #expect(try await phone.push().pushed == 1)
    let copy = TemporaryDirectory("restored")
    await phone.store.close()
    try FileManager.default.copyItem(atPath: phone.directory.environment(), toPath: copy.environment())
    let before = try Device(ada, at: phone.directory)
    _ = try await before.book(restaurant, name: "Lost")
    #expect(try await before.push().pushed == 1)
    await before.store.close()

    let restored = try Device(ada, at: copy)
    _ = try await restored.book(restaurant, name: "After the restore")
    let push = try await restored.push()
    #expect(push.pushed == 1 && push.alreadyStored == 1, "\(push)")
    _ = try await restored.pull()
    let heads = try await restored.transport.attestedHeads(
      device: try #require(restored.store.deviceID), after: 0, limit: 10)
    #expect(heads.map(\.sequence) == [2, 3, 3], "\(heads)")
    let report = try await restored.replicator.verifyRemote()
    #expect(report.kinds == [.attestedHeadDiffers], "\(report.problems)")
    let old = try #require(report.problems.first)
    #expect(old.sequence == 3 && old.problem.contains("a later head attested at seq 3 matches"), "\(old)")
    #expect(report.checked.matched == 3, "the lost booking came back with the pull")
  }

  @Test func aHeadAttestedForThisDevicesIDUnderAnotherKeyIsReported() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    let event = try #require(try phone.store.event(at: 2))
    // A co-device of the owner pushes under the phone's ID with a key of its own.
    let impostor = DeviceCredentials(
      id: try #require(phone.store.deviceID), key: DeviceCredentials.random().key)
    _ = try await phone.transport.push(
      [try phone.outgoing(event)], device: impostor, through: 2,
      head: ChainValue(bytes: [UInt8](repeating: 7, count: 32)))
    let report = try await phone.replicator.verifyRemote()
    #expect(report.kinds == [.foreignAttestation], "\(report.problems)")
    #expect(report.problems.first?.sequence == 2)
  }

  @Test func eachEventsOriginTravelsThroughTheServerAndThePushingDeviceIsKept() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let laptop = try Device(ada)
    let restaurant = try await laptop.addRestaurant()
    // An event recorded on another device, as an import loads it: its record keeps that origin.
    let elsewhere = UUID()
    let bookingID = UUID()
    var booking = try NewEvent(
      BookingCreated(
        bookingID: bookingID, restaurantID: restaurant, restaurantName: "Pasta Palace",
        date: Date(timeIntervalSince1970: 1_900_000_000), partySize: 2, customerID: testCustomerID,
        customerName: "Imported", notes: nil,
        createdAt: Date(timeIntervalSince1970: 1_800_000_000)))
    booking.recordedAt = Date(timeIntervalSince1970: 1_800_000_000)
    let stream = RestaurantBookingStreams.booking(bookingID)
    _ = try await laptop.store.ingest([
      EventStore.IngestedEvent(
        stream: stream, event: booking, provenance: RecordedEvent.Provenance(device: elsewhere, sequence: 41))
    ])
    #expect(try await laptop.push().pushed == 1)
    let rows = try asTableOwner(
      fixture, "SELECT origin_device, origin_sequence, pushed_by, pushed_sequence FROM eventlog.events")
    #expect(try rows.uuid(0, "origin_device") == elsewhere && rows.integer(0, "origin_sequence") == 41)
    #expect(try rows.uuid(0, "pushed_by") == laptop.store.deviceID && rows.integer(0, "pushed_sequence") == 2)
    let tablet = try Device(ada)
    try await tablet.addRestaurant(id: restaurant)
    _ = try await tablet.pull()
    #expect(
      try tablet.store.event(at: 2)?.provenance == RecordedEvent.Provenance(device: elsewhere, sequence: 41))
    #expect(try await tablet.replicator.verifyRemote().isClean)
    #expect(try await laptop.replicator.verifyRemote().isClean)
  }

  @Test func pushedOriginsAndHeadsAreCheckedLikeEveryOtherField() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let phone = try Device(ada)
    _ = try await phone.book(try await phone.addRestaurant())
    let event = try #require(try phone.store.event(at: 2))
    var zeros = try phone.outgoing(event)
    zeros.provenance = RecordedEvent.Provenance(
      device: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), sequence: 3)
    var none = try phone.outgoing(event)
    none.provenance = RecordedEvent.Provenance(device: UUID(), sequence: 0)
    for crafted in [zeros, none] {
      let outcomes = try await phone.transport.push([crafted], device: .random(), through: 2)
      guard case .refused(let reason) = outcomes.first else {
        Issue.record("\(outcomes)")
        continue
      }
      #expect(reason.contains(#""device" (a UUID, not all zeros) and "deviceSeq" (1 or more) go together"#))
    }
    // One of the two alone.
    let sql = try PostgresConnection(PostgresConfiguration(url: ada.url))
    defer { sql.close() }
    let alone = try sql.query(
      """
      SELECT outcome, reason FROM eventlog_api.push(gen_random_uuid(), repeat('k', 64), 1,
        jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'seq', 1, 'stream', 'booking-x', 'type', 'T',
          'schemaVersion', 1, 'payload', '{}'::jsonb, 'recordedAt', 0, 'metadata', jsonb_build_object('origin', ''),
          'device', gen_random_uuid())))
      """, purpose: "push a device without its sequence")
    #expect(try alone.string(0, "outcome") == "refused")
    for head in ["xyz", String(repeating: "A", count: 64), String(repeating: "0", count: 63)] {
      #expect(throws: PostgresError.self) {
        try sql.query(
          "SELECT * FROM eventlog_api.push(gen_random_uuid(), repeat('k', 64), 1, '[]'::jsonb, $1)",
          [.text(head)],
          purpose: "push a malformed head")
      }
    }
    #expect(throws: PostgresError.self, "a head needs a mark of 1 or more") {
      try sql.query(
        "SELECT * FROM eventlog_api.push(gen_random_uuid(), repeat('k', 64), 0, '[]'::jsonb, repeat('0', 64))",
        purpose: "push a head at 0")
    }
  }

  @Test func attestedHeadsAreAppendOnlyAndAnOperatorsRowIsChained() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    for change in [
      "UPDATE eventlog.attested_heads SET sequence = 1", "DELETE FROM eventlog.attested_heads",
      "TRUNCATE eventlog.attested_heads",
    ] {
      #expect(throws: PostgresError.self, "\(change)") { try asTableOwner(fixture, change) }
    }
    // An operator's row, without a chain value: the trigger chains it after the row before.
    _ = try asTableOwner(
      fixture,
      """
      INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
        schema_version, payload, metadata, recorded_at)
      SELECT owner, 4, gen_random_uuid(), gen_random_uuid(), 1, stream, 'BookingNote', 1, '{"n": 1}',
        '{"origin": "operator"}', now()
      FROM eventlog.events WHERE position = 3
      """)
    #expect(try asTableOwner(fixture, ServerSchema.chainBreaksSQL).integer(0, "breaks") == 0)
    let before = try await phone.replicator.verifyRemote()
    #expect(before.kinds == [.missingHere], "\(before.problems)")
    #expect(
      before.problems.first?.problem.contains("past this device's pull cursor, position 3: pull first")
        == true)
    _ = try await phone.pull()
    let after = try await phone.replicator.verifyRemote()
    #expect(after.isClean && after.checked.chainRecomputed == 4, "\(after.problems)")
  }

  /// A version 4 server with events is upgraded: its rows are chained once (their origin is the
  /// device that pushed them), older clients' functions still answer, and a device of this build
  /// that replicated with version 4 checks clean, then attests its heads.
  @Test func aVersion4ServerIsChainedByTheUpgradeAndOlderClientsGoOn() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let owner = try PostgresTransport(url: fixture.ownerURL)
    defer { owner.close() }
    _ = try await owner.initializeSchema(
      migrations: Array(ServerSchema.migrations.prefix(4)),
      replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes)
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    #expect(try phone.replicator.status().serverHead == nil, "a version 4 server keeps no chain")
    await #expect(
      throws: ReplicationError.schemaTooOld(server: phone.transport.server, found: 4, required: 5)
    ) {
      _ = try await phone.replicator.verifyRemote()
    }

    let upgrade = try await owner.initializeSchema()
    #expect(upgrade.from == 4 && upgrade.to == ServerSchema.latestVersion)
    #expect(try asTableOwner(fixture, ServerSchema.chainBreaksSQL).integer(0, "breaks") == 0)
    let pushedBy = try asTableOwner(
      fixture, "SELECT count(*) AS n FROM eventlog.events WHERE pushed_by = origin_device")
    #expect(try pushedBy.integer(0, "n") == 3)
    let clean = try await phone.replicator.verifyRemote()
    #expect(clean.isClean && clean.checked.attestedHeads == 0, "\(clean.problems)")

    // A version 4 client's calls: push with four arguments and pull.
    let sql = try PostgresConnection(PostgresConfiguration(url: ada.url))
    defer { sql.close() }
    let old = try sql.query(
      """
      SELECT outcome FROM eventlog_api.push(gen_random_uuid(), repeat('k', 64), 1,
        jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'seq', 1, 'stream', 'booking-x', 'type', 'T',
          'schemaVersion', 1, 'payload', '{}'::jsonb, 'recordedAt', 0, 'metadata', jsonb_build_object('origin', ''))))
      """, purpose: "push as a version 4 client")
    #expect(try old.string(0, "outcome") == "stored")
    #expect(
      try sql.query("SELECT count(*) AS n FROM eventlog_api.pull(0, NULL, 100, 1048576, 0)", purpose: "pull")
        .integer(0, "n") == 4)
    #expect(try asTableOwner(fixture, ServerSchema.chainBreaksSQL).integer(0, "breaks") == 0)

    _ = try await phone.book(try await phone.addRestaurant())
    #expect(try await phone.push().pushed == 1)
    _ = try await phone.pull()
    let anchored = try await phone.replicator.verifyRemote()
    #expect(
      anchored.isClean && anchored.checked.attestedHeads == 1 && anchored.checked.serverEvents == 5,
      "\(anchored.problems)")
    #expect(try phone.replicator.status().serverHead?.position == 5)
  }

  @Test func resyncAndReassignForgetTheServerHeadAndThePositions() async throws {
    let fixture = try await ServerFixture()
    let ada = try fixture.customer("ada")
    let (phone, _) = try await Self.phoneWithPushedBookings(fixture, ada)
    #expect(try phone.replicator.local.serverOrder().count == 3)
    try await phone.replicator.resync()
    #expect(try phone.replicator.status().serverHead == nil)
    #expect(
      try phone.replicator.local.serverOrder().isEmpty
        && phone.replicator.local.position(ofLocalSequence: 2) == nil)
    _ = try await phone.push()
    _ = try await phone.pull()
    #expect(try phone.replicator.local.serverOrder().map(\.sequence) == [2, 3, 4])
    #expect(try phone.replicator.local.serverOrder(after: 1, limit: 1).map(\.position) == [2])
    #expect(try await phone.replicator.verifyRemote().isClean)
  }
}
