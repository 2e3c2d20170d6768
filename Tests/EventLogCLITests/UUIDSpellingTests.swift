import Foundation
import TestKit
import Testing

@testable import EventLogCLI

/// One spelling of an ID (issue 16, item 5): every output writes UUIDs in lower case, inside
/// payloads and stream names too; `import` reads either case and restores the stored names.
@Suite("UUID spelling")
struct UUIDSpellingTests {
  /// Every UUID in `text` (either case).
  static func uuids(in text: String) -> [String] {
    let pattern = try? NSRegularExpression(
      pattern: "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
    let range = NSRange(text.startIndex..., in: text)
    return (pattern?.matches(in: text, range: range) ?? []).compactMap { match in
      Range(match.range, in: text).map { String(text[$0]) }
    }
  }

  /// A log with a catalog given in upper case, a booking and a deleted booking.
  static func populated() async throws -> (cli: InProcessCLI, booking: String, deleted: String) {
    let cli = InProcessCLI()
    let body = snapshotA.uppercasingUUIDs()
    try #require(await cli("restaurants", "sync", "--from", try cli.file("a.json", body)).status == 0)
    func create(_ name: String) async throws -> String {
      let run = await cli(
        "bookings", "create", "--restaurant", pastaID.uppercased(), "--date", "2099-01-01T19:00:00Z",
        "--party", "2", "--name", name, "--json")
      try #require(run.status == 0, "\(run)")
      return try #require((try json(run.stdout) as? [String: Any])?["id"] as? String)
    }
    let booking = try await create("Ada")
    let deleted = try await create("Alan")
    try #require(await cli("bookings", "delete", deleted.uppercased()).status == 0)
    return (cli, booking, deleted)
  }

  static func json(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
  }

  @Test("every output writes UUIDs in lower case: log, show, export, lists, replay, verify, stats, errors")
  func everyOutput() async throws {
    let (cli, booking, _) = try await Self.populated()
    var seen = Set<String>()
    let commands: [[String]] = [
      ["log"], ["log", "--json"], ["show", "5"], ["show", "5", "--json"], ["show", "6"], ["export"],
      ["restaurants", "list"], ["restaurants", "list", "--json"], ["bookings", "list"],
      ["bookings", "list", "--json"], ["replay", "--to", "6"], ["replay", "--to", "6", "--json"], ["replay"],
      ["verify"], ["verify", "--json"], ["stats", "--json"], ["remote", "status"],
      ["remote", "status", "--json"],
      ["bookings", "delete", booking.uppercased().replacingOccurrences(of: "A", with: "B")],
      ["bookings", "delete", "99999999-9999-4999-8999-99999999999A"],
      [
        "bookings", "create", "--restaurant", "ABCDEF00-0000-4000-8000-00000000000A", "--date",
        "2099-01-01T19:00:00Z", "--party", "2", "--name", "A",
      ],
    ]
    for command in commands {
      let run = await cli.run(command)
      // The test directory's name holds an upper-case UUID: a path is the user's text, kept as it is.
      // "storedStream" is a stream's stored bytes, the one field kept as stored.
      for text in [run.stdout, run.stderr].map({
        $0.replacingOccurrences(of: cli.directory.path, with: "DIR")
          .replacingOccurrences(of: #""storedStream":"[^"]*""#, with: "", options: .regularExpression)
      }) {
        for uuid in Self.uuids(in: text) {
          #expect(uuid == uuid.lowercased(), "\(command) writes \(uuid): \(text)")
          seen.insert(uuid)
        }
      }
    }
    #expect(seen.contains(booking) && seen.contains(pastaID))
    // Inside payloads and stream names.
    let export = await cli("export").stdout
    #expect(export.contains(#""stream":"booking-\#(booking)""#))
    #expect(
      export.contains(#""bookingID":"\#(booking)""#) && export.contains(#""restaurantID":"\#(pastaID)""#))
    let table = await cli("log").stdout
    #expect(table.contains("booking-\(booking)"))
  }

  @Test("import reads UUIDs in either case; export, import, export is byte for byte; the stored names stay")
  func importEitherCase() async throws {
    let (cli, booking, _) = try await Self.populated()
    let exported = await cli("export")
    #expect(exported.status == 0)
    let upper = exported.stdout.uppercasingUUIDs()
    #expect(upper != exported.stdout)
    for (name, input) in [("lower", exported.stdout), ("upper", upper)] {
      let other = InProcessCLI()
      // Upper-cased, the lines no longer match the manifest's digest: imported unverified.
      let imported = await other.run(
        ["import"] + (name == "upper" ? ["--unverified"] : []) + [try other.file("\(name).jsonl", input)])
      #expect(imported.status == 0, "\(name): \(imported)")
      #expect(exportedEvents(await other("export").stdout) == exportedEvents(exported.stdout), "\(name)")
      // The stream is stored as the domain names it: the repository appends to it.
      #expect(await other("log", "--stream", "booking-\(booking)").stdout.contains("BookingCreated"))
      #expect(
        await other("log", "--stream", "booking-\(booking.uppercased())").stdout.contains("BookingCreated"))
      let deleted = await other("bookings", "delete", booking)
      #expect(deleted.status == 0, "\(name): \(deleted)")
    }
  }
}

extension String {
  /// The text with every UUID in it upper-cased.
  func uppercasingUUIDs() -> String {
    var result = self
    for uuid in UUIDSpellingTests.uuids(in: self) {
      result = result.replacingOccurrences(of: uuid, with: uuid.uppercased())
    }
    return result
  }
}
