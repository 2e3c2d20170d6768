import Foundation
import PostgRESTTestSupport
import ReplicationSupabase
import TestKit
import Testing

#if canImport(Glibc)
  import Glibc  // kill, SIGTERM, SIGKILL, stat
#endif

extension SupabaseReplication {
  /// A sync process outlives its access token: `replicate --watch` waits for a renewed token
  /// instead of exiting, and `--refresh-token-file` renews the session itself with Supabase Auth's
  /// refresh grant (`POST /auth/v1/token?grant_type=refresh_token`, served by the stand-in as
  /// GoTrue documents it).
  @Suite("Sessions that outlive their access token")
  struct SessionRenewalTests {
    func device(environment: [String: String] = [:]) -> CommandLineDevice {
      SupabaseCommandLineTests.device(label: "cli-session", environment: environment)
    }

    @Test(
      "the refresh grant: a session renewed once per refresh token, a spent one refused as 'sign in again'")
    func refreshGrant() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let (_, refreshToken) = api.standIn.signIn(user)
      let renewed = try await SupabaseSession.refresh(
        projectURL: api.url, apiKey: api.anonKey, refreshToken: refreshToken)
      #expect(renewed.refreshToken != refreshToken && !renewed.accessToken.isEmpty)
      #expect(renewed.expiresIn == .seconds(3600))
      #expect(api.standIn.sessionRefreshes == 1)

      // The renewed access token is the user's: the API takes it.
      let transport = try api.transport(Tokens(renewed.accessToken))
      defer { transport.close() }
      let info = try await transport.serverInfo()
      #expect(info.owner == "user:\(user.uuidString.lowercased())", "\(info)")

      // A refresh token can be used once.
      let error = await #expect(throws: SupabaseError.self) {
        try await SupabaseSession.refresh(
          projectURL: api.url, apiKey: api.anonKey, refreshToken: refreshToken)
      }
      #expect(error?.needsNewSession == true, "\(String(describing: error))")
      let text = error.map { "\($0)" } ?? ""
      #expect(text.contains("sign in again") && !text.contains(refreshToken), "\(text)")
      // A wrong API key is refused by the gateway, and the error holds neither secret.
      let wrongKey = await #expect(throws: SupabaseError.self) {
        try await SupabaseSession.refresh(
          projectURL: api.url, apiKey: "not-the-key", refreshToken: renewed.refreshToken)
      }
      #expect(wrongKey.map { "\($0)".contains(renewed.refreshToken) } == false)
      #expect(api.standIn.sessionRefreshes == 1)
    }

    @Test("push with an expired access token and --refresh-token-file: renewed, pushed, both files rewritten")
    func oneShotRenewal() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      try phone.book()
      let expired = TestJWT.accessToken(
        subject: user, expiresAt: Date().addingTimeInterval(-120), issuedAt: Date().addingTimeInterval(-3720),
        secret: api.project.jwtSecret)
      let (_, refreshToken) = api.standIn.signIn(user)
      let accessFile = try secretFile(phone, "access", expired)
      let refreshFile = try secretFile(phone, "refresh", refreshToken)

      let push = try phone(
        "push", url, "--access-token-file", accessFile, "--refresh-token-file", refreshFile, "--json")
      #expect(push.status == 0, "\(push)")
      #expect(push.stdout.contains(#""pushed":1"#), "\(push)")
      #expect(api.standIn.sessionRefreshes == 1)
      let nextRefresh = try firstLine(refreshFile)
      let nextAccess = try firstLine(accessFile)
      #expect(nextRefresh != refreshToken && !nextRefresh.isEmpty, "the refresh token was not rotated")
      #expect(nextAccess != expired && !nextAccess.isEmpty, "the access token file was not rewritten")
      #expect(try mode(of: refreshFile) == 0o600 && mode(of: accessFile) == 0o600)
      for secret in [expired, refreshToken, nextRefresh, nextAccess] {
        #expect(!push.stderr.contains(secret) && !push.stdout.contains(secret))
      }
      #expect(try api.serverEventIDs(of: user).count == 1)

      // The files hold the renewed session: the next command needs no renewal.
      try phone.book("Grace")
      let again = try phone(
        "push", url, "--access-token-file", accessFile, "--refresh-token-file", refreshFile, "--json")
      #expect(again.status == 0 && again.stdout.contains(#""pushed":1"#), "\(again)")
      #expect(api.standIn.sessionRefreshes == 1)

      // A refresh token that was spent elsewhere: exit 1, "sign in again", nothing marked.
      try phone.book("Hedy")
      let stale = try secretFile(phone, "stale-refresh", refreshToken)
      let expiredAgain = try secretFile(phone, "expired-access", expired)
      let refused = try phone(
        "push", url, "--access-token-file", expiredAgain, "--refresh-token-file", stale, "--json")
      #expect(refused.status == 1 && refused.stderr.contains("sign in again"), "\(refused)")
      #expect(refused.stderr.contains("refresh token"), "\(refused)")
      #expect(!refused.stderr.contains(refreshToken))
      #expect(try phone.json("remote", "status", "--json")["pending"] as? Int == 1)
      #expect(try firstLine(stale) == refreshToken, "a refused renewal rewrote the file")
    }

    @Test("--refresh-token-file: '-' and a file others can write are refused before anything is sent")
    func refreshTokenFileRules() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      try phone.book()
      let (_, refreshToken) = api.standIn.signIn(UUID())
      let dash = try phone("push", url, "--refresh-token-file", "-")
      #expect(dash.status == 64 && dash.stderr.contains("--refresh-token-file"), "\(dash)")
      let open = try secretFile(phone, "refresh-0666", refreshToken)
      #expect(chmod(open, 0o666) == 0)
      let unsafe = try phone("push", url, "--refresh-token-file", open)
      #expect(unsafe.status == 1 && unsafe.stderr.contains("--refresh-token-file"), "\(unsafe)")
      #expect(unsafe.stderr.contains("0666") && !unsafe.stderr.contains(refreshToken), "\(unsafe)")
      #expect(api.standIn.requests.isEmpty && api.standIn.sessionRefreshes == 0, "nothing was sent")
    }

    @Test(
      "a token file that cannot be written back is refused before the refresh grant: the token stays unspent")
    func refusedTargetLeavesTheRefreshTokenUnspent() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      try phone.book()
      let expired = TestJWT.accessToken(
        subject: user, expiresAt: Date().addingTimeInterval(-120), issuedAt: Date().addingTimeInterval(-3720),
        secret: api.project.jwtSecret)
      let (_, refreshToken) = api.standIn.signIn(user)
      let refreshFile = try secretFile(phone, "refresh", refreshToken)
      let accessFile = try secretFile(phone, "access", expired)
      // Read through a link (allowed), but a link is not written over: refused before the grant.
      for (flag, target) in [("--refresh-token-file", refreshFile), ("--access-token-file", accessFile)] {
        let link = phone.directory.path("link\(flag)")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let files =
          flag == "--refresh-token-file"
          ? ["--access-token-file", accessFile, "--refresh-token-file", link]
          : ["--access-token-file", link, "--refresh-token-file", refreshFile]
        let refused = try phone.run(["push", url] + files + ["--json"])
        #expect(refused.status == 1, "\(refused)")
        #expect(
          refused.stderr.hasPrefix("Error: ")
            && refused.stderr.contains("'\(flag)': refusing '\(link)': it is a symbolic link"), "\(refused)"
        )
        #expect(!refused.stderr.contains(refreshToken) && !refused.stderr.contains(expired))
        #expect(api.standIn.sessionRefreshes == 0, "the refresh token was spent")
        #expect(try firstLine(refreshFile) == refreshToken && firstLine(accessFile) == expired)
        let left = try FileManager.default.contentsOfDirectory(atPath: phone.directory.path)
        #expect(!left.contains { $0.contains(".partial-") }, "\(left)")
      }
      #expect(try phone.json("remote", "status", "--json")["pending"] as? Int == 1)

      // Unspent: the same files renew the session and push.
      let push = try phone(
        "push", url, "--access-token-file", accessFile, "--refresh-token-file", refreshFile, "--json")
      #expect(push.status == 0 && push.stdout.contains(#""pushed":1"#), "\(push)")
      #expect(api.standIn.sessionRefreshes == 1)
      #expect(try firstLine(refreshFile) != refreshToken && mode(of: refreshFile) == 0o600)
    }

    @Test("--watch started with an expired token file waits, says so, and goes on once the file is renewed")
    func watchWaitsForARenewedTokenFile() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let url = api.url.absoluteString
      let phone = device(environment: [
        "SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": api.token(user),
      ])
      let booking = try phone.book()
      #expect(try phone("push", url).status == 0)

      let tablet = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      let expired = TestJWT.accessToken(
        subject: user, expiresAt: Date().addingTimeInterval(-120), issuedAt: Date().addingTimeInterval(-3720),
        secret: api.project.jwtSecret)
      let tokenFile = try secretFile(tablet, "token", expired)
      let output = tablet.directory.path("watch.out")
      let watcher = try SupabaseCommandLineTests().spawn(
        ["--db", tablet.database, "replicate", url, "--watch", "--access-token-file", tokenFile],
        environment: ["SUPABASE_ANON_KEY": api.anonKey], output: output)
      defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
      try await waitFor("the watcher's notice that it waits for a renewed session") {
        (try? String(contentsOfFile: output, encoding: .utf8))?.contains("waiting for a renewed session")
          == true
      }
      #expect(watcher.isRunning, "the watcher exited on an expired token")
      // Renewed by whatever keeps the session (here: the test), written atomically as a renewer would.
      let renewed = tablet.directory.path("token.new")
      try Data((api.token(user) + "\n").utf8).write(to: URL(fileURLWithPath: renewed))
      #expect(chmod(renewed, 0o600) == 0 && rename(renewed, tokenFile) == 0)
      try await waitFor("the phone's booking on the watching tablet") {
        (try? tablet.bookingIDs()) == [booking]
      }
      #expect(watcher.isRunning)
      kill(watcher.processIdentifier, SIGTERM)
      watcher.waitUntilExit()
      #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
      let text = try String(contentsOfFile: output, encoding: .utf8)
      #expect(text.contains("sign in again") && !text.contains(expired), "\(text)")
    }

    @Test("--watch with --refresh-token-file renews short-lived sessions itself, round after round")
    func watchRenewsItself() async throws {
      let api = try await APIProject { $0.clockSkewSeconds = 0 }
      defer { api.project.stop() }
      let user = UUID()
      let url = api.url.absoluteString
      let phone = device(environment: [
        "SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": api.token(user),
      ])
      let tablet = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      // Access tokens of 2 s: every few rounds of the watch meets an expired one.
      let (access, refreshToken) = api.standIn.signIn(user, lifetime: .seconds(2))
      let refreshFile = try secretFile(tablet, "refresh", refreshToken)
      let output = tablet.directory.path("watch.out")
      let watcher = try SupabaseCommandLineTests().spawn(
        ["--db", tablet.database, "replicate", url, "--watch", "--refresh-token-file", refreshFile],
        environment: ["SUPABASE_ANON_KEY": api.anonKey, "EVENTLOG_ACCESS_TOKEN": access], output: output)
      defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
      var booked: [String] = []
      for name in ["Ada", "Grace", "Hedy"] {
        try await Task.sleep(for: .seconds(3))  // the tablet's token has expired by now
        booked.append(try phone.book(name))
        #expect(try phone("push", url).status == 0)
        try await waitFor("\(name)'s booking on the watching tablet") {
          Set((try? tablet.bookingIDs()) ?? []) == Set(booked)
        }
      }
      #expect(watcher.isRunning)
      kill(watcher.processIdentifier, SIGTERM)
      watcher.waitUntilExit()
      #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
      #expect(api.standIn.sessionRefreshes >= 2, "renewed \(api.standIn.sessionRefreshes) times")
      let text = try String(contentsOfFile: output, encoding: .utf8)
      #expect(!text.contains("sign in again"), "\(text)")
      #expect(try firstLine(refreshFile) != refreshToken)
    }

    /// Writes `secret` as the first line of a new mode-0600 file in `device`'s directory.
    private func secretFile(_ device: CommandLineDevice, _ name: String, _ secret: String) throws -> String {
      let file = try device.directory.file(name, Data((secret + "\n").utf8))
      guard chmod(file, 0o600) == 0 else { throw POSIXError(.EPERM) }
      return file
    }

    private func firstLine(_ file: String) throws -> String {
      try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
    }

    private func mode(of file: String) throws -> Int {
      let attributes = try FileManager.default.attributesOfItem(atPath: file)
      return ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
    }
  }
}
