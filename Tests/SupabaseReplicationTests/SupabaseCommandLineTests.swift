import Foundation
import PostgRESTTestSupport
import PostgresTestSupport
import ReplicationPostgres
import TestKit
import Testing

extension SupabaseReplication {
  /// `push`, `pull`, `replicate` and `remote status` of the built `eventlog` with a Supabase
  /// project's URL, as a user runs them.
  @Suite("eventlog through Supabase's API")
  struct SupabaseCommandLineTests {
    static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
    static let catalog = """
      [{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"}]
      """

    /// A device of its own: `eventlog --db <its environment> arguments…` with `environment`.
    func device(environment: [String: String] = [:]) -> CommandLineDevice {
      Self.device(label: "cli-api-device", environment: environment)
    }

    /// A device of its own, its directory named after `label`.
    static func device(label: String, environment: [String: String] = [:]) -> CommandLineDevice {
      CommandLineDevice(binary: binary, catalog: catalog, label: label, environment: environment)
    }

    @Test func twoDevicesOfAUserThroughTheCommandLine() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let alice = UUID()
      let token = api.token(alice)
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": token])
      let booking = try phone.book()
      let push = try phone.json("push", url, "--json")
      #expect(push["pushed"] as? Int == 1 && push["alreadyStored"] as? Int == 0, "\(push)")
      #expect(push["rejected"] as? Int == 0 && push["pending"] as? Int == 0)

      // The tablet: the URL from EVENTLOG_REMOTE, the key as --api-key, the token in a file.
      let tablet = device()
      let tokenFile = try tablet.directory.file("token", Data((token + "\n# the rest is ignored\n").utf8))
      let pull = try tablet(
        "pull", "--api-key", api.anonKey, "--access-token-file", tokenFile, "--json",
        environment: ["EVENTLOG_REMOTE": url])
      #expect(pull.status == 0, "\(pull)")
      let pulled = try #require(
        try JSONSerialization.jsonObject(with: Data(pull.stdout.utf8)) as? [String: Any])
      #expect(pulled["pulled"] as? Int == 1 && pulled["cursor"] as? Int == 1, "\(pulled)")
      #expect(try tablet.bookingIDs() == [booking])

      // Both delete it; replicate brings both to the same end.
      #expect(try tablet("bookings", "delete", booking).status == 0)
      #expect(try phone("bookings", "delete", booking).status == 0)
      let replicateTablet = try tablet(
        "replicate", url, "--api-key", api.anonKey, "--access-token-file", tokenFile, "--json")
      #expect(replicateTablet.status == 0, "\(replicateTablet)")
      for _ in 0..<2 {
        let round = try phone.json("replicate", url, "--json")
        #expect(round["push"] is [String: Any] && round["pull"] is [String: Any], "\(round)")
      }
      #expect(try phone.bookingIDs().isEmpty && tablet.bookingIDs().isEmpty)
      let status = try phone.json("remote", "status", url, "--json")
      let server = try #require(status["server"] as? [String: Any], "\(status)")
      #expect(server["owner"] as? String == "user:\(alice.uuidString.lowercased())", "\(server)")
      #expect(
        server["schemaVersion"] as? Int == ServerSchema.latestVersion
          && server["upgradeAvailable"] as? Bool == false)
      #expect(server["head"] as? Int == 3 && server["server"] as? String == url, "\(server)")
      #expect(status["pending"] as? Int == 0 && status["cursor"] as? Int == 3)
      for device in [phone, tablet] {
        #expect(try device("verify").status == 0)
        #expect(try !device.holds(token) && !device.holds(api.anonKey), "a secret is in the environment")
      }
      #expect(api.standIn.requests.allSatisfy { $0.role == "authenticated" && $0.status == 200 })
    }

    @Test("a first push refused whole exits 3 through the API; once the app's remote init ran, it is stored")
    func refusedThenStoredThroughTheAPI() async throws {
      let api = try await APIProject(initialized: false)
      defer { api.project.stop() }
      // Another app initialized the project: the server knows its streams only.
      let owner = try PostgresTransport(url: api.project.ownerURL)
      _ = try await owner.initializeSchema(replicatedStreamPrefixes: ["user-"])
      owner.close()
      let url = api.url.absoluteString
      let phone = device(environment: [
        "SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": api.token(UUID()),
      ])
      try phone.book()

      let push = try phone("push", url, "--json")
      #expect(push.status == 3 && push.stderr.contains("refused 1 event(s)"), "\(push)")
      let counts = try #require(
        try JSONSerialization.jsonObject(with: Data(push.stdout.utf8)) as? [String: Any], "\(push)")
      #expect(counts["rejected"] as? Int == 1 && counts["pushed"] as? Int == 0, "\(counts)")
      #expect(try api.serverEventCount() == 0)

      // The stock app's remote init adds its prefix beside the other app's.
      let initRun = try runChild(Self.binary, ["remote", "init", api.project.ownerURL, "--json"])
      let initJSON = try JSONSerialization.jsonObject(with: Data(initRun.stdout.utf8)) as? [String: Any]
      #expect(
        initRun.status == 0
          && initJSON?["replicatedStreams"] as? [String] == ["booking-", "subject-", "user-"])
      // The server acknowledged no event of this device yet, so its mark names none: the whole
      // outbox goes again (not as a retry), and the server stores the event.
      let fixed = try phone.json("push", url, "--json")
      #expect(fixed["pushed"] as? Int == 1 && fixed["rejected"] as? Int == 0, "\(fixed)")
      #expect(fixed["retried"] as? Int == 0, "\(fixed)")
      #expect(try api.serverEventCount() == 1)
      let status = try phone.json("remote", "status", "--json")
      #expect((status["rejected"] as? [Any])?.isEmpty == true, "\(status)")
    }

    @Test("through the API, a refused event is sent again and stored once the app's remote init ran")
    func refusedEventSentAgainThroughTheAPI() async throws {
      let api = try await APIProject(initialized: false)
      defer { api.project.stop() }
      let owner = try PostgresTransport(url: api.project.ownerURL)
      _ = try await owner.initializeSchema(replicatedStreamPrefixes: ["user-"])
      owner.close()
      let url = api.url.absoluteString
      let phone = device(environment: [
        "SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": api.token(UUID()),
      ])
      try phone.book("Ada")
      let second = try #require(UUID(uuidString: try phone.book("Bob")))
      // Of this app's streams, the server takes the second booking's only: the first booking is
      // refused, the second stored after it.
      try api.query(
        "INSERT INTO eventlog.replicated_streams (prefix) VALUES ($1)",
        [.text("booking-\(second.uuidString)")]
      ) { _ in }
      let push = try phone("push", url, "--json")
      #expect(push.status == 3 && push.stderr.contains("refused 1 event(s)"), "\(push)")
      let counts = try #require(
        try JSONSerialization.jsonObject(with: Data(push.stdout.utf8)) as? [String: Any], "\(push)")
      #expect(counts["rejected"] as? Int == 1 && counts["pushed"] as? Int == 1, "\(counts)")

      #expect(try runChild(Self.binary, ["remote", "init", api.project.ownerURL]).status == 0)
      let fixed = try phone.json("push", url, "--json")
      #expect(
        fixed["retried"] as? Int == 1 && fixed["pushed"] as? Int == 1 && fixed["rejected"] as? Int == 0,
        "\(fixed)")
      #expect(try api.serverEventCount() == 2)
      let status = try phone.json("remote", "status", url, "--json")
      #expect((status["rejected"] as? [Any])?.isEmpty == true, "\(status)")
    }

    @Test(
      "no token, a refused token, no key, and URLs that cannot work: exit 1 or 64, nothing sent or marked")
    func refusals() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      try phone.book()

      for command in [["push", url], ["pull", url], ["replicate", url], ["remote", "status", url]] {
        let run = try phone.run(command)
        #expect(run.status == 1 && run.stderr.contains("EVENTLOG_ACCESS_TOKEN"), "\(command): \(run)")
      }
      let emptyFile = try phone.directory.file("empty-token", Data("\n".utf8))
      let empty = try phone("push", url, "--access-token-file", emptyFile)
      #expect(empty.status == 1 && empty.stderr.contains("EVENTLOG_ACCESS_TOKEN"), "\(empty)")
      let missingFile = try phone("push", url, "--access-token-file", phone.directory.path("no-such-file"))
      #expect(missingFile.status == 1 && missingFile.stderr.contains("no-such-file"), "\(missingFile)")
      #expect(api.standIn.requests.isEmpty, "nothing was sent")

      let expired = TestJWT.accessToken(
        subject: UUID(), expiresAt: Date().addingTimeInterval(-120),
        issuedAt: Date().addingTimeInterval(-3720),
        secret: api.project.jwtSecret)
      let refused = try phone("push", url, environment: ["EVENTLOG_ACCESS_TOKEN": expired])
      #expect(refused.status == 1 && refused.stderr.contains("sign in again"), "\(refused)")
      #expect(!refused.stderr.contains(expired) && !refused.stdout.contains(expired))
      let status = try phone.json("remote", "status", "--json")
      #expect(
        status["pending"] as? Int == 1 && status["pushedThrough"] as? Int == 0, "nothing marked: \(status)")

      let token = api.token(UUID())
      let noKey = try phone(
        "push", url, environment: ["SUPABASE_ANON_KEY": "", "EVENTLOG_ACCESS_TOKEN": token])
      #expect(noKey.status == 64 && noKey.stderr.contains("SUPABASE_ANON_KEY"), "\(noKey)")
      let plain = try phone("push", "http://db.example.com", environment: ["EVENTLOG_ACCESS_TOKEN": token])
      #expect(plain.status == 1 && plain.stderr.contains("loopback"), "\(plain)")
      let withUser = try phone(
        "push", "https://me:hunter2pw@example.supabase.co", environment: ["EVENTLOG_ACCESS_TOKEN": token])
      #expect(withUser.status == 1 && !withUser.stderr.contains("hunter2pw"), "\(withUser)")
      let initOverHTTP = try phone("remote", "init", url)
      #expect(
        initOverHTTP.status == 64 && initOverHTTP.stderr.contains("connection string"), "\(initOverHTTP)")
      #expect(
        api.standIn.requests.map(\.errorCode) == ["PGRST303", "PGRST303"], "only the expired token's tries")
      for run in [refused, noKey, plain, withUser] {
        #expect(!run.stderr.contains(token) && !run.stderr.contains(api.anonKey))
      }
    }

    @Test("kill -9 mid-push, then --watch until SIGTERM: each event once on the server")
    func killedMidPushAndWatch() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let url = api.url.absoluteString
      let environment = ["SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": api.token(user)]
      let phone = device(environment: environment)
      try phone.book("First")
      try phone.book("Second")

      // The push commits on the server; its answer is held back (long enough for a starved test task
      // to notice the commit), and the CLI is killed meanwhile.
      api.standIn.inject(.slowAnswer(.seconds(90)), function: "push")
      let pushing = try spawn(
        ["--db", phone.database, "push", url, "--retry-for", "300"], environment: environment)
      defer { if pushing.isRunning { kill(pushing.processIdentifier, SIGKILL) } }
      try await waitFor("the push's commit") {
        api.standIn.requests.contains { $0.function == "push" && $0.committed }
      }
      kill(pushing.processIdentifier, SIGKILL)
      pushing.waitUntilExit()
      #expect(pushing.terminationReason == .uncaughtSignal)
      #expect(
        try phone.json("remote", "status", "--json")["pushedThrough"] as? Int == 0, "not marked locally")
      // Pushed again: the server's mark (set with the events) is trusted, nothing goes twice.
      let again = try phone.json("push", url, "--json")
      #expect(again["pending"] as? Int == 0 && again["rejected"] as? Int == 0, "\(again)")
      let onServer = try api.serverEventIDs(of: user)
      #expect(onServer.count == 2 && Set(onServer).count == 2)

      // The tablet watches; the phone's next booking reaches it through the long poll.
      let tablet = device(environment: environment)
      let output = tablet.directory.path("watch.out")
      let watcher = try spawn(
        ["--db", tablet.database, "replicate", url, "--watch", "--json"], environment: environment,
        output: output)
      defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
      try await waitFor("the tablet's first round") { (try? tablet.bookingIDs().count) == 2 }
      let third = try phone.book("Third")
      #expect(try phone("push", url).status == 0)
      try await waitFor("the phone's booking on the watching tablet") {
        (try? tablet.bookingIDs())?.contains(third) == true
      }
      kill(watcher.processIdentifier, SIGTERM)
      let deadline = ContinuousClock.now + .seconds(10)
      while watcher.isRunning && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(50))
      }
      #expect(!watcher.isRunning, "the watcher did not stop on SIGTERM")
      watcher.waitUntilExit()
      #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
      let text = try String(contentsOfFile: output, encoding: .utf8)
      #expect(text.contains(#""pull":"#) && !text.contains(api.anonKey), "\(text)")
      #expect(try api.serverEventIDs(of: user).count == 3)
      #expect(try tablet("verify").status == 0)
    }

    /// Starts the built `eventlog` with `arguments`, its output to `output` (or nowhere).
    func spawn(_ arguments: [String], environment: [String: String], output: String? = nil) throws -> Process
    {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: Self.binary)
      process.arguments = arguments
      var env = ProcessInfo.processInfo.environment
      env["SWIFT_BACKTRACE"] = "enable=no"
      for (key, value) in environment { env[key] = value }
      process.environment = env
      process.standardInput = FileHandle.nullDevice
      if let output {
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = process.standardOutput
      } else {
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
      }
      try process.run()
      return process
    }
  }
}

extension CommandLineDevice {
  /// Whether `secret` appears in the environment's files.
  fileprivate func holds(_ secret: String) throws -> Bool {
    let needle = Array(secret.utf8)
    for file in ["data.mdb", "lock.mdb"] {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: database + "/" + file)))
      if bytes.indices.dropLast(needle.count).contains(where: {
        bytes[$0..<($0 + needle.count)].elementsEqual(needle)
      }) {
        return true
      }
    }
    return false
  }
}
