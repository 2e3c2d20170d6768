import EventLog
import Foundation
import PostgRESTTestSupport
import Postgres
import Replication
import ReplicationSupabase
import RestaurantBooking
import Sodium
import TestKit
import Testing

extension SupabaseReplication {
  /// Server schema version 5 through Supabase's API: heads attested by pushes, the server's chain
  /// recomputed from what `pull_chained` answers as JSON, and `verify --remote`'s checks.
  @Suite("Anchoring the chain through Supabase's API")
  struct AnchorAPITests {
    @Test func pushPullAndVerifyThroughTheAPI() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let alice = UUID()
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let tablet = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let restaurant = try await phone.addRestaurant()
      // Text the JSON answers escape: the chain covers the server's text, which must come back
      // byte for byte.
      try await phone.book(restaurant, name: "Zoë \"Quote\" \\ 🍝\ttab")
      try await phone.book(restaurant, name: "Ada")
      #expect(try await phone.replicator.push().pushed == 2)
      _ = try await phone.replicator.pull()
      _ = try await tablet.replicator.pull()

      let device = try #require(phone.store.deviceID)
      let heads = try await phone.transport.attestedHeads(device: device, after: 0, limit: 10)
      let key = try await phone.replicator.deviceCredentials().key
      let chain = try phone.store.event(at: 3)?.chain
      #expect(heads.map(\.sequence) == [3] && heads.first?.head == chain)
      #expect(heads.first?.keyHash == SHA256.hash(Array(key.utf8)) && heads.first?.serverPosition == 2)
      #expect(try phone.replicator.status().serverHead?.position == 2)
      #expect(try tablet.replicator.status().serverHead == phone.replicator.status().serverHead)
      for device in [phone, tablet] {
        let report = try await device.replicator.verifyRemote()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.checked.chainRecomputed == 2 && report.checked.matched == 2)
      }
      #expect(
        Set(api.standIn.requests.compactMap(\.function)).isSuperset(of: [
          "pull_chained", "attested_heads", "push",
        ]))

      // The tables' owner edits a row: every device that checks sees the chain break there.
      let connection = try PostgresConnection(PostgresConfiguration(url: api.project.ownerURL))
      defer { connection.close() }
      try connection.execute(
        """
        ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
        UPDATE eventlog.events SET payload = jsonb_set(payload, '{partySize}', '12') WHERE position = 1;
        ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
        """, purpose: "edit a row as the tables' owner")
      let report = try await tablet.replicator.verifyRemote()
      #expect(report.kinds == [.chainBroken, .contentDiffers], "\(report.problems)")
      #expect(report.problems.first { $0.kind == .chainBroken }?.position == 1)
    }
  }
}

extension RemoteVerificationReport {
  /// The kinds of the differences found.
  var kinds: Set<Kind> { Set(problemCounts.keys) }
}
