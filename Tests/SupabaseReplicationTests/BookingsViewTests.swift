import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import RestaurantBooking
import Testing

extension SupabaseReplication {
  /// The SQL view of a signed-in user's current bookings that `Docs/Replication.md` shows, run as
  /// the page gives it on a database set up by `remote init`, and queried as PostgREST would.
  @Suite("The SQL view of a user's bookings")
  struct BookingsViewTests {
    /// The first `sql` block under "Reading the shared log with SQL" in `Docs/Replication.md`.
    static func viewSQL() throws -> String {
      let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/Replication.md")
      let text = try String(contentsOf: page, encoding: .utf8)
      let section = try #require(text.range(of: "### Reading the shared log with SQL"))
      let start = try #require(text.range(of: "```sql\n", range: section.upperBound..<text.endIndex))
      let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
      return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theViewShowsTheSignedInUsersCurrentBookingsOnly() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      try api.project.server.superuser(
        // As the role that ran `remote init` (Supabase's `postgres`).
        "SET ROLE \"\(api.project.owner)\";\n" + (try Self.viewSQL()), database: api.project.database)
      let (alice, bob) = (UUID(), UUID())
      // Dates of whole seconds: their payloads have a lossless JSON form today (see the page's notes).
      let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_796_000_000) }
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let bookings = EventSourcedBookingRepository(store: phone.store, origin: "test", now: clock)
      let restaurant = try await phone.addRestaurant("Pasta Palace")
      let date = Date(timeIntervalSince1970: 1_800_000_000)
      var made: [String: Booking] = [:]
      for (name, party) in [("Ada", 2), ("Grace", 4), ("Linus", 6)] {
        made[name] = try await bookings.create(
          restaurantID: restaurant, date: date, partySize: party, customerName: name, notes: nil)
      }
      try await bookings.delete(id: try #require(made["Grace"]).id)
      #expect(try await phone.replicator.push().pushed == 4)
      let bobsPhone = try APIDevice(api, tokens: Tokens(api.token(bob)))
      _ = try await EventSourcedBookingRepository(store: bobsPhone.store, origin: "test", now: clock).create(
        restaurantID: try await bobsPhone.addRestaurant("Sushi Bar"), date: date, partySize: 3,
        customerName: "Bob", notes: "window")
      #expect(try await bobsPhone.replicator.push().pushed == 1)

      // The payloads are JSON on the server: SQL reads their fields, and a personal one only sealed
      // (the Base64 of a sealed value: its marker byte 0xFF and version 1 make "/wE").
      let names = try api.query(
        "SELECT payload->>'customerName' AS name FROM eventlog.events WHERE type = 'BookingCreated' ORDER BY 1",
        []
      ) { rows in try (0..<rows.count).map { try rows.string($0, "name") } }
      #expect(names.count == 4 && names.allSatisfy { $0.hasPrefix("/wE") }, "\(names)")
      let restaurants = try api.query(
        "SELECT payload->>'restaurantName' AS name FROM eventlog.events WHERE type = 'BookingCreated' ORDER BY 1",
        []
      ) { rows in try (0..<rows.count).map { try rows.string($0, "name") } }
      #expect(restaurants == ["Pasta Palace", "Pasta Palace", "Pasta Palace", "Sushi Bar"])

      let aliceRows = try rows(api, claims: Self.claims(alice))
      #expect(aliceRows.count == 2, "\(aliceRows)")
      #expect(aliceRows.map(\.party) == ["2", "6"])
      #expect(aliceRows.map(\.id) == [made["Ada"]?.id.lowercasedString, made["Linus"]?.id.lowercasedString])
      #expect(aliceRows.allSatisfy { $0.restaurant == "Pasta Palace" && $0.date == "2027-01-15T08:00:00Z" })
      let bobRows = try rows(api, claims: Self.claims(bob))
      #expect(bobRows.map(\.party) == ["3"] && bobRows.first?.restaurant == "Sushi Bar", "\(bobRows)")
      // Signed in, but another user: nothing; no user at all: nothing; anon: not allowed.
      #expect(try rows(api, claims: Self.claims(UUID())).isEmpty)
      #expect(try rows(api, claims: #"{"role":"authenticated"}"#).isEmpty)
      let anon = #expect(throws: PostgresError.self) {
        try rows(api, role: "anon", claims: #"{"role":"anon"}"#)
      }
      #expect(anon?.sqlState == "42501")
    }

    static func claims(_ user: UUID) -> String {
      #"{"sub":"\#(user.lowercasedString)","role":"authenticated"}"#
    }

    struct Row: CustomStringConvertible {
      var id: String?
      var party: String?
      var restaurant: String?
      var date: String?
      var description: String { "\(id ?? "-") \(party ?? "-") \(date ?? "-")" }
    }

    /// The view's rows in a transaction as PostgREST runs a request: the role, then the claims.
    func rows(_ api: APIProject, role: String = "authenticated", claims: String) throws -> [Row] {
      let connection = try PostgresConnection(
        PostgresConfiguration(url: api.project.server.url(database: api.project.database)))
      defer { connection.close() }
      return try connection.transaction(purpose: "read the view") { () throws(PostgresError) -> [Row] in
        try connection.query(
          "SELECT set_config('role', $1, true), set_config('request.jwt.claims', $2, true)",
          [.text(role), .text(claims)], purpose: "become the request's role")
        let rows = try connection.query(
          """
          SELECT booking_id, party_size::text AS party, restaurant_name, booked_for
          FROM public.my_bookings ORDER BY party_size
          """, purpose: "read the view")
        return try (0..<rows.count).map { (row) throws(PostgresError) -> Row in
          Row(
            id: try rows.value(row, "booking_id"), party: try rows.value(row, "party"),
            restaurant: try rows.value(row, "restaurant_name"), date: try rows.value(row, "booked_for"))
        }
      }
    }
  }
}
