import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// A full disk is named as such, gives its space back, and a failed write into a new path leaves
/// nothing behind (issue 14, item 8).
@Suite("eventlog on a full disk")
struct FullDiskCLITests {
  /// An export of `count` bookings (after a catalog sync), as JSON Lines.
  static func export(bookings count: Int, in cli: EventLogBinary) throws -> String {
    try #require(try cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let lines = exportedEvents(try cli("export").stdout).split(separator: "\n").map(String.init)
    let notes = String(repeating: "n", count: 400)
    var result = lines
    for index in 0..<count {
      let id = UUID().uuidString
      let payload =
        #"{"bookingID":"\#(id)","createdAt":"2026-11-30T04:18:59Z","customerName":"Guest \#(index)","date":"2099-12-24T19:30:00Z","notes":"\#(notes)","partySize":2,"restaurantID":"\#(pastaID.uppercased())","restaurantName":"Pasta Palace"}"#
      result.append(
        #"{"seq":\#(lines.count + index + 1),"id":"\#(UUID().uuidString.lowercased())","stream":"booking-\#(id)","version":1,"type":"BookingCreated","recordedAt":"2026-11-30T04:18:59Z","payload":\#(payload),"metadata":{"correlationId":null,"causationId":null,"origin":"cli"}}"#
      )
    }
    return result.joined(separator: "\n") + "\n"
  }

  @Test(
    "import into a new path on a full disk: 'the disk is full' naming the environment; nothing left behind")
  func fullDiskImport() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let file = try cli.file("big.jsonl", try Self.export(bookings: 1_500, in: cli))
    let disk = try SmallFileSystem(bytes: 1 << 20)
    try disk.fill(leaving: 320 << 10)  // room to create the environment, not for the import
    let free = disk.freeBytes()
    let path = disk.path("new.db")
    let run = try cli.run(["--db", path, "import", "--unverified", file], useDatabase: false)
    #expect(run.status == 1, "\(run)")
    #expect(
      run.stderr.hasPrefix("Error: the disk is full: cannot write the event log at '\(path)'"), "\(run)")
    #expect(!FileManager.default.fileExists(atPath: path), "a failed import left the environment behind")
    #expect(disk.freeBytes() == free)
  }

  @Test("a failed import into an existing empty environment gives back the disk space it took")
  func fullDiskGivesSpaceBack() async throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let file = try cli.file("big.jsonl", try Self.export(bookings: 1_500, in: cli))
    let disk = try SmallFileSystem(bytes: 3 << 20)
    let path = disk.path("empty.db")
    var store: EventStore? = try EventStore(path: path, projections: RestaurantBookingSchema.projections)
    store = nil
    _ = store
    try disk.fill(leaving: 320 << 10)
    let before = dataFileSize(path)
    let free = disk.freeBytes()
    let run = try cli.run(["--db", path, "import", "--unverified", file], useDatabase: false)
    #expect(run.status == 1, "\(run)")
    #expect(run.stderr.contains("the disk is full: cannot write the event log at '\(path)'"), "\(run)")
    #expect(dataFileSize(path) <= before, "data.mdb grew from \(before) to \(dataFileSize(path)) bytes")
    #expect(disk.freeBytes() >= free)
    #expect(try cli.run(["--db", path, "verify"], useDatabase: false).status == 0)
  }

  @Test("a sync into a new path on a full disk, or from a bad body, leaves no environment behind")
  func failedSyncLeavesNothing() throws {
    let cli = EventLogBinary()
    defer { cli.remove() }
    let disk = try SmallFileSystem(bytes: 256 << 10)
    try disk.fill()
    let path = disk.path("new.db")
    let full = try cli.run(
      ["--db", path, "restaurants", "sync", "--from", try cli.file("a.json", snapshotA)], useDatabase: false)
    #expect(full.status == 1, "\(full)")
    #expect(full.stderr.contains("'\(path)'"), "\(full)")
    #expect(!FileManager.default.fileExists(atPath: path), "\(full)")
    let bad = try cli("restaurants", "sync", "--from", try cli.file("bad.json", "[{]"))
    #expect(bad.status == 1, "\(bad)")
    #expect(!FileManager.default.fileExists(atPath: cli.database), "\(bad)")
  }
}
