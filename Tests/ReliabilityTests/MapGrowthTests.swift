import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// Item 3: a 1 MiB map grows under load in a writer process while another process reads.
  @Suite struct MapGrowthAcrossProcesses {
    @Test("a reader process survives the writer process growing the map: nothing lost or duplicated")
    func mapGrowsWhileAnotherProcessReads() async throws {
      let events = Mode.pick(quick: 12_000, full: 150_000)
      let initialMapSize = 1 << 20
      let directory = TemporaryDirectory()
      let path = directory.environment()
      let clock = ContinuousClock()
      let started = clock.now
      let writer = try Child(
        Binaries.stress,
        [
          "append", "--db", path, "--count", "\(events)", "--map-size", "\(initialMapSize)", "--concurrency",
          "2",
          "--batch-max", "32", "--notes-bytes", "200", "--durability", "nosync", "--seed", "\(Mode.seed)",
        ], in: directory.url)
      // The reader starts as soon as the store exists, with the same tiny map, so that the
      // writer grows the map under it several times.
      let ready = await writer.waitForLine(prefix: "ready", timeout: .seconds(30))
      try #require(ready != nil, "the writer did not open the store: \(writer.stderr)")
      let reader = try Child(
        Binaries.stress,
        [
          "read-loop", "--db", path, "--until-head", "\(events)", "--map-size", "\(initialMapSize)",
          "--timeout", "\(Mode.pick(quick: 120, full: 900))", "--seed", "\(Mode.seed)",
        ], in: directory.url)
      let timeout = Duration.seconds(Mode.pick(quick: 120, full: 900))
      let writerEnd = await writer.wait(timeout: timeout)
      let readerEnd = await reader.wait(timeout: timeout)
      let elapsed = clock.now - started
      try #require(writerEnd == .exited(0), "writer: \(String(describing: writerEnd)) \(writer.stderr)")
      try #require(readerEnd == .exited(0), "reader: \(String(describing: readerEnd)) \(reader.stderr)")

      let acknowledged = Acknowledged.parse(writer.lines)
      let readerLines = reader.lines
      let mapSizes = readerLines.compactMap { $0.hasPrefix("map ") ? Int($0.dropFirst(4)) : nil }
      let heads = readerLines.filter { $0.hasPrefix("head ") }.count
      let done = try #require(readerLines.last { $0.hasPrefix("done ") }).split(separator: " ")
      try #require(done.count == 3)
      let readCount = try #require(UInt64(done[1]))

      // Opened with the tiny map too: LMDB then adopts the size the writer stored.
      var options = EventStore.Options.readOnlyAccess
      options.mapSize = initialMapSize
      let opened = try EventStore(
        path: path, projections: RestaurantBookingSchema.projections, options: options)
      let head = try opened.head()
      let usedBytes = try opened.storageInfo().usedBytes
      let digest = try readLoopDigest(opened, through: readCount)
      await opened.close()
      let audit = try await audit(
        path: path, projections: RestaurantBookingSchema.projections,
        acknowledged: Dictionary(acknowledged.map { ($0.sequence, $0) }) { first, _ in first })

      #expect(audit.problems.isEmpty, "\(audit.problems)")
      #expect(acknowledged.count == Int(head), "every event in the log was acknowledged once")
      #expect(
        Set(acknowledged.map(\.sequence)).count == acknowledged.count, "a sequence number acknowledged twice")
      #expect(readCount >= UInt64(events) && readCount <= head)
      #expect(String(done[2]) == digest, "the reader read other bytes than the log holds")
      let finalMapSize = mapSizes.max() ?? 0
      #expect(usedBytes > 4 * initialMapSize, "the log outgrew the first map many times: \(usedBytes) bytes")
      #expect(finalMapSize >= usedBytes, "the reader ended with the writer's map: \(finalMapSize) bytes")
      #expect(Set(mapSizes).count >= 2, "the reader adopted a map grown by the writer: \(mapSizes)")
      #expect(mapSizes == mapSizes.sorted())
      report(
        "map growth across processes",
        "\(head) events (\(usedBytes) bytes used) in \(elapsed); the map grew from \(initialMapSize) bytes; "
          + "the reader saw map sizes \(mapSizes), \(heads) heads, read \(readCount) events (same fingerprint)"
      )
    }
  }
}
