import EventLog
import Foundation
import PostgRESTTestSupport
import Postgres
import Replication
import ReplicationSupabase
import Testing

extension SupabaseReplication {
  /// Issue 28, finding 3: a long poll holds a pooled connection of the API while it waits, and
  /// one user's polls (60 at once, each legitimate) held them all: another user's push failed on
  /// every retry (`504 PGRST003`). The server holds at most two waits of an owner and answers a
  /// third at once; the device then polls no faster than a long poll would.
  @Suite("Waits per user bounded")
  struct WaitBoundTests {
    /// The backends of the stand-in's pool that sleep in a long poll.
    static func waiting(_ api: APIProject) throws -> Int {
      try api.query(
        """
        SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND usename = 'authenticator' AND wait_event = 'PgSleep'
        """, []
      ) { try $0.integer(0, "n", as: Int.self) }
    }

    @Test("one user's 60 long polls leave the pool to another user's push")
    func oneUsersLongPollsDoNotStarveAnother() async throws {
      // A pool of 4, and a request waits 2 s for a connection (PostgREST: 10 s) before its 504.
      let api = try await APIProject { configuration in
        configuration.poolSize = 4
        configuration.acquisitionTimeout = .seconds(2)
      }
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let bobs = try api.transport(Tokens(api.token(bob)), requestTimeout: .seconds(30))
      let start = PullCursor(position: 0, eventID: nil)
      // Bob's first wait makes his slots and answers at once.
      #expect(try await bobs.pull(after: start, limit: 1, maxBytes: 1_024, wait: .milliseconds(500)).isEmpty)
      // 60 long polls of Bob's own log, as many devices would send them (each well within
      // Supabase's 8 s statement timeout for the authenticated role).
      let polls = (0..<60).map { _ in
        Task { try await bobs.pull(after: start, limit: 1, maxBytes: 1_024, wait: .seconds(7)) }
      }
      try await waitFor("Bob's polls waiting on the server") { try Self.waiting(api) >= 2 }

      var options = APIDevice.quickOptions
      // Before version 4 the pool stayed full for the polls' 7 s: the push gave up at 5.
      options.retryFor = .seconds(5)
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)), options: options)
      let booking = try await phone.book(try await phone.addRestaurant())
      let pushed = try await phone.replicator.push()
      #expect(pushed.pushed == 1 && pushed.pending == 0, "\(pushed)")
      #expect(try api.serverEventIDs(of: alice).count == 1)
      // At most two of Bob's polls wait; the others answered at once, with the empty page.
      #expect(try Self.waiting(api) <= 2)
      for poll in polls {
        let rows = try? await poll.value
        #expect(rows?.isEmpty ?? true)
      }
      _ = booking
    }

    @Test("a long poll the server answers at once is not sent again at once")
    func anEarlyEmptyAnswerIsNotRepeatedAtOnce() async throws {
      let api = try await APIProject { $0.poolSize = 4 }
      defer { api.project.stop() }
      let user = UUID()
      let others = try api.transport(Tokens(api.token(user)), requestTimeout: .seconds(30))
      let start = PullCursor(position: 0, eventID: nil)
      _ = try await others.pull(after: start, limit: 1, maxBytes: 1_024, wait: .milliseconds(500))
      // The user's two other devices hold both of the user's waits: their slots stay locked until
      // their transactions end, as here.
      let holder = try PostgresConnection(
        PostgresConfiguration(url: api.project.server.url(database: api.project.database)))
      defer { holder.close() }
      try holder.execute("BEGIN", purpose: "hold the user's waits")
      let held = try holder.query(
        "SELECT slot FROM eventlog.owner_waits WHERE owner = $1 FOR UPDATE",
        [.text("user:\(user.lowercasedString)")], purpose: "lock the user's wait slots")
      #expect(held.count == 2)
      api.standIn.clearLog()
      // This device's long poll waits 2 s; the replicator asks every quarter of a second.
      let device = try api.transport(Tokens(api.token(user)), longPollWait: .seconds(2))
      defer { device.close() }
      let until = ContinuousClock.now + .seconds(3)
      var news = false
      while ContinuousClock.now < until {
        news = try await device.waitForNews(upTo: .milliseconds(250)) || news
      }
      #expect(!news)
      let polls = api.standIn.requests.filter { $0.function == "pull" }
      // At most one poll per 2 s wait (and one more at the edge), not one per quarter second.
      #expect(polls.count <= 3, "\(polls.count) polls in 3 s")
      try holder.execute("COMMIT", purpose: "let the waits go")
    }
  }
}
