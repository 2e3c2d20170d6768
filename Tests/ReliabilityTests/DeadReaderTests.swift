import EventLog
import Foundation
import LMDB
import TestKit
import Testing

extension Reliability {
  /// Item 4: a reader process killed inside its read transaction.
  @Suite struct DeadReaders {
    static let appends = Mode.pick(quick: 100, full: 1_000)

    @Test("a killed reader's slot is cleared on the next open, and the file stops growing")
    func deadReaderIsClearedAndTheFileStopsGrowing() async throws {
      let directory = TemporaryDirectory()
      let path = directory.environment()
      var workload = SlotsWorkload(path: path)

      // Baseline, no other reader: freed pages are reused.
      var store: EventStore? = try workload.open()
      _ = try await workload.growth(store)
      let baseline = try await workload.growth(store)
      let bound = baseline + 64 << 10

      // Another process keeps the environment open throughout: alone, an opener would reset
      // LMDB's reader table; with it, a dead slot is gone only if `mdb_reader_check` ran.
      let keeper = try Child(Binaries.stress, ["hold-open", "--db", path], in: directory.url)
      try #require(await keeper.waitForLine(prefix: "open", timeout: .seconds(30)) != nil, "\(keeper.stderr)")

      // A reader process holds a snapshot: every page rewritten since is new.
      let holder = try Child(Binaries.stress, ["hold-reader", "--db", path], in: directory.url)
      try #require(
        await holder.waitForLine(prefix: "holding", timeout: .seconds(30)) != nil, "\(holder.stderr)")
      let pinned = try await workload.growth(store)
      await close(&store)

      // Killed inside its transaction: its slot stays in lock.mdb until someone clears it.
      var environment: Environment? = try Environment(path: path)
      let slotsWhileAlive = try #require(environment).info().readers
      holder.kill()
      #expect(await holder.wait(timeout: .seconds(10)) == .signaled(SIGKILL))
      let cleared = try #require(environment).clearStaleReaders()
      let clearedAgain = try #require(environment).clearStaleReaders()
      let slotsAfterClearing = try #require(environment).info().readers
      environment = nil
      #expect(cleared == 1, "the dead reader's slot was found and cleared")
      #expect(clearedAgain == 0)

      // A second reader killed while this process has nothing open: `EventStore`'s open clears
      // it, so the next appends reuse pages again.
      let holder2 = try Child(Binaries.stress, ["hold-reader", "--db", path], in: directory.url)
      try #require(
        await holder2.waitForLine(prefix: "holding", timeout: .seconds(30)) != nil, "\(holder2.stderr)")
      holder2.kill()
      #expect(await holder2.wait(timeout: .seconds(10)) == .signaled(SIGKILL))
      store = try workload.open()
      let fileBefore = dataFileSize(path)
      var after: [Int] = []
      for _ in 0..<3 { after.append(try await workload.growth(store)) }
      let fileGrowth = dataFileSize(path) - fileBefore
      await close(&store)
      environment = try Environment(path: path)
      let leftOver = try #require(environment).clearStaleReaders()
      environment = nil
      keeper.kill()
      _ = await keeper.wait(timeout: .seconds(10))

      #expect(pinned > 8 * bound, "a live reader pins pages: \(pinned) bytes vs a bound of \(bound)")
      #expect(leftOver == 0, "\(leftOver) dead reader slots left")
      for growth in after {
        #expect(
          growth <= bound,
          "after the dead reader is cleared, \(Self.appends) appends grew the file by \(growth) bytes")
      }
      #expect(fileGrowth <= 3 * bound, "data.mdb grew by \(fileGrowth) bytes")
      report(
        "dead readers",
        "\(Self.appends) appends rewriting 32 × 1 KiB rows grow the used file by \(baseline) B without readers, "
          + "\(pinned) B with a live reader; killed: \(cleared) slot cleared (Info.readers \(slotsWhileAlive) → "
          + "\(slotsAfterClearing): a high-water mark); after an EventStore open cleared a second dead reader: "
          + "\(after) B per \(Self.appends) appends (bound \(bound) B), data.mdb +\(fileGrowth) B")
    }

    /// A long-running writer (an app) is never reopened: a reader process that dies while it
    /// runs should not pin pages for the rest of its life.
    @Test("a dead reader is cleared while the writer stays open")
    func deadReaderIsClearedWhileTheWriterStaysOpen() async throws {
      let directory = TemporaryDirectory()
      let path = directory.environment()
      var workload = SlotsWorkload(path: path)
      var store: EventStore? = try workload.open()
      _ = try await workload.growth(store)
      let baseline = try await workload.growth(store)
      let holder = try Child(Binaries.stress, ["hold-reader", "--db", path], in: directory.url)
      try #require(
        await holder.waitForLine(prefix: "holding", timeout: .seconds(30)) != nil, "\(holder.stderr)")
      _ = try await workload.growth(store)
      holder.kill()
      #expect(await holder.wait(timeout: .seconds(10)) == .signaled(SIGKILL))
      // Time for a periodic check, then two windows: the second must reuse pages.
      try await Task.sleep(for: .seconds(2))
      _ = try await workload.growth(store)
      let later = try await workload.growth(store)
      await close(&store)
      #expect(later <= baseline + 64 << 10, "\(Self.appends) appends grew the file by \(later) bytes")
    }
  }
}

/// Update-heavy appends (``SlotsRewritten``) to a store with ``SlotsProjection``.
struct SlotsWorkload {
  let path: String
  private var round = 0

  init(path: String) { self.path = path }

  func open() throws -> EventStore {
    var options = EventStore.Options.noSync
    options.mapSize = 256 << 20
    return try EventStore(path: path, projections: [SlotsProjection()], options: options)
  }

  /// Appends ``DeadReaders/appends`` events; returns how much the used part of the file grew.
  mutating func growth(_ store: EventStore?) async throws -> Int {
    let store = try #require(store)
    let before = try store.storageInfo().usedBytes
    for _ in 0..<Reliability.DeadReaders.appends {
      round += 1
      try await store.append([try NewEvent(SlotsRewritten(round: round))], to: "slots")
    }
    return try store.storageInfo().usedBytes - before
  }
}

/// Rewrites every slot of ``SlotsProjection``: one small event, many rewritten pages.
struct SlotsRewritten: EventPayload {
  static let eventType = "SlotsRewritten"
  var round: Int
}

/// 32 rows of 1 KiB, all rewritten by every event: an update-heavy projection whose old pages
/// LMDB can reuse only when no reader still sees them.
struct SlotsProjection: Projection {
  static let rows = 32
  static let rowBytes = 1_024
  var name: String { "slots" }
  var version: UInt32 { 1 }
  var tables: [String] { ["slots"] }

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    guard event.type == SlotsRewritten.eventType else { return }
    let round = try event.decode(SlotsRewritten.self).round
    for slot in 0..<Self.rows {
      let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round &+ slot), count: Self.rowBytes)
      try state.put(value, forKey: [UInt8(slot)], in: "slots")
    }
  }
}
