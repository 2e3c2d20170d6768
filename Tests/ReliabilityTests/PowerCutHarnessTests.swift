import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

extension Reliability {
  /// The power-cut harness (`Tests/Support/PowerCutShim`, `TestKit.PowerCutLog`) against what
  /// LMDB does: every cut point of three durable commits rebuilds an environment that opens, is
  /// clean, and holds the commits each model says survive; the shim stops a process where asked.
  @Suite struct PowerCutHarness {
    static let catalog =
      #"[{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"}]"#

    @Test("every cut of three commits is clean and holds the commits its model keeps")
    func everyCutHoldsWhatItsModelKeeps() async throws {
      let directory = TemporaryDirectory("power-cut-harness")
      let path = directory.environment()
      let catalog = try directory.file("catalog.json", Data(Self.catalog.utf8))
      #expect(
        try runChild(Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", catalog]).status == 0)
      let base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")))
      let log = directory.path("log")
      let shim = PowerCutLog.environment(directory: path, log: log)
      var names: [String] = []
      for index in 1...3 {
        names.append("Guest \(index)")
        let created = try runChild(
          Binaries.eventlog,
          [
            "--db", path, "bookings", "create", "--restaurant", "Pasta Palace", "--date",
            "2099-06-01T19:00:00Z",
            "--party", "2", "--name", "Guest \(index)",
          ], environment: shim)
        #expect(created.status == 0, "\(created)")
      }
      let records = try PowerCutLog(contentsOf: log).records
      // LMDB's durable commit, as the shim sees it: pages, a flush, then the meta page through the
      // O_DSYNC descriptor.
      let metaWrites = records.indices.filter { records[$0].kind == .write && records[$0].flags & 1 != 0 }
      #expect(metaWrites.count == 3, "\(records.map(\.kind))")
      #expect(records.contains { $0.kind == .open && $0.flags & UInt32(O_DSYNC) != 0 })
      let cutLog = try PowerCutLog(contentsOf: log)
      for model in PowerCutLog.Model.allCases {
        for cut in 0...records.count {
          let copy = TemporaryDirectory("power-cut-copy")
          let environment = copy.environment()
          try FileManager.default.createDirectory(
            atPath: environment, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
          try cutLog.cut(environment: environment, afterRecords: cut, model: model, base: base)
          // Kept: a commit whose meta page is in the first `cut` records and, under the harsher
          // model, followed by a flush.
          let lastFlush = records.prefix(cut).lastIndex { $0.isFlush } ?? -1
          let kept = metaWrites.filter { $0 < cut && (model == .synchronousWritesKept || $0 < lastFlush) }
            .count
          var options = EventStore.Options()
          options.readOnly = true
          let store = try EventStore(path: environment, schema: .restaurantBooking, options: options)
          let held = try await EventSourcedBookingRepository(store: store, origin: "test").getAll()
            .compactMap(\.customerName).sorted()
          #expect(held == Array(names.prefix(kept)), "\(model), cut after record \(cut)")
          let report = try store.verify()
          #expect(report.isClean, "\(model), cut after record \(cut): \(report.problems)")
          await store.close()
        }
      }
    }

    @Test("the shim kills the process before the record after the one asked for")
    func theShimStopsWhereAsked() throws {
      let directory = TemporaryDirectory("power-cut-stop")
      let path = directory.environment()
      let catalog = try directory.file("catalog.json", Data(Self.catalog.utf8))
      #expect(
        try runChild(Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", catalog]).status == 0)
      let log = directory.path("log")
      let book = [
        "--db", path, "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2099-06-01T19:00:00Z",
        "--party", "2", "--name", "Ada",
      ]
      #expect(
        try runChild(Binaries.eventlog, book, environment: PowerCutLog.environment(directory: path, log: log))
          .status == 0)
      let before = try PowerCutLog(contentsOf: log).records.count
      let stopped = try runChild(
        Binaries.eventlog, book,
        environment: PowerCutLog.environment(directory: path, log: log, stopAfter: before + 3))
      #expect(stopped.signal == SIGKILL, "\(stopped)")
      #expect(try PowerCutLog(contentsOf: log).records.count == before + 3)
      // The process is gone before its commit's meta page: the booking is not there.
      let listed = try runChild(Binaries.eventlog, ["--db", path, "bookings", "list", "--json"])
      let list = (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8))) as? [[String: Any]]
      #expect(list?.count == 1, "\(listed)")
    }
  }
}
