import Foundation
import PostgresTestSupport
import TestKit
import Testing

/// Provenance a copy keeps, and the order every device can show: the server's.
@Suite("Server order and provenance on the command line", .needsPostgres)
struct ServerOrderProvenanceTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  static let catalog = CommandLineReplicationTests.catalog

  static func ids(_ run: ChildRun) throws -> [String] {
    try run.stdout.split(separator: "\n").compactMap { line in
      (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
    }
  }

  @Test func twoDevicesTellTheSameStoryInTheServersOrderAndAnExportKeepsIt() async throws {
    let fixture = try await ServerFixture()
    let alice = try fixture.customer("alice")
    let phone = CommandLineDevice(binary: Self.binary, catalog: Self.catalog, label: "order-phone")
    let tablet = CommandLineDevice(binary: Self.binary, catalog: Self.catalog, label: "order-tablet")
    // Each books offline first, then both replicate: each log holds its own bookings first.
    _ = try phone.book("Ada")
    _ = try tablet.book("Grace")
    _ = try tablet.book("Linus")
    for device in [phone, tablet, phone] { _ = try device.json("replicate", alice.url, "--json") }
    let bookings = ["--type", "BookingCreated", "--json"]
    let phoneLocal = try Self.ids(try phone.run(["log"] + bookings))
    let tabletLocal = try Self.ids(try tablet.run(["log"] + bookings))
    #expect(phoneLocal.count == 3 && Set(phoneLocal) == Set(tabletLocal))
    #expect(phoneLocal != tabletLocal, "each log lists its own bookings first")
    let phoneServer = try Self.ids(try phone.run(["log", "--server-order"] + bookings))
    let tabletServer = try Self.ids(try tablet.run(["log", "--server-order"] + bookings))
    #expect(phoneServer == tabletServer, "the server's order is the one order both show")
    // Every line says where the server holds the event, and whose log it is.
    let line = try #require(
      try JSONSerialization.jsonObject(
        with: Data(try phone("log", "--json", "--type", "BookingCreated", "--limit", "1").stdout.utf8))
        as? [String: Any])
    #expect(
      line["serverPosition"] as? Int != nil && (line["owner"] as? String)?.hasPrefix("role:") == true,
      "\(line)")
    let table = try phone("log", "--server-order")
    #expect(table.stdout.split(separator: "\n").first?.contains("POS") == true, "\(table)")
    // An export keeps the positions and the owner; its copy shows the same, and exports the same.
    let file = phone.directory.path("backup.jsonl")
    #expect(try phone("export", "--output", file).status == 0)
    let copy = CommandLineDevice(binary: Self.binary, catalog: Self.catalog, label: "order-copy")
    #expect(try copy("import", file).status == 0)
    let original = try String(contentsOfFile: file, encoding: .utf8)
    #expect(exportedEvents(try copy("export").stdout) == exportedEvents(original))
    #expect(try Self.ids(try copy.run(["log", "--server-order"] + bookings)) == phoneServer)
    #expect(try copy.json("remote", "status", "--json")["owner"] as? String == line["owner"] as? String)
  }
}
