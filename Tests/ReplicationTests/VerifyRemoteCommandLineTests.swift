import Foundation
import PostgresTestSupport
import TestKit
import Testing

/// `eventlog verify --remote` of the built `eventlog`, as a user runs it.
@Suite("eventlog verify --remote", .needsPostgres)
struct VerifyRemoteCommandLineTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  static let catalog = CommandLineReplicationTests.catalog

  func device(_ label: String = "verify-device") -> CommandLineDevice {
    CommandLineDevice(binary: Self.binary, catalog: Self.catalog, label: label)
  }

  @Test func aReplicatedDeviceChecksCleanAndSaysWhatItChecked() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = device()
    _ = try phone.book("Ada")
    _ = try phone.book("Grace")
    #expect(try phone.json("push", alice.url, "--json")["pushed"] as? Int == 2)
    _ = try phone.json("pull", alice.url, "--json")

    let text = try phone("verify", "--remote", alice.url)
    #expect(text.status == 0 && text.stdout.hasPrefix("OK: this environment matches the server."), "\(text)")
    #expect(text.stdout.contains("2 server event(s) of role:") && text.stdout.contains("2 here unchanged"))
    let report = try phone.json("verify", "--remote", alice.url, "--json")
    #expect(report["ok"] as? Bool == true && (report["problems"] as? [Any])?.isEmpty == true)
    let checked = try #require(report["checked"] as? [String: Int])
    #expect(checked["serverEvents"] == 2 && checked["matched"] == 2 && checked["chainRecomputed"] == 2)
    #expect(checked["attestedHeads"] == 1 && checked["ownEvents"] == 2)
    let serverHead = try #require(report["serverHead"] as? [String: Any])
    #expect(serverHead["position"] as? Int == 2 && (serverHead["chain"] as? String)?.count == 64)
    // What the pull recorded, in remote status too.
    let status = try phone.json("remote", "status", "--json")
    #expect((status["serverHead"] as? [String: Any])?["chain"] as? String == serverHead["chain"] as? String)
    // The URL from the environment; a URL without --remote is a usage error; no URL at all too.
    let fromEnvironment = try phone("verify", "--remote", environment: ["EVENTLOG_REMOTE": alice.url])
    #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
    let usage = try phone("verify", alice.url)
    #expect(usage.status == 64 && usage.stderr.contains("'URL' is given only with '--remote'"), "\(usage)")
    let missing = try phone("verify", "--remote", environment: ["EVENTLOG_REMOTE": ""])
    #expect(missing.status == 64 && missing.stderr.contains("missing 'URL'"), "\(missing)")
  }

  /// A copy made by export, edited, and imported holds the same event IDs with other content:
  /// the server's copy of the owner's log names each event that differs.
  @Test func anExportEditedAndImportedDiffersFromTheServer() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = device()
    _ = try phone.book("Ada")
    _ = try phone.book("Grace")
    _ = try phone.json("push", alice.url, "--json")
    let exported = phone.directory.path("export.jsonl")
    #expect(try phone("export", "--output", exported).status == 0)
    let lines = try String(contentsOfFile: exported, encoding: .utf8)
    // The first booking's party (its name is sealed: an edit of it would only break the seal).
    let party = try #require(lines.range(of: #""partySize":2"#))
    var edited = lines
    edited.replaceSubrange(party, with: #""partySize":3"#)
    try edited.write(toFile: exported, atomically: true, encoding: .utf8)
    let copy = device("verify-copy")
    // The edited line no longer matches the export's manifest: import refuses it; a forger
    // imports it unchecked (or rewrites the manifest too, which nothing local can tell).
    #expect(try copy("import", exported).status == 1)
    let imported = try copy("import", "--unverified", exported)
    #expect(imported.status == 0, "\(imported)")
    #expect(try copy("verify").status == 0, "the copy is sound on its own")

    let run = try copy("verify", "--remote", alice.url, "--json")
    #expect(run.status == 1 && run.stderr.contains("verify --remote found 1 difference(s)"), "\(run)")
    let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    #expect(report["ok"] as? Bool == false)
    let problems = try #require(report["problems"] as? [[String: Any]])
    #expect(problems.count == 1 && problems.first?["kind"] as? String == "content-differs", "\(problems)")
    #expect((problems.first?["problem"] as? String)?.contains("payload") == true)
    #expect(problems.first?["position"] as? Int == 1)
    let text = try copy("verify", "--remote", alice.url)
    #expect(text.status == 1 && text.stdout.contains("content-differs"), "\(text)")
  }
}
