import EventLog
import Foundation
import PostgRESTTestSupport
import PostgresTestSupport
import Replication
import ReplicationSupabase
import RestaurantBooking
import Synchronization
import TestKit
import Testing

extension SupabaseReplication {
  /// Issue 28, finding 4: one push under another user's token (a shared device, a token file
  /// someone else can write) stored the device's offline bookings in that user's log, for good,
  /// and exited 0. A device now records the owner it replicates as at its first contact, refuses
  /// another before anything is sent or marked, and moves only with `remote reassign`.
  @Suite("A device replicates as one owner")
  struct OwnerTests {
    static func owner(_ user: UUID) -> String { "user:\(user.lowercasedString)" }

    @Test("the owner is recorded at first contact; another user's session is refused, naming both")
    func anotherUsersSessionIsRefused() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let restaurant = try await phone.addRestaurant()
      try await phone.book(restaurant, name: "Alice")
      #expect(try phone.replicator.status().owner == nil)
      #expect(try await phone.replicator.push().pushed == 1)
      #expect(try phone.replicator.status().owner == Self.owner(alice))
      try await phone.book(restaurant, name: "Alice, offline")
      let before = try phone.replicator.status()

      // The same environment with Bob's session.
      let asBob = Replicator(
        store: phone.store, transport: try api.transport(Tokens(api.token(bob))),
        options: APIDevice.quickOptions)
      api.standIn.clearLog()
      let calls: [(String, @Sendable () async throws -> Void)] = [
        ("push", { _ = try await asBob.push() }), ("pull", { _ = try await asBob.pull() }),
      ]
      for (name, call) in calls {
        let error = await #expect(throws: ReplicationError.self, "\(name)") { try await call() }
        guard case .ownerMismatch(_, let recorded, let found)? = error else {
          Issue.record("\(name): expected ownerMismatch, got \(String(describing: error))")
          continue
        }
        #expect(recorded == Self.owner(alice) && found == Self.owner(bob), "\(name)")
        let text = String(describing: error ?? .noDevice(path: ""))
        #expect(
          text.contains(Self.owner(alice)) && text.contains(Self.owner(bob))
            && text.contains("eventlog remote reassign"), "\(text)")
      }
      // Bob's session was asked whose it is, and carried nothing else.
      #expect(api.standIn.requests.map(\.function) == ["server_info", "server_info"])
      #expect(try api.serverEventIDs(of: bob).isEmpty)
      #expect(try api.serverEventIDs(of: alice).count == 1)
      let after = try phone.replicator.status()
      #expect(
        after.owner == Self.owner(alice) && after.pending == 1 && after.pushedThrough == before.pushedThrough)
      #expect(after.cursor == before.cursor && after.rejected.isEmpty)
      // Alice's session goes on as before.
      #expect(try await phone.replicator.push().pushed == 1)
      #expect(try api.serverEventIDs(of: alice).count == 2)
    }

    @Test("a token that turns into another user's mid-push stops the push before it carries anything")
    func aTokenThatChangesHandsMidPush() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let restaurant = try await phone.addRestaurant()
      try await phone.book(restaurant)
      _ = try await phone.replicator.push()
      for index in 0..<3 { try await phone.book(restaurant, name: "Offline \(index)") }

      // The first token is Alice's, every later one Bob's: a token file rewritten between two reads.
      let switching = Replicator(
        store: phone.store, transport: try api.transport(Tokens(api.token(alice), api.token(bob))),
        options: APIDevice.quickOptions)
      api.standIn.clearLog()
      let error = await #expect(throws: ReplicationError.self) { try await switching.push() }
      guard case .ownerMismatch(_, Self.owner(alice), Self.owner(bob))? = error else {
        Issue.record("expected ownerMismatch, got \(String(describing: error))")
        return
      }
      let bobs = api.standIn.requests.filter { $0.subject == bob.lowercasedString }
      #expect(bobs.map(\.function) == ["server_info"], "\(bobs.map(\.function))")
      #expect(try api.serverEventIDs(of: bob).isEmpty)
      let status = try phone.replicator.status()
      #expect(status.pending == 3 && status.owner == Self.owner(alice), "\(status)")
    }

    @Test("live: a session that changes hands while watching stops the watch; nothing goes to the other user")
    func aWatchWhoseSessionChangesHands() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let session = Session(api.token(alice))
      let transport = try SupabaseTransport(
        projectURL: api.url, apiKey: api.anonKey, requestTimeout: .seconds(20), longPollWait: .seconds(1)
      ) { _ in session.token }
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let live = Replicator(store: phone.store, transport: transport, options: APIDevice.quickOptions)
      let restaurant = try await phone.addRestaurant()
      try await phone.book(restaurant, name: "Alice")
      let stop = StopFlag()
      defer { stop.set() }
      let watching = Task { try await live.watch(shouldStop: { stop.isSet }) }
      try await waitFor("the first round's push") { try api.serverEventIDs(of: alice).count == 1 }

      session.token = api.token(bob)
      try await phone.book(restaurant, name: "Alice, after the switch")
      let ended = await waitForEnd(of: watching, within: .seconds(60))
      if !ended { stop.set() }
      let result = await watching.result
      guard case .failure(let error) = result,
        case .ownerMismatch(_, let recorded, let found)? = error as? ReplicationError
      else {
        Issue.record("expected the watch to stop with ownerMismatch, got \(result)")
        return
      }
      #expect(recorded == Self.owner(alice) && found == Self.owner(bob))
      #expect(try api.serverEventIDs(of: bob).isEmpty)
      #expect(try api.serverEventIDs(of: alice).count == 1)
      #expect(try phone.replicator.status().pending == 1)
    }

    // MARK: The command line

    func device(environment: [String: String] = [:]) -> CommandLineDevice {
      SupabaseCommandLineTests.device(label: "cli-owner", environment: environment)
    }

    @Test("the command line: another user's token exits 1 naming both; remote reassign moves the device")
    func commandLine() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      let asAlice = ["EVENTLOG_ACCESS_TOKEN": api.token(alice)]
      let asBob = ["EVENTLOG_ACCESS_TOKEN": api.token(bob)]
      try phone.book("Alice")
      #expect(try phone("push", url, environment: asAlice).status == 0)
      let second = try phone.book("Alice, offline")

      // Bob's token: refused before anything is sent, naming both owners and the way out.
      for command in [["push", url], ["pull", url], ["replicate", url]] {
        let run = try phone.run(command, environment: asBob)
        #expect(run.status == 1, "\(command): \(run)")
        #expect(
          run.stderr.contains(Self.owner(alice)) && run.stderr.contains(Self.owner(bob))
            && run.stderr.contains("eventlog remote reassign URL --to \(Self.owner(bob))"),
          "\(command): \(run)")
      }
      #expect(try api.serverEventIDs(of: bob).isEmpty)
      let status = try phone.json("remote", "status", "--json")
      #expect(status["owner"] as? String == Self.owner(alice) && status["pending"] as? Int == 1, "\(status)")
      let view = try phone("remote", "status", url, environment: asBob)
      #expect(view.status == 0 && view.stdout.contains("push and pull refuse"), "\(view)")

      // A reassign to an owner the token is not for changes nothing.
      let wrong = try phone("remote", "reassign", url, "--to", Self.owner(UUID()), environment: asBob)
      #expect(wrong.status == 1 && wrong.stderr.contains(Self.owner(bob)), "\(wrong)")
      #expect(try phone.json("remote", "status", "--json")["owner"] as? String == Self.owner(alice))
      let help = try phone("remote", "reassign", "--help")
      #expect(help.status == 0 && help.stdout.contains("the event ID is taken"), "\(help)")
      let missing = try phone("remote", "reassign", url, environment: asBob)
      #expect(missing.status == 64 && missing.stderr.contains("--to"), "\(missing)")

      // To Bob: the offline booking goes to Bob; the one Alice's log holds is refused and listed.
      let moved = try phone.run(
        ["remote", "reassign", url, "--to", Self.owner(bob), "--json"], environment: asBob)
      #expect(moved.status == 0, "\(moved)")
      let answer = try #require(
        try JSONSerialization.jsonObject(with: Data(moved.stdout.utf8)) as? [String: Any])
      #expect(answer["owner"] as? String == Self.owner(bob) && answer["changed"] as? Bool == true)
      #expect(answer["previousOwner"] as? String == Self.owner(alice), "\(answer)")
      let push = try #require(answer["push"] as? [String: Any])
      #expect(push["pushed"] as? Int == 1 && push["rejected"] as? Int == 1, "\(push)")
      let refused = try #require(answer["refused"] as? [[String: Any]])
      #expect(
        refused.count == 1 && (refused.first?["reason"] as? String)?.contains("the event ID is taken") == true
      )
      let onBobsLog = try api.query(
        "SELECT stream FROM eventlog.events WHERE owner = $1", [.text(Self.owner(bob))]
      ) { rows in try (0..<rows.count).map { try rows.string($0, "stream") } }
      #expect(
        onBobsLog == [RestaurantBookingStreams.booking(try #require(UUID(uuidString: second))).rawValue])
      #expect(try api.serverEventIDs(of: alice).count == 1, "what it pushed as Alice stays with Alice")

      // From here on Bob's token works, and Alice's is refused.
      #expect(try phone("push", url, environment: asBob).status == 0)
      #expect(try phone("push", url, environment: asAlice).status == 1)
      let again = try phone("remote", "reassign", url, "--to", Self.owner(bob), environment: asBob)
      #expect(again.status == 0 && again.stdout.contains("nothing changed"), "\(again)")
    }

  }
}

/// An access token that a test changes while a transport uses it.
final class Session: Sendable {
  private let current: Mutex<String>
  init(_ token: String) { current = Mutex(token) }
  var token: String {
    get { current.withLock { $0 } }
    set { current.withLock { $0 = newValue } }
  }
}

/// Waits until `task` ends, for at most `limit`; whether it did.
func waitForEnd<T: Sendable>(of task: Task<T, any Error>, within limit: Duration) async -> Bool {
  let ended = StopFlag()
  let watcher = Task {
    _ = await task.result
    ended.set()
  }
  defer { watcher.cancel() }
  let deadline = ContinuousClock.now + limit
  while ContinuousClock.now < deadline {
    if ended.isSet { return true }
    try? await Task.sleep(for: .milliseconds(50))
  }
  return false
}
