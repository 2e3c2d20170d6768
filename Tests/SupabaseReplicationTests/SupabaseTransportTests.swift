import EventLog
import Foundation
import HTTP
import HTTPTestSupport
import PostgRESTTestSupport
import PostgresTestSupport
import Replication
import ReplicationPostgres
import ReplicationSupabase
import RestaurantBooking
import Synchronization
import TestKit
import Testing

extension SupabaseReplication {
  /// Replication through a Supabase project's API: users' devices over the PostgREST stand-in,
  /// against a real PostgreSQL with Supabase's auth pieces and schema version 3 in API mode.
  @Suite("Replication through Supabase's API")
  struct SupabaseTransportTests {
    @Test func twoUsersDevicesShareTheirBookingsAndStayIsolated() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let tablet = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let bobsPhone = try APIDevice(api, tokens: Tokens(api.token(bob)))

      try await phone.replicator.checkServer()
      let restaurant = try await phone.addRestaurant()
      let first = try await phone.book(restaurant, name: "Alice")
      let second = try await phone.book(restaurant, name: "Alice again")
      let pushed = try await phone.replicator.push()
      #expect(pushed.pushed == 2 && pushed.rejected == 0 && pushed.pending == 0, "\(pushed)")
      let pulled = try await tablet.replicator.pull()
      #expect(pulled.pulled == 2 && pulled.cursor == 2, "\(pulled)")
      #expect(try await tablet.bookingIDs() == sorted([first.id, second.id]))

      // Bob's device sees none of Alice's; his booking stays his.
      let nothing = try await bobsPhone.replicator.pull()
      #expect(nothing.pulled == 0 && nothing.cursor == 0)
      let bobs = try await bobsPhone.book(try await bobsPhone.addRestaurant(), name: "Bob")
      #expect(try await bobsPhone.replicator.push().pushed == 1)

      // The tablet deletes one; both of Alice's devices end with the other, and never Bob's.
      try await tablet.bookings.delete(id: first.id)
      for device in [tablet, phone] {
        _ = try await device.replicator.push()
        _ = try await device.replicator.pull()
        #expect(try await device.bookingIDs() == [second.id])
        try device.expectHealthy()
      }
      #expect(try await bobsPhone.replicator.pull().pulled == 0)
      #expect(try await bobsPhone.bookingIDs() == [bobs.id])

      // The server keeps each user's events under user:<auth.uid()>, each once.
      #expect(sorted(try api.serverEventIDs(of: alice)) == sorted(try phone.replicatedEventIDs()))
      #expect(try api.serverEventIDs(of: bob) == (try bobsPhone.replicatedEventIDs()))
      #expect(try api.serverEventCount() == 4)
      let info = try await phone.transport.serverInfo()
      #expect(info.owner == "user:\(alice.lowercasedString)" && info.head == 3)
      #expect(info.schemaVersion == ServerSchema.latestVersion)

      // Every request as PostgREST saw it: a POST to rpc/ through the gateway, in eventlog_api, as
      // the authenticated role, with the key and the token in their headers.
      let requests = api.standIn.requests
      #expect(!requests.isEmpty)
      for request in requests {
        #expect(request.method == "POST" && request.path.hasPrefix("/rest/v1/rpc/"), "\(request.path)")
        #expect(request.headers["content-profile"] == "eventlog_api")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["apikey"] == "[redacted]")
        #expect(request.headers["authorization"] == "Bearer [redacted]")
        #expect(request.role == "authenticated" && request.status == 200, "\(request.path): \(request)")
      }
      #expect(
        Set(requests.compactMap(\.function)).isSuperset(of: [
          "server_info", "device_mark", "push", "pull_subjects", "pull_keys",
        ]))
    }

    @Test("forged, expired and unsigned tokens are refused: 'sign in again', nothing marked")
    func refusedTokens() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let secret = api.project.jwtSecret
      // (label, token, the error code PostgREST answers, whether the transport asks for a refresh)
      let cases: [(String, String, String, Bool)] = [
        (
          "forged",
          TestJWT.accessToken(subject: user, expiresAt: Date().addingTimeInterval(600), secret: "guess"),
          "PGRST301", true
        ),
        (
          "expired",
          TestJWT.accessToken(
            subject: user, expiresAt: Date().addingTimeInterval(-120),
            issuedAt: Date().addingTimeInterval(-3720),
            secret: secret), "PGRST303", true
        ),
        (
          "unsigned",
          TestJWT.unsigned(payload: #"{"sub":"\#(user)","role":"authenticated","exp":4102444800}"#),
          "PGRST301", true
        ),
        // Signed and of the authenticated role, but no user: the server refuses it (403, not a
        // session failure PostgREST saw), in words that say to sign in again.
        (
          "no sub", TestJWT.sign(payload: #"{"role":"authenticated","exp":4102444800}"#, secret: secret),
          "42501", false
        ),
      ]
      for (label, token, code, refreshes) in cases {
        api.standIn.clearLog()
        let tokens = Tokens(token)
        let device = try APIDevice(api, tokens: tokens)
        try await device.book(try await device.addRestaurant())
        let error = await #expect(throws: SupabaseError.self, "\(label)") {
          try await device.replicator.push()
        }
        #expect(error?.failureKind == .fatal, "\(label)")
        #expect(
          error?.description.contains("sign in again") == true, "\(label): \(String(describing: error))")
        #expect(error?.description.contains(token) == false)
        // Asked once, then once more to refresh; then it stopped.
        #expect(tokens.refreshes == (refreshes ? [false, true] : [false]), "\(label)")
        #expect(api.standIn.requests.map(\.errorCode) == (refreshes ? [code, code] : [code]), "\(label)")
        let status = try device.replicator.status()
        #expect(status.pushedThrough == 0 && status.pending == 1, "\(label): nothing marked")
      }
      #expect(try api.serverEventCount() == 0)
    }

    @Test func aTokenRefreshedMidPushCompletesThePush() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let valid = api.token(user)
      let expired = TestJWT.accessToken(
        subject: user, expiresAt: Date().addingTimeInterval(-120), issuedAt: Date().addingTimeInterval(-3720),
        secret: api.project.jwtSecret)
      // The server's view, the mark, the customers' keys and two batches go with the first token;
      // then it has expired, and a refresh gives a new one (of the same user: checked with
      // server_info before it is used).
      let tokens = Tokens(valid, valid, valid, valid, valid, expired, refreshed: api.token(user))
      var options = APIDevice.quickOptions
      options.pushBatchSize = 2
      let device = try APIDevice(api, tokens: tokens, options: options)
      let restaurant = try await device.addRestaurant()
      for index in 0..<5 { try await device.book(restaurant, name: "Guest \(index)") }
      let summary = try await device.replicator.push()
      #expect(summary.pushed == 5 && summary.pending == 0 && summary.rejected == 0, "\(summary)")
      #expect(tokens.refreshes.filter { $0 } == [true], "\(tokens.refreshes)")
      #expect(api.standIn.requests.compactMap(\.errorCode) == ["PGRST303"])
      #expect(try api.serverEventIDs(of: user) == (try device.replicatedEventIDs()))
    }

    @Test("no session, or the anon key as the bearer: nothing is sent; anon is refused by the server")
    func anonIsRefused() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      for tokens in [Tokens(nil), Tokens(api.anonKey), Tokens("  ")] {
        let device = try APIDevice(api, tokens: tokens)
        try await device.book(try await device.addRestaurant())
        let error = await #expect(throws: SupabaseError.self) { try await device.replicator.checkServer() }
        #expect(error?.description.contains("EVENTLOG_ACCESS_TOKEN") == true, "\(String(describing: error))")
        await #expect(throws: SupabaseError.self) { try await device.replicator.push() }
        #expect(try device.replicator.status().pending == 1)
      }
      #expect(api.standIn.requests.isEmpty, "nothing was sent")

      // Sent by hand: without a token, or with the anon key (a token of role anon) as the bearer,
      // the request is the anon role's, which the server refuses; so is a signed token of role anon.
      let body = #"{"p_device":"\#(UUID())","p_device_key":"\#(String(repeating: "a", count: 64))"}"#
      for token in [nil, api.anonKey, api.project.accessToken(for: UUID(), role: "anon")] {
        let response = try await api.rpc("device_mark", body, token: token)
        #expect(response.status == 401 && response.code == "42501", "\(response)")
      }
      // Through the transport, a token of role anon is refused after one refresh.
      let tokens = Tokens(api.project.accessToken(for: UUID(), role: "anon"))
      let device = try APIDevice(api, tokens: tokens)
      try await device.book(try await device.addRestaurant())
      let error = await #expect(throws: SupabaseError.self) { try await device.replicator.push() }
      #expect(error?.description.contains("sign in again") == true)
      #expect(tokens.refreshes == [false, true])
      #expect(try api.serverEventCount() == 0)
    }

    @Test("a user's crafted arguments reach nothing of another user's")
    func craftedArguments() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let (alice, bob) = (UUID(), UUID())
      let phone = try APIDevice(api, tokens: Tokens(api.token(alice)))
      let restaurant = try await phone.addRestaurant()
      for index in 0..<3 { try await phone.book(restaurant, name: "Alice \(index)") }
      #expect(try await phone.replicator.push().pushed == 3)
      let aliceDevice = try await phone.replicator.deviceCredentials()
      let aliceMark = try await phone.transport.pushedMark(device: aliceDevice)
      let aliceEvents = try api.serverEventIDs(of: alice)
      let bobToken = api.token(bob)
      let key = aliceDevice.key
      let device = aliceDevice.id.lowercasedString

      // Alice's device ID and key, from Bob's session: his own (empty) mark, and a push that sets
      // only his.
      let mark = try await api.rpc(
        "device_mark", #"{"p_device":"\#(device)","p_device_key":"\#(key)"}"#, token: bobToken)
      #expect(mark.status == 200 && mark.rows.first?["pushed_through"] as? Int == 0, "\(mark)")
      let moved = try await api.rpc(
        "push", #"{"p_device":"\#(device)","p_device_key":"\#(key)","p_through":999,"p_events":[]}"#,
        token: bobToken)
      #expect(moved.status == 200, "\(moved)")
      #expect(try await phone.transport.pushedMark(device: aliceDevice) == aliceMark)
      // Alice's event IDs: refused for Bob, one by one, and her rows unchanged.
      let stolen = try phone.store.events(from: 1).filter { RestaurantBookingSchema.isReplicated($0.stream) }
      let events = String(
        decoding: ReplicationWire.events(
          stolen.map { OutgoingEvent($0, payload: PayloadJSON.of($0)) }), as: UTF8.self)
      let taken = try await api.rpc(
        "push", #"{"p_device":"\#(UUID())","p_device_key":"\#(key)","p_through":3,"p_events":\#(events)}"#,
        token: bobToken)
      #expect(taken.status == 200 && taken.rows.count == 3, "\(taken)")
      for row in taken.rows {
        #expect(row["outcome"] as? String == "refused" && row["reason"] as? String == "the event ID is taken")
      }
      // Pulling past his head, at her positions, or with her event at the cursor: refused; from 0: nothing.
      let beyond = try await api.rpc(
        "pull", #"{"p_after":2,"p_after_id":null,"p_limit":10000,"p_max_bytes":16777216,"p_wait_ms":0}"#,
        token: bobToken)
      #expect(beyond.status == 400 && beyond.code == "EL002", "\(beyond)")
      let all = try await api.rpc(
        "pull", #"{"p_after":0,"p_after_id":null,"p_limit":10000,"p_max_bytes":16777216,"p_wait_ms":0}"#,
        token: bobToken)
      #expect(all.status == 200 && all.rows.isEmpty, "\(all)")
      // An argument naming an owner has nowhere to go: no function takes it.
      let owner = try await api.rpc(
        "pull",
        #"{"p_after":0,"p_after_id":null,"p_limit":10,"p_max_bytes":1024,"p_wait_ms":0,"p_owner":"user:\#(alice)"}"#,
        token: bobToken)
      #expect(owner.status == 404 && owner.code == "PGRST202", "\(owner)")
      let info = try await api.rpc("server_info", "{}", token: bobToken)
      #expect(info.rows.first?["owner"] as? String == "user:\(bob.lowercasedString)")
      #expect(info.rows.first?["owner_head"] as? Int == 0)
      // The functions of eventlog (behind eventlog_api) are not exposed, and their tables even less.
      let hidden = try await api.rpc("pull_events", "{}", token: bobToken, profile: "eventlog")
      #expect(hidden.status == 406 && hidden.code == "PGRST106", "\(hidden)")
      // A token of another role for Alice's ID (the service role's, which bypasses row-level
      // security on tables) owns nothing through the functions.
      let service = try await api.rpc(
        "server_info", "{}", token: api.project.accessToken(for: alice, role: "service_role"))
      #expect(service.status == 403 && service.code == "42501", "\(service)")

      // Alice is untouched: her rows, her mark, and her next push and pull.
      #expect(try api.serverEventIDs(of: alice) == aliceEvents)
      try await phone.book(restaurant, name: "Alice 3")
      let next = try await phone.replicator.push()
      #expect(next.pushed == 1 && next.rejected == 0 && next.pending == 0, "\(next)")
      #expect(try await phone.replicator.pull().alreadyPresent == 4)
      #expect(try api.serverEventIDs(of: bob).isEmpty)
    }

    @Test("dropped answers, a gateway's 502s and restarts mid-push: each event stored exactly once")
    func faultsMidPush() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let phone = try APIDevice(api, tokens: Tokens(api.token(user)))
      let restaurant = try await phone.addRestaurant()

      // The push commits, and the answer is lost: the retry finds the events stored.
      for index in 0..<3 { try await phone.book(restaurant, name: "Guest \(index)") }
      api.standIn.inject(.dropAfterCommit, function: "push")
      let afterDrop = try await phone.replicator.push()
      #expect(afterDrop.pushed == 0 && afterDrop.alreadyStored == 3 && afterDrop.pending == 0, "\(afterDrop)")
      // Dropped before the database, and a gateway's 502 (HTML, no JSON error) twice: retried.
      for index in 3..<5 { try await phone.book(restaurant, name: "Guest \(index)") }
      api.standIn.inject(.dropBeforeTransaction, function: "push")
      api.standIn.inject(.badGateway, times: 2)
      let afterGateway = try await phone.replicator.push()
      #expect(afterGateway.pushed == 2 && afterGateway.pending == 0, "\(afterGateway)")
      #expect(api.standIn.requests.contains { $0.status == 502 })

      // The gateway goes away mid-push and comes back.
      for index in 5..<8 { try await phone.book(restaurant, name: "Guest \(index)") }
      api.standIn.stop()
      let push = Task { try await phone.replicator.push() }
      try await Task.sleep(for: .milliseconds(600))
      try api.standIn.start()
      let afterRestart = try await push.value
      #expect(afterRestart.pushed == 3 && afterRestart.pending == 0, "\(afterRestart)")
      // A pull whose answer is lost is asked again.
      let tablet = try APIDevice(api, tokens: Tokens(api.token(user)))
      api.standIn.inject(.dropAfterCommit, function: "pull")
      let pulled = try await tablet.replicator.pull()
      #expect(pulled.pulled == 8 && pulled.cursor == 8, "\(pulled)")

      let local = try phone.replicatedEventIDs()
      #expect(try api.serverEventIDs(of: user) == local, "each event once, in local order")
      #expect(try await tablet.bookingIDs() == (try await phone.bookingIDs()))
      try tablet.expectHealthy()
    }

    @Test("slow answers time out and are retried within the deadline; past it, the push gives up unmarked")
    func slowAnswers() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let transport = try api.transport(Tokens(api.token(user)), requestTimeout: .seconds(2))
      let device = try APIDevice(api, tokens: Tokens(api.token(user)))
      let replicator = Replicator(store: device.store, transport: transport, options: APIDevice.quickOptions)
      let restaurant = try await device.addRestaurant()
      try await device.book(restaurant)
      // The push commits, and its answer comes after the client gave up: the retry finds it stored.
      api.standIn.inject(.slowAnswer(.seconds(4)), function: "push")
      let summary = try await replicator.push()
      #expect(summary.alreadyStored == 1 && summary.pending == 0, "\(summary)")
      #expect(try api.serverEventCount() == 1)

      // Every answer slow: the one-shot deadline ends the push, nothing marked.
      try await device.book(restaurant)
      var options = APIDevice.quickOptions
      options.retryFor = .seconds(3)
      let bounded = Replicator(store: device.store, transport: transport, options: options)
      api.standIn.inject(.slowAnswer(.seconds(8)), times: 50, function: "device_mark")
      let started = ContinuousClock.now
      let error = await #expect(throws: ReplicationError.self) { try await bounded.push() }
      let elapsed = ContinuousClock.now - started
      api.standIn.removeFaults()
      guard case .gaveUp = error else {
        Issue.record("expected gaveUp, got \(String(describing: error))")
        return
      }
      #expect(
        elapsed < .seconds(3 + 6), "bounded by --retry-for (with slack for a loaded machine): \(elapsed)")
      #expect(try device.replicator.status().pending == 1)
    }

    @Test("a missing API: eventlog_api not exposed, or remote init never run")
    func missingAPI() async throws {
      let hidden = try await APIProject(exposedSchemas: ["public"])
      defer { hidden.project.stop() }
      let uninitialized = try await APIProject(initialized: false)
      defer { uninitialized.project.stop() }
      for (api, code) in [(hidden, "PGRST106"), (uninitialized, "PGRST202")] {
        let transport = try api.transport(Tokens(api.token(UUID())))
        let error = await #expect(throws: SupabaseError.self) { try await transport.checkSchema() }
        guard case .apiMissing(_, let reason) = error else {
          Issue.record("expected apiMissing, got \(String(describing: error))")
          continue
        }
        #expect(reason.hasPrefix(code), "\(reason)")
        let text = String(describing: error)
        #expect(text.contains("eventlog remote init") && text.contains("'eventlog_api'"), "\(text)")
        #expect(error?.failureKind == .fatal)
      }
    }

    @Test("live: a long poll brings another device's events without waiting for the poll interval")
    func liveLongPoll() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let watcher = try APIDevice(api, tokens: Tokens(api.token(user)))
      let phone = try APIDevice(api, tokens: Tokens(api.token(user)))
      let stop = StopFlag()
      let watch = Task { try await watcher.replicator.watch(shouldStop: { stop.isSet }) }
      // The first round (nothing to do), then the long poll waits on the server.
      try await waitFor("the watcher's long poll") {
        api.standIn.requests.contains { $0.function == "pull" && $0.body.contains(#""p_wait_ms":2000"#) }
      }
      let booking = try await phone.book(try await phone.addRestaurant())
      #expect(try await phone.replicator.push().pushed == 1)
      // The poll interval is 30 s: only the long poll can bring it within the wait below.
      try await waitFor("the booking on the watching device") {
        try await watcher.bookingIDs() == [booking.id]
      }
      // A local commit is pushed at once too.
      let own = try await watcher.book(try await watcher.addRestaurant("Sushi Bar"), name: "Watcher")
      try await waitFor("the watcher's push") { try api.serverEventIDs(of: user).count == 2 }
      #expect(try await phone.replicator.pull().pulled == 1)
      #expect(try await phone.bookingIDs() == sorted([booking.id, own.id]))
      let stopping = ContinuousClock.now
      stop.set()
      let total = try await watch.value
      #expect(ContinuousClock.now - stopping < .seconds(5), "stopped promptly")
      #expect(total.pull.pulled == 1 && total.push.pushed == 1, "\(total)")
      try watcher.expectHealthy()
    }

    @Test func theKeyAndTheTokenAreNowhere() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let token = api.token(user)
      let device = try APIDevice(api, tokens: Tokens(token))
      try await device.book(try await device.addRestaurant())
      _ = try await device.replicator.push()
      _ = try await device.replicator.pull()
      for file in ["data.mdb", "lock.mdb"] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: device.store.path + "/" + file)))
        for secret in [token, api.anonKey] {
          let needle = Array(secret.utf8)
          let found = bytes.indices.dropLast(needle.count).contains {
            bytes[$0..<($0 + needle.count)].elementsEqual(needle)
          }
          #expect(!found, "a secret is in \(file)")
        }
      }
      var dumped = ""
      dump(device.transport, to: &dumped)
      for text in [
        "\(device.transport)", dumped, device.transport.server, "\(try device.replicator.status())",
      ] {
        #expect(!text.contains(token) && !text.contains(api.anonKey), "\(text)")
      }

      // A server that repeats the credentials in its errors: they are cut out of what the error keeps.
      let echo = try HostileProject { request in
        let said = "you sent \(request.headers["apikey"] ?? "") and \(request.headers["authorization"] ?? "")"
        let status = request.path.hasSuffix("/server_info") ? 500 : 401
        return .json(
          #"{"code":"\#(status == 500 ? "XX000" : "PGRST301")","message":"\#(said)","details":null,"hint":null}"#,
          status: status)
      }
      let hostile = try SupabaseTransport(
        projectURL: echo.url, apiKey: "key-\(UUID())", accessToken: { _ in token })
      for call in [{ try await hostile.checkSchema() }, { _ = try await hostile.head() }]
        as [@Sendable () async throws -> Void]
      {
        let error = await #expect(throws: SupabaseError.self) { try await call() }
        let text = String(describing: error)
        #expect(text.contains("[redacted]") && !text.contains(token) && !text.contains("key-"), "\(text)")
      }
    }

    /// Issue 28: the error was cleaned of the whole token and key only, so a server that quoted
    /// them in halves, or the token's payload or signature alone, had those printed.
    @Test("a server quoting the token and the key in parts: no run of 8 of their characters is kept")
    func secretsQuotedInPartsAreCut() async throws {
      let token = TestJWT.accessToken(
        subject: UUID(), expiresAt: Date().addingTimeInterval(600), secret: "a-secret-of-the-test-project")
      let key = TestJWT.anonKey(secret: "a-secret-of-the-test-project")
      let segments = token.split(separator: ".").map(String.init)
      #expect(segments.count == 3)
      let server = try HostileProject { request in
        let bearer = String((request.headers["authorization"] ?? "").dropFirst("Bearer ".count))
        let apikey = request.headers["apikey"] ?? ""
        let said =
          "first half \(bearer.prefix(bearer.count / 2)), second half \(bearer.dropFirst(bearer.count / 2)); "
          + "claims \(bearer.split(separator: ".").dropFirst().first ?? ""); "
          + "signature \(bearer.split(separator: ".").last ?? ""); key \(apikey.prefix(30))…\(apikey.suffix(30))"
        let status = request.path.hasSuffix("/head") ? 401 : 500
        return .json(
          #"{"code":"\#(status == 500 ? "XX000" : "PGRST301")","message":"\#(said)","details":null,"hint":null}"#,
          status: status)
      }
      let transport = try SupabaseTransport(projectURL: server.url, apiKey: key, accessToken: { _ in token })
      for call in [{ try await transport.checkSchema() }, { _ = try await transport.head() }]
        as [@Sendable () async throws -> Void]
      {
        let error = await #expect(throws: SupabaseError.self) { try await call() }
        let text = String(describing: error)
        #expect(text.contains("first half [redacted]"), "\(text)")
        for secret in [token, key] {
          #expect(SecretCheck.longestSharedRun(text, secret) < 8, "\(text)")
        }
        for segment in segments { #expect(!text.contains(segment), "\(text)") }
      }
    }

    @Test("a pulled page past its cap is asked again row by row; a row past it is recorded, not fatal")
    func oversizedAnswers() async throws {
      let token = "token-\(UUID())"
      let server = try HostileProject { request in
        switch request.path {
        case "/rest/v1/rpc/head": return .json("1")
        case "/rest/v1/rpc/pull":
          // A body without end: the client stops reading at its cap.
          return .endless(
            chunk: Array(#"[{"event_position":1,"payload":"#.utf8) + Array(repeating: 0x20, count: 65_536),
            total: 200 << 20, declaredLength: nil)
        default:
          return .json(#"{"code":"XX000","message":"unexpected","details":null,"hint":null}"#, status: 500)
        }
      }
      let transport = try SupabaseTransport(
        projectURL: server.url, apiKey: "key", accessToken: { _ in token })
      let rows = try await transport.pull(
        after: PullCursor(position: 0, eventID: nil), limit: 1_000, maxBytes: 8 << 20, wait: .zero)
      guard case .malformed(1, nil, let reason)? = rows.first, rows.count == 1 else {
        Issue.record("expected one malformed row, got \(rows)")
        return
      }
      #expect(reason.contains("larger than"))
      let pulls = server.server.requests.filter { $0.path.hasSuffix("/pull") }.map {
        String(decoding: $0.body, as: UTF8.self)
      }
      #expect(
        pulls.count == 2 && pulls[0].contains(#""p_limit":1000"#) && pulls[1].contains(#""p_limit":1,"#),
        "\(pulls)")
      // Each exchange stopped at its cap (about 28 MiB and 24 MiB here), far short of the 200 MiB sent
      // each time.
      #expect(server.server.bodyBytesSent < 100 << 20, "\(server.server.bodyBytesSent)")
    }

    @Test("rows with times up to the year 9999 and unknown types come through exactly")
    func rowsAtTheEdges() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let user = UUID()
      let device = try APIDevice(api, tokens: Tokens(api.token(user)))
      let late = UUID()
      let unknown = UUID()
      try api.project.superuser(
        """
        INSERT INTO eventlog.owners (owner) VALUES ('user:\(user.lowercasedString)');
        INSERT INTO eventlog.events (owner, position, id, origin_device, origin_sequence, stream, type,
          schema_version, payload, metadata, recorded_at)
        VALUES ('user:\(user.lowercasedString)', 1, '\(late)', gen_random_uuid(), 1, 'booking-\(UUID())',
          'BookingDeleted', 1, '{"bookingID": "\(UUID().lowercasedString)"}', '{"origin": "o\\"dd\\n"}',
          '9999-12-31 23:59:59.999999+00'),
          ('user:\(user.lowercasedString)', 2, '\(unknown)', gen_random_uuid(), 2, 'booking-\(UUID())',
          'BookingRenamedInTheFuture', 7, '{"name": "é 🍝 \\u0001"}', '{"origin": "x"}', now())
        """)
      let rows = try await device.transport.pull(
        after: PullCursor(position: 0, eventID: nil), limit: 10, maxBytes: 1 << 20, wait: .zero)
      #expect(rows.count == 2)
      guard case .event(let first)? = rows.first, case .event(let second)? = rows.last else {
        Issue.record("\(rows)")
        return
      }
      // The last microsecond of the year 9999 is within the bounds a row is checked against only when
      // read from its digits (through a Double it would be the year 10000, and the row malformed).
      #expect(first.id == late && first.recordedAt == Date(microsecondsSince1970: 253_402_300_799_999_999))
      #expect(first.metadata.origin == "o\"dd\n")
      #expect(second.id == unknown && second.schemaVersion == 7)
      #expect(String(decoding: second.payload, as: UTF8.self) == #"{"name": "é 🍝 \u0001"}"#)
      let pulled = try await device.replicator.pull()
      #expect(pulled.cursor == 2 && pulled.unreadable >= 1, "\(pulled)")
    }
  }
}

/// A stop switch for live replication.
final class StopFlag: Sendable {
  private let flag = Mutex(false)
  func set() { flag.withLock { $0 = true } }
  var isSet: Bool { flag.withLock { $0 } }
}

/// Waits (sleeping the task, never the thread) until `condition` holds, for at most `limit`
/// (generous: on a loaded 2-core machine a task may wait seconds for a thread).
func waitFor(
  _ what: String, within limit: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
  _ condition: () async throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + limit
  while try await !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
      return
    }
    try await Task.sleep(for: .milliseconds(50))
  }
}
