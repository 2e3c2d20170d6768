import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// Item 3: bytes flipped inside stored records are found by `verify` (the library's and the
/// binary's) and by reads of those events, while the other events stay readable; a truncated or
/// foreign `data.mdb` gives a clear error, never a crash.
@Suite("Damage")
struct DamageTests {
  /// The sequence numbers whose records the damage test flips bytes in.
  static let damaged: Set<UInt64> = [7, 11]

  @Test("flipped bytes in two records: verify and reads name them, the other events stay readable")
  func flippedRecordBytes() async throws {
    let scratch = TemporaryDirectory("damage")
    let path = scratch.path("store")
    let markers = try await makeLogWithMarkers(at: path)

    // Damage every copy of the two markers: LMDB's copy-on-write leaves stale copies of pages.
    let dataURL = URL(fileURLWithPath: path).appendingPathComponent("data.mdb")
    var bytes = [UInt8](try Data(contentsOf: dataURL))
    for sequence in Self.damaged {
      let marker = Array(markers[sequence]!.utf8)
      let found = occurrences(of: marker, in: bytes)
      #expect(!found.isEmpty, "marker of event \(sequence) not found in data.mdb")
      for offset in found { bytes[offset + marker.count / 2] ^= 0x20 }
    }
    try Data(bytes).write(to: dataURL)

    // The library: verify names exactly the damaged events; reads of them throw; others read.
    var store: EventStore? = try openDomainStore(path)
    let report = try #require(store).verify()
    #expect(!report.isClean)
    let named = Set(report.problems.compactMap { $0.problem.contains("damaged") ? $0.sequence : nil })
    #expect(named == Self.damaged, "verify named \(report.problems)")
    for sequence in UInt64(1)...UInt64(markers.count + 4) {
      if Self.damaged.contains(sequence) {
        #expect {
          _ = try store?.event(at: sequence)
        } throws: { error in
          guard case EventStoreError.corruptedRecord(let named, _) = error else { return false }
          return named == sequence && "\(error)".contains("event \(sequence)")
        }
      } else {
        let event = try #require(try store?.event(at: sequence))
        if let marker = markers[sequence] {
          #expect(try event.decode(HardeningNote.self).marker == marker)
        }
      }
    }
    // A range read over a damaged event throws naming it; ranges around it still read.
    #expect(throws: EventStoreError.self) { try store?.events(from: 1) }
    #expect(try store?.events(from: 8, through: 10).count == 3)
    // The projections were not touched: the catalog still reads.
    do {
      let restaurants = EventSourcedRestaurantRepository(
        store: try #require(store), source: InMemoryRestaurantSource())
      #expect(try await restaurants.getAll().count == 3)
    }
    await release(&store)

    // The binary: verify exits 1 naming both events; show of a damaged event fails, others work.
    let verify = try EventLogBinary.run(["--db", path, "verify"])
    #expect(!verify.crashed, "\(verify)")
    #expect(verify.status == 1, "\(verify)")
    for sequence in Self.damaged {
      #expect((verify.stdout + verify.stderr).contains("\(sequence)"), "\(verify)")
    }
    let json = try EventLogBinary.run(["--db", path, "verify", "--json"])
    #expect(json.status == 1, "\(json)")
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(object?["ok"] as? Bool == false)
    let problemSeqs = Set(
      (object?["problems"] as? [[String: Any]] ?? []).compactMap { ($0["seq"] as? NSNumber)?.uint64Value })
    #expect(problemSeqs.isSuperset(of: Self.damaged), "\(json)")
    for sequence in Self.damaged {
      let show = try EventLogBinary.run(["--db", path, "show", "\(sequence)"])
      #expect(!show.crashed && show.status == 1, "\(show)")
      #expect(show.stderr.hasPrefix("Error:") && show.stderr.contains("\(sequence)"), "\(show)")
    }
    let healthy = try EventLogBinary.run(["--db", path, "show", "8"])
    #expect(healthy.status == 0, "\(healthy)")
    let list = try EventLogBinary.run(["--db", path, "restaurants", "list"])
    #expect(list.status == 0, "\(list)")
  }

  /// Kinds of `data.mdb` that are not an event store.
  enum Foreign: String, CaseIterable, CustomTestStringConvertible {
    case randomBytes, zeroBytes, emptyFile, sqliteFile, truncatedToTwoPages, truncatedToHalf

    var testDescription: String { rawValue }
    var isTruncatedCopy: Bool { self == .truncatedToTwoPages || self == .truncatedToHalf }
  }

  /// Writes the foreign `data.mdb` into a new environment directory at `path`.
  static func makeForeign(_ kind: Foreign, at path: String, scratch: TemporaryDirectory) async throws {
    try FileManager.default.createDirectory(
      atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let data = URL(fileURLWithPath: path).appendingPathComponent("data.mdb")
    var generator = SplitMix64(seed: 42)
    switch kind {
    case .randomBytes:
      try Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: data)
    case .zeroBytes:
      try Data(count: 65_536).write(to: data)
    case .emptyFile:
      try Data().write(to: data)
    case .sqliteFile:
      try makeSQLiteFile(at: data.path)
    case .truncatedToTwoPages, .truncatedToHalf:
      let source = scratch.path("source")
      try await makeLogWithMarkers(at: source, notes: 400)
      let full = try Data(contentsOf: URL(fileURLWithPath: source).appendingPathComponent("data.mdb"))
      #expect(full.count > 64 << 10, "the source log is too small to truncate meaningfully")
      let keep = kind == .truncatedToTwoPages ? 8_192 : full.count / 2
      try full.prefix(keep).write(to: data)
    }
  }

  @Test(
    "a foreign or truncated data.mdb: the eventlog binary exits 1 with Error: naming the path",
    arguments: Foreign.allCases)
  func foreignFileBinary(_ kind: Foreign) async throws {
    let scratch = TemporaryDirectory("foreign")
    let path = scratch.path("store")
    try await Self.makeForeign(kind, at: path, scratch: scratch)
    var commands = [["stats"], ["verify"], ["log", "--json"]]
    // A write command takes a zero-length data.mdb for a new environment (as LMDB does), so only
    // the other kinds must refuse it.
    if kind != .emptyFile { commands.append(["restaurants", "sync", "--from", "-"]) }
    for arguments in commands {
      let run = try EventLogBinary.run(["--db", path] + arguments)
      let check = {
        #expect(!run.crashed, "eventlog \(arguments) crashed on a \(kind) data.mdb: \(run)")
        #expect(run.status == 1, "\(arguments): \(run)")
        #expect(run.stderr.hasPrefix("Error:") && run.stderr.contains(path), "\(arguments): \(run)")
      }
      check()
    }
  }

  @Test(
    "a foreign data.mdb: EventStore.init throws an error naming the path",
    arguments: Foreign.allCases.filter { !$0.isTruncatedCopy && $0 != .emptyFile })
  func foreignFileInit(_ kind: Foreign) async throws {
    let scratch = TemporaryDirectory("foreign")
    let path = scratch.path("store")
    try await Self.makeForeign(kind, at: path, scratch: scratch)
    for readOnly in [false, true] {
      var options = EventStore.Options.hardening
      options.readOnly = readOnly
      #expect {
        _ = try EventStore(path: path, projections: RestaurantBookingSchema.projections, options: options)
      } throws: { error in
        "\(error)".contains(path)
      }
    }
  }

  @Test("an empty data.mdb: EventStore.init fails read-only naming the path, or starts a new log")
  func emptyFileInit() async throws {
    let scratch = TemporaryDirectory("foreign")
    let path = scratch.path("store")
    try await Self.makeForeign(.emptyFile, at: path, scratch: scratch)
    var options = EventStore.Options.hardening
    options.readOnly = true
    #expect {
      _ = try EventStore(path: path, projections: [], options: options)
    } throws: { error in
      "\(error)".contains(path)
    }
    // Read-write, LMDB takes a zero-length file for a new environment: an empty log, no crash.
    var store: EventStore? = try openDomainStore(path)
    #expect(try store?.head() == 0)
    await release(&store)
  }

  @Test(
    "a truncated data.mdb: EventStore.init throws an error naming the path",
    arguments: [Foreign.truncatedToTwoPages, .truncatedToHalf])
  func truncatedFileInit(_ kind: Foreign) async throws {
    let scratch = TemporaryDirectory("foreign")
    let path = scratch.path("store")
    try await Self.makeForeign(kind, at: path, scratch: scratch)
    #expect {
      let store = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: .hardening)
      _ = try store.verify()
    } throws: { error in
      "\(error)".contains(path) && "\(error)".contains("truncated")
    }
  }
}

/// A note event that no projection folds, whose payload carries a unique marker.
struct HardeningNote: EventPayload, Equatable {
  static let eventType = "HardeningNote"
  var marker: String
  var text: String
}

/// Creates a log at `path`: a sync of three restaurants (events 1–4), then `notes` notes, each on
/// its own stream, with a unique marker. Returns the markers by sequence number.
@discardableResult
func makeLogWithMarkers(at path: String, notes: Int = 10) async throws -> [UInt64: String] {
  var store: EventStore? = try openDomainStore(path)
  let source = InMemoryRestaurantSource()
  var generator = SplitMix64(seed: 7)
  source.set([
    RemoteRestaurant(id: generator.uuid(), name: "Pasta Palace", cuisine: "Italian"),
    RemoteRestaurant(id: generator.uuid(), name: "Sushi Sensation", cuisine: "Japanese"),
    RemoteRestaurant(id: generator.uuid(), name: "Burger Bonanza", cuisine: "American"),
  ])
  do {
    let repository = EventSourcedRestaurantRepository(store: try #require(store), source: source)
    _ = try await repository.refresh()
  }
  var markers: [UInt64: String] = [:]
  for index in 0..<notes {
    let marker = "DMGMARK-\(index)-\(generator.uuid().uuidString)"
    let result = try await store?.append(
      [try NewEvent(HardeningNote(marker: marker, text: String(repeating: "n", count: 40)))],
      to: StreamID("note-\(index)"), expectedVersion: .noStream)
    markers[try #require(result).lastSequence] = marker
  }
  await release(&store)
  return markers
}

/// A real SQLite database file (through `sqlite3` when installed, else its 100-byte header and a page).
func makeSQLiteFile(at path: String) throws {
  if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
    let run = try runChild("/usr/bin/sqlite3", [path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"])
    if run.status == 0 { return }
  }
  var bytes = Array("SQLite format 3\u{0}".utf8)
  bytes += [0x10, 0x00, 1, 1, 0, 64, 32, 32]
  bytes += [UInt8](repeating: 0, count: 4_096 - bytes.count)
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}
