import Foundation
import PostgresTestSupport
import Replication
import RestaurantBooking
import TestKit
import Testing

/// Two apps on one server: the stock `eventlog` (the booking streams) and `user-eventlog` (the
/// user streams), each with its own `remote init`; `remote streams`; a push the server refuses
/// part of (exit 3), and the refused event stored once its prefix is added.
@Suite("several apps on one server", .needsPostgres)
struct SharedServerCommandLineTests {
  static let stock = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  static let users = builtProduct("user-eventlog", override: "USER_EVENTLOG_BINARY")
  /// The prefixes of both apps, sorted as the server lists them.
  static let both = (RestaurantBookingSchema.replicatedStreamPrefixes + ["user-"]).sorted()

  /// The prefixes a `--json` run of `binary` prints (`remote init`, `remote streams`).
  static func prefixes(
    _ binary: String, _ arguments: [String], environment: [String: String] = [:]
  ) throws
    -> [String]?
  {
    let run = try runChild(binary, arguments + ["--json"], environment: environment)
    #expect(run.status == 0, "\(arguments): \(run)")
    let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    return object?["replicatedStreams"] as? [String]
  }

  @Test("each app's remote init adds its prefixes and removes none, in either order")
  func remoteInitAddsInEitherOrder() async throws {
    for (first, second) in [(Self.users, Self.stock), (Self.stock, Self.users)] {
      let fixture = try await ServerFixture(initialized: false)
      // Every app that replicates adds the erasures' prefix too (`subject-`).
      let own =
        first == Self.users ? ["subject-", "user-"] : RestaurantBookingSchema.replicatedStreamPrefixes
      #expect(try Self.prefixes(first, ["remote", "init", fixture.ownerURL]) == own)
      #expect(try Self.prefixes(second, ["remote", "init", fixture.ownerURL]) == Self.both)
      // Again, each: nothing is flipped back.
      #expect(try Self.prefixes(first, ["remote", "init", fixture.ownerURL]) == Self.both)
      let text = try runChild(second, ["remote", "init", fixture.ownerURL])
      #expect(text.status == 0 && text.stdout.contains("up to date"), "\(text)")
      #expect(
        text.stdout.contains(
          "the server replicates the streams starting with: "
            + Self.both.map { "'\($0)'" }.joined(separator: ", ")),
        "\(text)")
    }
  }

  @Test("remote streams lists the prefixes and removes one on request, naming a prefix it lacks")
  func remoteStreamsListsAndRemoves() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let url = fixture.ownerURL
    for binary in [Self.stock, Self.users] {
      #expect(try runChild(binary, ["remote", "init", url]).status == 0)
    }
    #expect(
      try Self.prefixes(Self.stock, ["remote", "streams"], environment: ["EVENTLOG_REMOTE": url]) == Self.both
    )
    let listed = try runChild(Self.stock, ["remote", "streams", "list", url])
    #expect(listed.status == 0 && listed.stdout.contains("'user-'"), "\(listed)")

    // Usage errors: exit 64, nothing changed.
    let help = try runChild(Self.stock, ["remote", "streams", "--help"])
    #expect(help.status == 0 && help.stdout.contains("remove PREFIX"), "\(help)")
    #expect(try runChild(Self.stock, ["remote", "--help"]).stdout.contains("streams"))
    for arguments in [
      ["remote", "streams", "remove"], ["remote", "streams", "frob", url],
      ["remote", "streams", "list", "nope"],
      ["remote", "streams", "list", url, url],
      ["remote", "streams", "remove", "user-", "https://x.supabase.co"],
    ] {
      let run = try runChild(Self.stock, arguments, environment: ["EVENTLOG_REMOTE": url])
      #expect(run.status == 64 && run.stderr.contains("Usage:"), "\(arguments): \(run)")
    }
    let leaky = try runChild(Self.stock, ["remote", "streams", "mysql://me:hunter2pw@host/db"])
    #expect(leaky.status == 64 && !leaky.stderr.contains("hunter2pw"), "\(leaky)")
    let missingPrefix = try runChild(
      Self.stock, ["remote", "streams", "remove"], environment: ["EVENTLOG_REMOTE": url])
    #expect(missingPrefix.stderr.contains("PREFIX"), "\(missingPrefix)")

    // A prefix the server does not hold: exit 1, named.
    let absent = try runChild(Self.stock, ["remote", "streams", "remove", "nope-", url])
    #expect(absent.status == 1 && absent.stderr.contains("'nope-'"), "\(absent)")
    #expect(absent.stderr.contains("nothing was changed"), "\(absent)")
    #expect(try Self.prefixes(Self.stock, ["remote", "streams", url]) == Self.both)

    // The user app removes its own prefix: it is warned that its pushes are refused from now on.
    let removed = try runChild(Self.users, ["remote", "streams", "remove", "user-", url, "--json"])
    #expect(removed.status == 0, "\(removed)")
    let object = try JSONSerialization.jsonObject(with: Data(removed.stdout.utf8)) as? [String: Any]
    #expect(object?["removed"] as? String == "user-")
    #expect(object?["replicatedStreams"] as? [String] == RestaurantBookingSchema.replicatedStreamPrefixes)
    #expect(removed.stderr.contains("warning:") && removed.stderr.contains("'user-'"), "\(removed)")
    #expect(
      try Self.prefixes(Self.stock, ["remote", "streams", url])
        == RestaurantBookingSchema.replicatedStreamPrefixes)

    // The last prefix stays: an empty list would let every stream in.
    for prefix in RestaurantBookingSchema.replicatedStreamPrefixes.dropLast() {
      let removedToo = try runChild(Self.stock, ["remote", "streams", "remove", prefix, url])
      #expect(removedToo.status == 0, "\(removedToo)")
    }
    let last = try #require(RestaurantBookingSchema.replicatedStreamPrefixes.last)
    let refused = try runChild(Self.stock, ["remote", "streams", "remove", last, url])
    #expect(refused.status == 1 && refused.stderr.contains("only replicated stream prefix"), "\(refused)")
    #expect(try Self.prefixes(Self.stock, ["remote", "streams", url]) == [last])
  }

  /// `user-eventlog --db <device> arguments…`.
  struct UserDevice {
    let directory = TemporaryDirectory("shared-user-device")

    func run(_ arguments: String...) throws -> ChildRun {
      try runChild(SharedServerCommandLineTests.users, ["--db", directory.environment()] + arguments)
    }

    /// The JSON object a run prints, whatever its status.
    func json(_ run: ChildRun) throws -> [String: Any] {
      try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run)")
    }

    /// Creates a user and returns its ID.
    func create(_ name: String) throws -> String {
      let run = try run(
        "users", "create", "--name", name, "--email", "\(name.lowercased())@example.com", "--json")
      return try #require(try json(run)["id"] as? String, "\(run)")
    }
  }

  @Test(
    "a refused event exits 3 after the rest is pushed; once its prefix is added it is stored and no longer shown"
  )
  func refusedThenStored() async throws {
    let fixture = try await ServerFixture(initialized: false)
    #expect(try runChild(Self.stock, ["remote", "init", fixture.ownerURL]).status == 0)
    let alice = try fixture.customer("alice")
    let phone = UserDevice()
    _ = try phone.create("Ada")
    let bob = try phone.create("Bob")
    // The server takes Bob's stream only: the first event is refused, the second stored after it.
    try fixture.superuser("INSERT INTO eventlog.replicated_streams (prefix) VALUES ('user-\(bob)')")

    let push = try phone.run("push", alice.url, "--json")
    #expect(push.status == 3, "\(push)")
    let counts = try phone.json(push)
    #expect(counts["pushed"] as? Int == 1 && counts["rejected"] as? Int == 1, "\(counts)")
    #expect(counts["pending"] as? Int == 0 && counts["retried"] as? Int == 0, "\(counts)")
    #expect(push.stderr.contains("refused 1 event(s)") && push.stderr.contains("remote status"), "\(push)")
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 1)
    let status = try phone.json(try phone.run("remote", "status", "--json"))
    let rejected = try #require(status["rejected"] as? [[String: Any]])
    #expect(rejected.count == 1 && rejected.first?["seq"] as? Int == 1, "\(status)")
    #expect((rejected.first?["reason"] as? String)?.contains("is not replicated on this server") == true)
    #expect(try phone.run("remote", "status").stdout.contains("is not replicated on this server"))
    #expect(try phone.run("log").stdout.contains("[rejected by the server"))
    #expect(try phone.run("log", "--json").stdout.contains(#""rejected":"#))

    // While the cause is there, replicate sends it again, is refused again and exits 3 too.
    let round = try phone.run("replicate", alice.url, "--json")
    #expect(round.status == 3, "\(round)")
    let again = try #require(try phone.json(round)["push"] as? [String: Any])
    #expect(again["retried"] as? Int == 1 && again["rejected"] as? Int == 1 && again["pushed"] as? Int == 0)
    // pull --resync pushes the whole outbox again: the same refusal, exit 3 after the pull.
    let resync = try phone.run("pull", alice.url, "--resync", "--json")
    #expect(resync.status == 3 && resync.stderr.contains("refused 1 event(s)"), "\(resync)")
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 1)

    // The app's own remote init adds its prefix (the stock app's stays): the next push stores it.
    #expect(try Self.prefixes(Self.users, ["remote", "init", fixture.ownerURL])?.contains("user-") == true)
    let fixed = try phone.run("push", alice.url, "--json")
    #expect(fixed.status == 0, "\(fixed)")
    let stored = try phone.json(fixed)
    #expect(
      stored["retried"] as? Int == 1 && stored["pushed"] as? Int == 1 && stored["rejected"] as? Int == 0)
    #expect(try serverEventIDs(fixture, owner: alice.role).count == 2)
    let after = try phone.json(try phone.run("remote", "status", "--json"))
    #expect((after["rejected"] as? [Any])?.isEmpty == true, "\(after)")
    #expect(try !phone.run("remote", "status").stdout.contains("not replicated"))
    #expect(try !phone.run("log").stdout.contains("rejected"))
    #expect(try !phone.run("log", "--json").stdout.contains(#""rejected""#))
    // Nothing is sent again after that; the device's log and the server's agree.
    let quiet = try phone.json(try phone.run("push", alice.url, "--json"))
    #expect(quiet["retried"] as? Int == 0 && quiet["pushed"] as? Int == 0, "\(quiet)")
    #expect(try phone.run("verify", "--remote", alice.url).status == 0)
  }
}

@Suite("which refusals a push sends again")
struct RejectionRetryTests {
  @Test func onlyAStreamTheServerDoesNotReplicateMayPass() {
    func rejection(_ reason: String) -> Rejection { Rejection(sequence: 1, id: nil, reason: reason) }
    #expect(rejection("the stream 'user-1' is not replicated on this server").mayPass)
    #expect(!rejection("the event ID is taken").mayPass)
    #expect(!rejection("conflict: the server holds other content under this event ID, at position 3").mayPass)
    #expect(!rejection("the event's payload is over 4 MiB").mayPass)
  }
}
