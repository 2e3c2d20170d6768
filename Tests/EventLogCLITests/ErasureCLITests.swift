import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// Forgetting a customer from the command line, end to end on one device: the name and notes are
/// never in the data file, the key is destroyed, and after `compact` no byte of the key is left;
/// the bookings, `verify`'s chain head, `replay`, `history` and a new export go on.
@Suite("Forgetting a customer on the command line")
struct ErasureCLITests {
  /// The environment's subject keys, read as replication reads them.
  static func keys(_ path: String) async throws -> [SubjectKey] {
    var options = EventStore.Options()
    options.readOnly = true
    let store = try EventStore(path: path, schema: .restaurantBooking, options: options)
    let keys = try store.subjectKeys()
    await store.close()
    return keys
  }

  static func occurs(_ bytes: [UInt8], in path: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path).appendingPathComponent("data.mdb"))
    return data.range(of: Data(bytes)) != nil
  }

  @Test("forget, compact: no name, notes or key in data.mdb or a new export; the chain and the bookings stay")
  func forgetThenCompact() async throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    #expect(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let name = "Zelda Quuxington"
    let notes = "allergic to hazelnuts, table 12"
    for day in ["2099-01-01", "2099-01-02"] {
      let made = try cli(
        "bookings", "create", "--restaurant", pastaID, "--date", "\(day)T19:00:00Z", "--party", "2",
        "--name", name, "--notes", notes)
      #expect(made.status == 0, "\(made)")
    }
    #expect(
      try cli(
        "bookings", "create", "--restaurant", pastaID, "--date", "2099-01-03T19:00:00Z",
        "--party", "4", "--name", "Other Guest"
      ).status == 0)
    // Sealed at append: the name and notes were never in the file.
    #expect(try !Self.occurs(Array(name.utf8), in: cli.database))
    #expect(try !Self.occurs(Array(notes.utf8), in: cli.database))
    let listed = try cli("bookings", "list", "--json")
    #expect(listed.stdout.contains(name), "the name opens before the erasure")
    let subjects = try #require(try json(try cli("subjects", "--json")) as? [[String: Any]])
    #expect(subjects.count == 2)
    #expect(subjects.contains { $0["events"] as? Int == 2 && $0["key"] as? Bool == true })
    let keysBefore = try await Self.keys(cli.database)
    let customer = try #require(
      subjects.first { $0["events"] as? Int == 2 }.flatMap { ($0["subject"] as? String).flatMap(UUID.init) })
    let key = try #require(keysBefore.first { $0.subject == customer }?.key)
    #expect(try Self.occurs(key, in: cli.database), "the key is in the file before the erasure")
    let headBefore = (try json(try cli("verify", "--json")) as? [String: Any])?["chain"] as? [String: Any]

    let forgot = try cli("bookings", "forget", "--customer", name, "--reason", "erasure request 118")
    #expect(forgot.status == 0, "\(forgot)")
    #expect(forgot.stdout.contains(customer.uuidString.lowercased()))
    // Once more: nothing readable carries the name now.
    #expect(try cli("bookings", "forget", "--customer", name, "--reason", "again").status == 1)

    let bookings = try #require(try json(try cli("bookings", "list", "--json")) as? [[String: Any]])
    #expect(bookings.count == 3)
    let erased = bookings.filter { ($0["erased"] as? [String]) == ["customerName", "notes"] }
    #expect(erased.count == 2)
    #expect(erased.allSatisfy { $0["customerName"] is NSNull && $0["partySize"] as? Int == 2 })
    #expect(bookings.contains { $0["customerName"] as? String == "Other Guest" })

    let verify = try #require(try json(try cli("verify", "--json")) as? [String: Any])
    #expect(verify["ok"] as? Bool == true)
    let erasedSubjects = try #require(verify["erasedSubjects"] as? [[String: Any]])
    #expect(erasedSubjects.map { $0["subject"] as? String } == [customer.uuidString.lowercased()])
    // The erasure is one more event: the records before it, and their chain values, are unchanged.
    let headSeq = try #require(headBefore?["seq"] as? Int)
    let shown = try #require(try json(try cli("show", String(headSeq), "--json")) as? [String: Any])
    #expect(shown["chain"] as? String == headBefore?["head"] as? String)
    #expect(try cli("replay").status == 0)

    #expect(try cli("compact").status == 0)
    #expect(try !Self.occurs(key, in: cli.database), "no byte of the destroyed key survives compact")
    #expect(try !Self.occurs(Array(name.utf8), in: cli.database))
    #expect(try !Self.occurs(Array(notes.utf8), in: cli.database))
    let export = try cli("export")
    #expect(export.status == 0)
    #expect(!export.stdout.contains(name) && !export.stdout.contains(notes))
    #expect(!export.stdout.contains(Data(key).base64EncodedString()))
    #expect(try cli("verify").status == 0)
  }

  @Test(
    "erase: an unknown subject exits 1; a missing or blank --reason (forget's too) is a usage error; erased twice appends once"
  )
  func eraseCommand() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    #expect(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    #expect(
      try cli(
        "bookings", "create", "--restaurant", pastaID, "--date", "2099-01-01T19:00:00Z",
        "--party", "2", "--name", "Ada"
      ).status == 0)
    let unknown = try cli("erase", UUID().uuidString, "--reason", "x")
    #expect(unknown.status == 1 && unknown.stderr.contains("no event holds personal data"), "\(unknown)")
    let subjects = try #require(try json(try cli("subjects", "--json")) as? [[String: Any]])
    let subject = try #require(subjects.first?["subject"] as? String)
    #expect(try cli("erase", subject).status == 64)
    let head = try cli.head()
    // A blank reason is a usage error of both commands, naming the flag; nothing is appended.
    for blank in ["", "  ", " \n\t"] {
      for arguments in [["erase", subject], ["bookings", "forget", "--customer", "Ada"]] {
        let refused = try cli.run(arguments + ["--reason", blank])
        #expect(refused.status == 64, "\(refused)")
        #expect(
          refused.stderr.contains(
            "Error: invalid value for '--reason': expected the reason for the erasure, not a blank text"),
          "\(refused)")
      }
    }
    #expect(try cli.head() == head)
    #expect(try cli("erase", subject, "--reason", "request").status == 0)
    #expect(try cli.head() == head + 1)
    let again = try cli("erase", subject, "--reason", "request")
    #expect(again.status == 0 && again.stdout.contains("erased already"), "\(again)")
    #expect(try cli.head() == head + 1)
    #expect(try cli("erase", "--help").stdout.contains("USAGE: eventlog erase"))
    #expect(try cli("subjects", "--help").status == 0)
    #expect(try cli("bookings", "forget", "--help").stdout.contains("--customer"))
  }
}
