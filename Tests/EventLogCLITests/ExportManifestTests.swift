import EventLog
import Foundation
import TestKit
import Testing

/// An export carries its records' chain values and a manifest: `import` and `verify --export`
/// check a file against both, naming the first line that does not match.
@Suite("Export manifest")
struct ExportManifestTests {
  /// A log of a sync and three bookings, and its export.
  static func exported() async throws -> (cli: InProcessCLI, text: String) {
    let cli = InProcessCLI()
    #expect(await cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    for name in ["Ada", "Grace", "Linus"] {
      #expect(
        await cli(
          "bookings", "create", "--restaurant", pastaID, "--date", "2099-12-24T19:30:00Z", "--party", "2",
          "--name",
          name
        ).status == 0)
    }
    let export = await cli("export")
    #expect(export.status == 0, "\(export)")
    return (cli, export.stdout)
  }

  static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

  static func manifest(_ text: String) throws -> [String: Any] {
    let last = try #require(lines(text).last)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    return try #require(object["manifest"] as? [String: Any])
  }

  @Test("a whole export checks and imports; its manifest names the head the environment's verify prints")
  func wholeExport() async throws {
    let (cli, text) = try await Self.exported()
    let manifest = try Self.manifest(text)
    #expect(manifest["complete"] as? Bool == true)
    #expect(manifest["events"] as? Int == 7)
    let verify = try #require(
      try JSONSerialization.jsonObject(with: Data(await cli("verify", "--json").stdout.utf8))
        as? [String: Any])
    let chain = try #require(verify["chain"] as? [String: Any])
    #expect((manifest["head"] as? [String: Any])?["chain"] as? String == chain["head"] as? String)
    let file = try cli.file("export.jsonl", text)
    let checked = await cli("verify", "--export", file)
    #expect(checked.status == 0 && checked.stdout.hasPrefix("OK: 7 events"), "\(checked)")
    let copy = InProcessCLI()
    let imported = await copy("import", file)
    #expect(
      imported.status == 0 && imported.stdout.contains("checked against the export's manifest"), "\(imported)"
    )
    #expect(exportedEvents(await copy("export").stdout) == exportedEvents(text))
  }

  @Test("a line changed, or removed, is refused by import naming it, and verify --export lists it")
  func tampered() async throws {
    let (cli, text) = try await Self.exported()
    var lines = Self.lines(text)
    // The last booking's restaurant name changed: its record's chain value no longer matches.
    let linus = try #require(lines.lastIndex { $0.contains(#""type":"BookingCreated""#) })
    lines[linus] = lines[linus].replacingOccurrences(
      of: #""restaurantName":""#, with: #""restaurantName":"X"#)
    let edited = try cli.file("edited.jsonl", lines.joined(separator: "\n") + "\n")
    let copy = InProcessCLI()
    let refused = await copy("import", edited)
    #expect(refused.status == 1, "\(refused)")
    #expect(refused.stderr.contains("line \(linus + 1): event \(linus + 1)"), "\(refused)")
    #expect(
      !FileManager.default.fileExists(atPath: copy.database), "a refused import created the environment")
    let listed = await cli("verify", "--export", edited, "--json")
    #expect(listed.status == 1)
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
    let problems = try #require(report["problems"] as? [[String: Any]])
    #expect(problems.first?["line"] as? Int == linus + 1, "\(problems)")
    // A line removed (the second booking): the next line does not follow the one before.
    var shorter = Self.lines(text)
    let bookings = shorter.indices.filter { shorter[$0].contains(#""type":"BookingCreated""#) }
    let grace = try #require(bookings.dropFirst().first)
    shorter.remove(at: grace)
    let removed = try cli.file("removed.jsonl", shorter.joined(separator: "\n") + "\n")
    let gap = await InProcessCLI()("import", removed)
    #expect(gap.status == 1 && gap.stderr.contains("a line before it was removed"), "\(gap)")
    // --unverified imports what the file holds, saying so.
    let anyway = InProcessCLI()
    let unverified = await anyway("import", "--unverified", edited)
    #expect(unverified.status == 0 && unverified.stdout.contains("--unverified"), "\(unverified)")
  }

  @Test("an export without a manifest is refused unless --unverified")
  func noManifest() async throws {
    let (cli, text) = try await Self.exported()
    let file = try cli.file("bare.jsonl", exportedEvents(text))
    let refused = await InProcessCLI()("import", file)
    #expect(refused.status == 1 && refused.stderr.contains("has no manifest"), "\(refused)")
    #expect(await InProcessCLI()("import", "--unverified", file).status == 0)
  }

  @Test("a filtered export checks line by line; import refuses a part of a log")
  func filtered() async throws {
    let (cli, _) = try await Self.exported()
    let part = await cli("export", "--type", "BookingCreated")
    #expect(part.status == 0)
    #expect(Self.lines(part.stdout).count == 4)
    let manifest = try Self.manifest(part.stdout)
    #expect(manifest["complete"] as? Bool == false)
    #expect((manifest["selection"] as? [String: String])?["type"] == "BookingCreated")
    // The first booking follows the catalog's events, which are not there: its line carries the
    // chain value before it; the next two follow it.
    #expect(Self.lines(part.stdout).map { $0.contains(#""previousChain":"#) } == [true, false, false, false])
    let file = try cli.file("part.jsonl", part.stdout)
    #expect(await cli("verify", "--export", file).status == 0)
    let refused = await InProcessCLI()("import", file)
    #expect(refused.status == 1 && refused.stderr.contains("holds part of a log"), "\(refused)")
  }

  @Test("a damaged record fails an export naming it; --salvage writes the rest, names it, and exits 1")
  func salvage() async throws {
    let (cli, _) = try await Self.exported()
    let data = URL(fileURLWithPath: cli.database).appendingPathComponent("data.mdb")
    // Every copy of Grace's sealed name: the record's and the booking row's.
    let sealed = try await sealedCustomerName(ofEvent: 6, in: cli.database)
    var bytes = try Data(contentsOf: data)
    var from = bytes.startIndex
    while let range = bytes.range(of: sealed, in: from..<bytes.endIndex) {
      bytes[range.lowerBound] ^= 0x01
      from = range.upperBound
    }
    try bytes.write(to: data)
    let failed = await cli("export")
    #expect(failed.status == 1 && failed.stderr.contains("event 6 is damaged"), "\(failed.stderr)")
    let salvaged = await cli("export", "--salvage")
    #expect(salvaged.status == 1, "\(salvaged)")
    #expect(salvaged.stderr.contains("event 6 is damaged and left out"), "\(salvaged.stderr)")
    #expect(Self.lines(salvaged.stdout).count == 7)
    let manifest = try Self.manifest(salvaged.stdout)
    #expect(manifest["damaged"] as? [Int] == [6])
    #expect(manifest["complete"] as? Bool == false)
    // The lines still check: the one after the damaged record says the value it was chained after.
    #expect(await cli("verify", "--export", try cli.file("salvaged.jsonl", salvaged.stdout)).status == 0)
  }
}
