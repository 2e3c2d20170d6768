import EventLog
import Foundation
import TestKit
import Testing

/// The auditor's `history`, `diff` and `replay --at`: an entity step by step, two points compared,
/// the state at a time.
@Suite("Audit history, diff and replay --at on the command line")
struct AuditHistoryTests {
  func object(_ run: ProgramRun) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run)")
  }

  @Test("history: each event of a stream, by whom and when, and the fields it changed")
  func history() async throws {
    let (cli, _, bookings) = try await AuditLogTests.populated()
    let ada = bookings[0]
    #expect(await cli("bookings", "delete", ada).status == 0)
    let run = await cli("history", "booking-\(ada)", "--json")
    #expect(run.status == 0, "\(run)")
    let history = try object(run)
    #expect(history["stream"] as? String == "booking-\(ada)")
    let events = try #require(history["events"] as? [[String: Any]])
    #expect(events.map { $0["seq"] as? Int } == [5, 9])
    #expect(events.map { $0["type"] as? String } == ["BookingCreated", "BookingDeleted"])
    #expect(events.allSatisfy { ($0["device"] as? String)?.count == 36 && $0["origin"] as? String == "cli" })
    let created = try #require((events[0]["changes"] as? [[String: Any]]))
    // The row, not the date index.
    #expect(created.map { $0["table"] as? String } == ["by-id"])
    #expect(created.first?["change"] as? String == "added" && created.first?["key"] as? String == ada)
    let after = try #require(created.first?["after"] as? [String: Any])
    #expect(after["customerName"] as? String == "Ada" && after["partySize"] as? Int == 2)
    let deleted = try #require((events[1]["changes"] as? [[String: Any]])?.first)
    #expect(deleted["change"] as? String == "removed" && deleted["after"] is NSNull)
    // As text: the provenance line, the fields, and what the removal took.
    let text = await cli("history", "booking-\(ada)")
    #expect(text.status == 0, "\(text)")
    #expect(text.stdout.hasPrefix("booking-\(ada): 2 events\n"))
    #expect(text.stdout.contains("BookingCreated (version 1)  by device "))
    #expect(text.stdout.contains("(this device), its seq 5, origin cli"))
    #expect(text.stdout.contains("customerName    \"Ada\"\n"))
    #expect(text.stdout.contains("customerName    \"Ada\" → -\n"))
  }

  @Test("history of a bare entity ID names the stream to give; an unknown stream fails")
  func historyHint() async throws {
    let (cli, _, bookings) = try await AuditLogTests.populated()
    let bare = await cli("history", bookings[1])
    #expect(bare.status == 1)
    #expect(bare.stderr.contains("'booking-\(bookings[1])' (give the whole name)"), "\(bare)")
    let unknown = await cli("history", "nothing-here")
    #expect(
      unknown.status == 1 && unknown.stderr.contains("the log has no stream 'nothing-here'"), "\(unknown)")
  }

  @Test("diff: rows gained, lost and changed between two sequences, either way round")
  func diff() async throws {
    let (cli, _, bookings) = try await AuditLogTests.populated()
    // 9–12: the second snapshot (Sushi's cuisine changed, Burger removed, Taco added, the refresh).
    #expect(await cli("restaurants", "sync", "--from", try cli.file("b.json", snapshotB)).status == 0)
    let forward = try object(await cli("diff", "4", "12", "--json"))
    #expect(forward["fromSeq"] as? Int == 4 && forward["toSeq"] as? Int == 12)
    let changes = try #require(forward["changes"] as? [[String: Any]])
    func kinds(_ changes: [[String: Any]], _ projection: String) -> [String: String] {
      Dictionary(
        changes.filter { $0["projection"] as? String == projection }.compactMap { change in
          (change["key"] as? String).map { ($0, change["change"] as? String ?? "") }
        }, uniquingKeysWith: { a, _ in a })
    }
    #expect(Set(kinds(changes, "bookings").values) == ["added"] && kinds(changes, "bookings").count == 4)
    #expect(Set(bookings).isSubset(of: kinds(changes, "bookings").keys))
    #expect(
      kinds(changes, "restaurants") == [
        sushiID: "changed", burgerID: "removed", "44444444-4444-4444-8444-444444444444": "added",
      ])
    let sushi = try #require(changes.first { $0["key"] as? String == sushiID })
    #expect(sushi["changedFields"] as? [String] == ["cuisine"])
    #expect((sushi["before"] as? [String: Any])?["cuisine"] as? String == "Japanese")
    #expect((sushi["after"] as? [String: Any])?["cuisine"] as? String == "Sushi")
    // Backwards: the same entries, each the other way.
    let backward = try #require(
      try object(await cli("diff", "12", "4", "--json"))["changes"] as? [[String: Any]])
    #expect(kinds(backward, "restaurants")[burgerID] == "added")
    #expect(Set(kinds(backward, "bookings").values) == ["removed"])
    // As text: a count line per table, then the entries.
    let text = await cli("diff", "8", "12")
    #expect(text.status == 0, "\(text)")
    #expect(text.stdout.hasPrefix("from event 8 to event 12 (4 events):\n"))
    #expect(text.stdout.contains("restaurants/by-id: 1 added, 1 removed, 1 changed\n"))
    #expect(text.stdout.contains("    cuisine  \"Japanese\" → \"Sushi\"\n"))
    #expect(await cli("diff", "8", "8").stdout.contains("no projection entry differs"))
    let past = await cli("diff", "1", "99")
    #expect(
      past.status == 1 && past.stderr.contains("'B' (event 99) is past the head of the log (12)"), "\(past)")
    let bad = await cli("diff", "1", "yesterday")
    #expect(bad.status == 64 && bad.stderr.contains("'yesterday'"), "\(bad)")
  }

  @Test("a time: the log up to the event before the first recorded later, and a note on later arrivals")
  func times() async throws {
    let (cli, _, _) = try await AuditLogTests.populated()
    // Event 8 was recorded in 2001 by another device and arrived last: at 2010 the log held nothing
    // recorded later than that only once it held nothing at all.
    let early = await cli("diff", "0", "2010-01-01T00:00:00Z", "--json")
    #expect(early.status == 0, "\(early)")
    #expect(try object(early)["toSeq"] as? Int == 0)
    #expect(
      early.stderr.contains(
        "note: 1 event recorded by 2010-01-01T00:00:00.000000Z reached this log after event 0"))
    let now = ISO8601.string(from: Date().addingTimeInterval(3600))
    let replay = await cli("replay", "--at", now, "--json")
    #expect(replay.status == 0, "\(replay)")
    #expect(try object(replay)["toSeq"] as? Int == 8)
    let text = await cli("replay", "--at", "2010-01-01T00:00:00Z")
    #expect(text.stdout.contains("state as of event 0 (the log at 2010-01-01T00:00:00.000000Z):"), "\(text)")
    let both = await cli("replay", "--at", now, "--to", "3")
    #expect(both.status == 64 && both.stderr.contains("'--to' and '--at'"), "\(both)")
    let apply = await cli("replay", "--at", now, "--apply")
    #expect(apply.status == 64 && apply.stderr.contains("'--at'"), "\(apply)")
  }
}
