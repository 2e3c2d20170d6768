import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Testing

/// Issue 28, finding 4, over libpq: a device pushed as whichever role its URL named, so one push
/// with another customer's URL moved its events into that customer's log for good. A device now
/// replicates as the owner it recorded at its first contact, and moves only by `reassign`.
@Suite("A device replicates as one owner (database roles)", .needsPostgres)
struct RoleOwnerTests {
  /// `role:<oid>` of `role`, as the server names its owner.
  static func owner(_ fixture: ServerFixture, _ role: String) throws -> String {
    let connection = try PostgresConnection(
      PostgresConfiguration(url: fixture.server.url(database: fixture.database)))
    defer { connection.close() }
    let rows = try connection.query(
      "SELECT oid::text AS oid FROM pg_roles WHERE rolname = $1", [.text(role)], purpose: "find the role")
    return "role:" + (try rows.string(0, "oid"))
  }

  @Test("another role's URL is refused naming both owners; reassign moves the device, and back")
  func anotherRolesURL() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let bob = try fixture.customer("bob")
    let (aliceOwner, bobOwner) = (try Self.owner(fixture, alice.role), try Self.owner(fixture, bob.role))
    let phone = try Device(alice)
    let restaurant = try await phone.addRestaurant()
    _ = try await phone.book(restaurant, name: "Alice")
    #expect(try await phone.push().pushed == 1)
    #expect(try phone.replicator.status().owner == aliceOwner)
    let offline = try await phone.book(restaurant, name: "Alice, offline")

    let transport = try PostgresTransport(url: bob.url, statementTimeout: .seconds(20))
    defer { transport.close() }
    let asBob = Replicator(store: phone.store, transport: transport, options: Device.quickOptions)
    let calls: [(String, @Sendable () async throws -> Void)] = [
      ("push", { _ = try await asBob.push() }), ("pull", { _ = try await asBob.pull() }),
    ]
    for (name, call) in calls {
      let error = await #expect(throws: ReplicationError.self, "\(name)") { try await call() }
      #expect(
        error == .ownerMismatch(server: transport.server, recorded: aliceOwner, found: bobOwner), "\(name)")
    }
    #expect(try serverEventIDs(fixture, owner: bob.role).isEmpty)
    #expect(try phone.replicator.status().pending == 1)

    // A reassign names the owner it means: another than the URL's changes nothing.
    let refused = await #expect(throws: ReplicationError.self) { try await asBob.reassign(to: aliceOwner) }
    #expect(refused == .reassignRefused(server: transport.server, requested: aliceOwner, found: bobOwner))
    #expect(try phone.replicator.status().owner == aliceOwner)

    // To Bob: the offline booking is stored there; the one Alice's log holds stays there, refused.
    #expect(try await asBob.reassign(to: bobOwner) == aliceOwner)
    let status = try phone.replicator.status()
    #expect(status.owner == bobOwner && status.pushedThrough == 0 && status.cursor == 0, "\(status)")
    let moved = try await asBob.push()
    #expect(moved.pushed == 1 && moved.rejected == 1 && moved.pending == 0, "\(moved)")
    let rejections = try phone.replicator.status().rejected
    #expect(rejections.count == 1 && rejections.first?.reason == "the event ID is taken", "\(rejections)")
    let offlineEvent = try #require(
      try phone.store.events(from: 1).last { $0.stream == RestaurantBookingStreams.booking(offline.id) })
    #expect(try serverEventIDs(fixture, owner: bob.role) == [offlineEvent.id])
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 1, "what it pushed as Alice stays there")
    let asAliceAgain = await #expect(throws: ReplicationError.self) { try await phone.push() }
    #expect(
      asAliceAgain == .ownerMismatch(server: phone.transport.server, recorded: bobOwner, found: aliceOwner))

    // And back to Alice: the first booking is acknowledged (its rejection is no longer shown); the
    // offline one, which Bob's log now holds, is refused.
    #expect(try await phone.replicator.reassign(to: aliceOwner) == bobOwner)
    let back = try await phone.push()
    #expect(back.alreadyStored == 1 && back.rejected == 1 && back.pushed == 0, "\(back)")
    let now = try phone.replicator.status().rejected
    #expect(now.map(\.id) == [offlineEvent.id], "\(now)")
  }

  @Test("a device an older build replicated (marks, no owner) records its owner at its next contact")
  func aDeviceFromAnOlderBuild() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = try Device(alice)
    _ = try await phone.book(try await phone.addRestaurant())
    _ = try await phone.push()
    // As an older build left it: a pushed mark, no owner.
    try await phone.store.updateState([.delete(Array("replication.owner".utf8))])
    #expect(try phone.replicator.status().owner == nil && phone.replicator.status().pushedThrough > 0)
    _ = try await phone.pull()
    #expect(try phone.replicator.status().owner == (try Self.owner(fixture, alice.role)))
  }
}
