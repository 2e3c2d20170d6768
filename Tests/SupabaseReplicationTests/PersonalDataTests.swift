import EventLog
import Foundation
import Postgres
import Replication
import RestaurantBooking
import Testing

extension SupabaseReplication {
  /// Personal data's keys and erasures through the project's HTTPS API (`rpc/push_keys`,
  /// `rpc/pull_keys`, `rpc/pull_subjects`), under the user's isolation.
  @Suite("Personal data through the API")
  struct PersonalDataTests {
    /// The subjects of `user`'s key rows and fences, as the superuser sees them.
    static func personalData(_ api: APIProject, of user: UUID) throws -> (keys: Set<UUID>, fences: Set<UUID>)
    {
      let owner = "user:\(user.lowercasedString)"
      let keys = try api.query("SELECT subject FROM eventlog.subject_keys WHERE owner = $1", [.text(owner)]) {
        rows in try (0..<rows.count).map { try rows.uuid($0, "subject") }
      }
      let fences = try api.query(
        "SELECT subject FROM eventlog.erased_subjects WHERE owner = $1", [.text(owner)]
      ) { rows in try (0..<rows.count).map { try rows.uuid($0, "subject") } }
      return (Set(keys), Set(fences))
    }

    @Test func aBookingIsReadableOnTheOtherDeviceAndAnErasureReachesEveryCopy() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let alice = UUID()
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let laptop = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let tablet = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let booking = try await phone.book(try await phone.addRestaurant(), name: "Ada Lovelace")
      let subject = try #require(booking.customerID)
      #expect(try await phone.replicator.push().keysPushed == 1)
      #expect(try await laptop.replicator.pull().keysStored == 1)
      _ = try await tablet.replicator.pull()
      let pulled = try #require(try await laptop.bookings.getAll().first)
      #expect(pulled.customerName == "Ada Lovelace")
      #expect(pulled.unavailableFields.isEmpty)
      #expect(
        try laptop.store.events(from: 1).first { $0.type == BookingCreated.eventType }?.subjects == [subject])
      let names = try api.query(
        "SELECT count(*) AS n FROM eventlog.events e WHERE e::text LIKE '%Ada Lovelace%'", []
      ) { try $0.integer(0, "n", as: Int.self) }
      #expect(names == 0)
      let staleKey = try #require(try tablet.store.subjectKeys().first)

      _ = try await phone.bookings.forget(customerName: "Ada Lovelace", reason: "asked")
      _ = try await phone.replicator.push()
      let server = try Self.personalData(api, of: alice)
      #expect(server.keys.isEmpty && server.fences == [subject])
      _ = try await laptop.replicator.pull()
      #expect(try laptop.store.subjectKeys().isEmpty)
      #expect(try await laptop.bookings.getAll().first?.erasedFields.contains("customerName") == true)

      // The tablet's stale key is refused; its pull destroys it.
      let refused = try await tablet.transport.pushKeys(
        [SubjectKey(subject: subject, key: staleKey.key, createdAt: staleKey.createdAt)], device: UUID())
      #expect(refused == [.erased])
      _ = try await tablet.replicator.pull()
      #expect(try tablet.store.subjectKeys().isEmpty)
      #expect(try await tablet.bookings.getAll().first?.customerName == nil)
      try laptop.expectHealthy()
      try tablet.expectHealthy()
    }

    @Test func anotherUserCanNeitherReadNorOverwriteTheKeys() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, mallory) = (UUID(), UUID())
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let booking = try await phone.book(try await phone.addRestaurant())
      let subject = try #require(booking.customerID)
      _ = try await phone.replicator.push()
      let original = try #require(try phone.store.subjectKeys().first)
      let intruder = try APIDevice(api, tokens: Tokens(api.token(mallory)))
      #expect(try await intruder.transport.pullKeys(after: 0, limit: 100).isEmpty)
      let forged = SubjectKey(subject: subject, key: Array(repeating: 9, count: 32), createdAt: Date())
      #expect(try await intruder.transport.pushKeys([forged], device: UUID()) == [.stored])
      #expect(try await phone.transport.pullKeys(after: 0, limit: 100).map(\.key.key) == [original.key])
      #expect(try Self.personalData(api, of: alice).keys == [subject])
      #expect(try Self.personalData(api, of: mallory).keys == [subject])
    }
  }
}
