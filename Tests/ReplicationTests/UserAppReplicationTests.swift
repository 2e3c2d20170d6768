import Foundation
import PostgresTestSupport
import TestKit
import Testing

/// The `User` entity shared between devices as Docs/AddingAnEntity.md shows it: the app's own
/// `user-eventlog` (Tests/Support/UserEventLog), `remote init`, `push`, `pull` and `replicate`.
@Suite("user-eventlog: users shared between devices", .needsPostgres)
struct UserAppReplicationTests {
  static let binary = builtProduct("user-eventlog", override: "USER_EVENTLOG_BINARY")

  /// `user-eventlog --db <device> arguments…`, which must succeed.
  struct Device {
    let directory = TemporaryDirectory("user-device")

    @discardableResult
    func callAsFunction(_ arguments: String...) throws -> String {
      let run = try runChild(binary, ["--db", directory.environment()] + arguments)
      #expect(run.status == 0, "\(arguments): \(run)")
      return run.stdout
    }

    func names() throws -> [String] {
      let list = try JSONSerialization.jsonObject(with: Data(self("users", "list", "--json").utf8))
      return (list as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }
  }

  @Test("a user created on the phone reaches the laptop; renames made apart end the same on both")
  func twoDevices() async throws {
    let fixture = try await ServerFixture(initialized: false)
    let initRun = try runChild(Self.binary, ["remote", "init", fixture.ownerURL])
    #expect(initRun.status == 0, "\(initRun)")
    let ada = try fixture.customer("ada")
    let phone = Device()
    let laptop = Device()
    let created = try JSONSerialization.jsonObject(
      with: Data(phone("users", "create", "--name", "Ada", "--email", "ada@example.com", "--json").utf8))
    let id = try #require((created as? [String: Any])?["id"] as? String)
    #expect(try phone("push", ada.url).contains("pushed 1"))
    try laptop("pull", ada.url)
    #expect(try laptop.names() == ["Ada"])

    // Apart: the phone renames Ada, then the laptop does (the later stamp).
    try phone("users", "rename", id, "--name", "Ada on the phone")
    try laptop("users", "rename", id, "--name", "Ada on the laptop")
    for device in [laptop, phone, laptop] { try device("replicate", ada.url) }
    #expect(try phone.names() == ["Ada on the laptop"])
    #expect(try laptop.names() == ["Ada on the laptop"])
    for device in [phone, laptop] {
      try device("verify")
      #expect(try device("replay").contains("the projections match the live state."))
    }
  }
}
