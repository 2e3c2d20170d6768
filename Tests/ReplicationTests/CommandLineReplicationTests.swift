import Foundation
import PostgresTestSupport
import ReplicationPostgres
import TestKit
import Testing

/// The replication commands of the built `eventlog`, as a user runs them.
@Suite("eventlog remote, push, pull, replicate", .needsPostgres)
struct CommandLineReplicationTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  static let catalog = """
    [{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"}]
    """

  /// A device of its own: `eventlog --db <its environment> arguments…`.
  func device() -> CommandLineDevice {
    CommandLineDevice(binary: Self.binary, catalog: Self.catalog, label: "cli-device")
  }

  @Test func helpAndUsageErrors() throws {
    let cli = device()
    for command in [["remote", "init"], ["remote", "status"], ["push"], ["pull"], ["replicate"]] {
      for flag in ["--help"] {
        let run = try cli.run(command + [flag])
        #expect(run.status == 0 && run.stdout.contains("USAGE: eventlog"), "\(command): \(run)")
      }
    }
    #expect(try cli("remote", "--help").stdout.contains("init"))
    let missing = try cli("push")
    #expect(missing.status == 64 && missing.stderr.contains("missing 'URL'"), "\(missing)")
    let secret = "s3cr3t-" + UUID().uuidString.prefix(4)
    let wrong = try cli("pull", "mysql://me:\(secret)@host/db")
    #expect(wrong.status == 64 && !wrong.stderr.contains(secret), "\(wrong)")
    let badRetry = try cli("push", "postgres://x", "--retry-for", "soon")
    #expect(badRetry.status == 64 && badRetry.stderr.contains("--retry-for"))
    #expect(try cli("replicate", "postgres://x", "--watch", "--retry-for", "3").status == 64)
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }

  @Test func twoDevicesThroughTheCommandLine() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let initRun = try runChild(Self.binary, ["remote", "init", fixture.ownerURL, "--json"])
    #expect(initRun.status == 0, "\(initRun)")
    let initJSON = try JSONSerialization.jsonObject(with: Data(initRun.stdout.utf8)) as? [String: Any]
    #expect(initJSON?["schemaVersion"] as? Int == ServerSchema.latestVersion)
    #expect(initJSON?["mode"] as? String == "roles")
    #expect(try runChild(Self.binary, ["remote", "init", fixture.ownerURL]).stdout.contains("up to date"))
    let alice = try fixture.customer("alice")
    let phone = device()
    let tablet = device()
    let booking = try phone.book()
    let stats = try phone.json("stats", "--json")
    #expect((stats["device"] as? String)?.count == 36)

    let push = try phone.json("push", alice.url, "--json")
    #expect(push["pushed"] as? Int == 1 && push["alreadyStored"] as? Int == 0)
    #expect(push["rejected"] as? Int == 0 && push["pending"] as? Int == 0)
    // The booking's customer's key went with it, once.
    #expect(push["keysPushed"] as? Int == 1 && push["keysRefused"] as? Int == 0)
    #expect(try phone("push", alice.url).stdout.contains("data subject key") == false)
    // The URL from the environment.
    let pull = try runChild(
      Self.binary, ["--db", tablet.database, "pull", "--json"], environment: ["EVENTLOG_REMOTE": alice.url])
    #expect(pull.status == 0, "\(pull)")
    let pulled = try #require(
      try JSONSerialization.jsonObject(with: Data(pull.stdout.utf8)) as? [String: Any])
    #expect(
      pulled["pulled"] as? Int == 1 && pulled["alreadyPresent"] as? Int == 0 && pulled["cursor"] as? Int == 1)
    #expect(pulled["keysStored"] as? Int == 1)
    #expect(try tablet.bookingIDs() == [booking])

    // Both delete; replicate brings both devices to the same end.
    #expect(try phone("bookings", "delete", booking).status == 0)
    #expect(try tablet("bookings", "delete", booking).status == 0)
    for device in [phone, tablet, phone] {
      let round = try device.json("replicate", alice.url, "--json")
      #expect(round["push"] is [String: Any] && round["pull"] is [String: Any])
    }
    #expect(try phone.bookingIDs().isEmpty && tablet.bookingIDs().isEmpty)
    for device in [phone, tablet] {
      #expect(try device("verify").status == 0)
      #expect(try device("replay").status == 0)
      let status = try device.json("remote", "status", "--json")
      #expect(status["pending"] as? Int == 0 && (status["rejected"] as? [Any])?.isEmpty == true)
      #expect(status["cursor"] as? Int == 3)
      #expect(
        status.keys.sorted() == [
          "conflicts", "convergenceConflicts", "cursor", "device", "diverged", "owner", "pending",
          "pushedThrough", "rejected", "serverHead", "unreadable", "unstorable",
        ])
      // Bookings commute: the convergent rule decided nothing.
      #expect(status["convergenceConflicts"] as? Int == 0)
    }
    // The pulled event says where it came from.
    #expect(try tablet("show", "1").stdout.contains("server position 1"))

    // Another customer's booking: its key is named in the push's text.
    _ = try tablet.book("Grace")
    let tabletPush = try tablet("push", alice.url)
    #expect(tabletPush.stdout.contains("; 1 data subject key(s) stored on the server"), "\(tabletPush)")
    #expect(try phone("pull", alice.url).stdout.contains("; 1 data subject key(s) stored here"))
  }

  @Test func failuresExitOneNameTheCauseAndChangeNothing() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let alice = try fixture.customer("alice")
    let phone = device()
    try phone.book()
    let before = try phone.json("remote", "status", "--json")

    let missing = try phone("push", alice.url)
    #expect(missing.status == 1 && missing.stderr.contains("eventlog remote init"), "\(missing)")

    #expect(try runChild(Self.binary, ["remote", "init", fixture.ownerURL]).status == 0)
    let secret = "nope-" + UUID().uuidString.prefix(6)
    let wrong = try phone(
      "push", fixture.server.url(user: alice.role, password: secret, database: fixture.database))
    #expect(wrong.status == 1 && wrong.stderr.contains("password authentication failed"), "\(wrong)")
    #expect(!wrong.stderr.contains(secret) && !wrong.stdout.contains(secret))

    let down = try phone(
      "push", "postgresql://\(alice.role):\(alice.password)@/db?host=/nonexistent&port=9", "--retry-for", "1")
    #expect(down.status == 1 && down.stderr.contains("gave up after retrying for 1 s"), "\(down)")
    #expect(down.stderr.contains("retrying in"))
    #expect(!down.stderr.contains(alice.password))

    // A newer server whose functions changed (clients_from past this build).
    try fixture.superuser("UPDATE eventlog.schema_info SET version = 42, clients_from = 42")
    let newer = try phone("push", alice.url)
    #expect(newer.status == 1 && newer.stderr.contains("newer than this build's"), "\(newer)")
    let reinit = try runChild(Self.binary, ["remote", "init", fixture.ownerURL])
    #expect(reinit.status == 1 && reinit.stderr.contains("newer than this build's"), "\(reinit)")

    // Nothing was marked or appended by the failures.
    let after = try phone.json("remote", "status", "--json")
    #expect(
      after["pending"] as? Int == 1 && after["pushedThrough"] as? Int == before["pushedThrough"] as? Int)
    // A first pull that fails leaves no environment behind.
    let fresh = device()
    #expect(try fresh("pull", alice.url).status == 1)
    #expect(!FileManager.default.fileExists(atPath: fresh.database))
  }

  @Test func liveModeFollowsTheServerThroughARestartAndStopsCleanlyOnSIGTERM() async throws {
    let server = try PostgresTestServer()
    defer { server.destroy() }
    let (database, owner, password) = try server.createDatabase()
    #expect(
      try runChild(
        Self.binary, ["remote", "init", server.url(user: owner, password: password, database: database)]
      ).status == 0)
    try server.createRole("dana", password: "danapw")
    let url = server.url(user: "dana", password: "danapw", database: database)
    let phone = device()
    let tablet = device()
    try tablet.book("Tablet's own")

    let watcher = Process()
    watcher.executableURL = URL(fileURLWithPath: Self.binary)
    watcher.arguments = ["--db", tablet.database, "replicate", url, "--watch", "--json"]
    let output = tablet.directory.path("watch.out")
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    watcher.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    watcher.standardError = watcher.standardOutput
    watcher.standardInput = FileHandle.nullDevice
    try watcher.run()
    defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }

    // Waits by sleeping the task, not the thread: a blocked cooperative thread would stall the
    // other suites' tasks on this 2-core machine.
    func waitFor(_ what: String, _ condition: () throws -> Bool) async throws {
      let deadline = ContinuousClock.now + .seconds(20)
      while try !condition() {
        guard ContinuousClock.now < deadline else {
          let list = try tablet("bookings", "list")
          let status = try tablet("remote", "status")
          Issue.record(
            "timed out waiting for \(what): \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")\n\(list)\n\(status)"
          )
          return
        }
        try await Task.sleep(for: .milliseconds(100))
      }
    }
    // The tablet's own booking goes up; the phone's comes down as the server announces it.
    try await waitFor("the tablet's push") {
      try phone("pull", url).status == 0 && (try phone.bookingIDs().count) == 1
    }
    let fromPhone = try phone.book("Phone")
    #expect(try phone("push", url).status == 0)
    try await waitFor("the phone's booking on the tablet") { try tablet.bookingIDs().contains(fromPhone) }

    // The server goes away and comes back: the watcher retries and carries on.
    try server.stop(immediate: true)
    try await Task.sleep(for: .seconds(1))
    try server.start()
    let later = try phone.book("After the restart")
    try await waitFor("the phone's push after the restart") {
      try phone("push", url, "--retry-for", "10").status == 0
    }
    try await waitFor("the booking after the restart on the tablet") {
      try tablet.bookingIDs().contains(later)
    }

    kill(watcher.processIdentifier, SIGTERM)
    let deadline = ContinuousClock.now + .seconds(10)
    while watcher.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    #expect(!watcher.isRunning, "the watcher did not stop on SIGTERM")
    watcher.waitUntilExit()
    #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
    let text = try String(contentsOfFile: output, encoding: .utf8)
    #expect(text.contains(#""push":"#) && text.contains(#""pull":"#), "\(text)")
    #expect(text.contains("retrying"), "\(text)")
    // The URL holds a password: the watcher said it shows in `ps`.
    #expect(text.contains("stays visible in the process list"), "\(text)")
    #expect(try tablet("verify").status == 0)
  }

  /// Issue 21's command-line edges: a URL that can never work fails at once (not retried for the
  /// budget) without repeating its password; an unencrypted connection to another host needs
  /// `--allow-unencrypted`; `remote status URL` shows the server's view; `--resync` runs.
  @Test func urlsThatCannotWorkFailAtOnceAndTheServerViewIsShown() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let initRun = try runChild(Self.binary, ["remote", "init", fixture.ownerURL, "--json"])
    #expect(initRun.status == 0, "\(initRun)")
    let alice = try fixture.customer("alice")
    let phone = device()
    try phone.book()
    for (url, expected) in [
      ("postgres://alice:hunter2pw@db.example.com:99999/bookings", "port"),
      ("postgres://alice:hunter2pw@db.example.com/bookings?sslmode=disable", "sslmode=disable"),
    ] {
      let started = ContinuousClock.now
      let run = try phone("push", url, "--retry-for", "60")
      #expect(run.status == 1 && run.stderr.contains(expected), "\(run)")
      #expect(!run.stderr.contains("hunter2pw") && !run.stdout.contains("hunter2pw"))
      #expect(!run.stderr.contains("retrying"), "\(run)")
      #expect(ContinuousClock.now - started < .seconds(30))
    }
    #expect(try phone("push", alice.url, "--json").status == 0)
    let status = try phone.json("remote", "status", alice.url, "--json")
    let server = try #require(status["server"] as? [String: Any])
    #expect(server["schemaVersion"] as? Int == ServerSchema.latestVersion)
    #expect(server["upgradeAvailable"] as? Bool == false)
    #expect(server["head"] as? Int == 1 && server["pushedThrough"] as? Int == 3, "\(server)")
    #expect((server["owner"] as? String)?.hasPrefix("role:") == true)
    let missing = try phone("remote", "status", "--server")
    #expect(missing.status == 64 && missing.stderr.contains("EVENTLOG_REMOTE"), "\(missing)")
    let resync = try phone("pull", alice.url, "--resync", "--json")
    #expect(resync.status == 0, "\(resync)")
    #expect(try phone.json("remote", "status", "--json")["diverged"] is NSNull)
  }
}
