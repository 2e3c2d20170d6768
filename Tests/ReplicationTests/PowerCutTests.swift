import EventLog
import Foundation
import PostgresTestSupport
import TestKit
import Testing

/// Power cuts of a replicating device (issue 28, finding 6), through the built `eventlog` and the
/// power-cut shim (`TestKit.PowerCutLog`, Docs/Reliability.md "Power cuts").
///
/// Two devices of one customer, a phone and a tablet, make and delete bookings and push and pull
/// (``script``) against a real PostgreSQL. The phone runs under the shim; at a cut point k the
/// shim kills it before its (k+1)-th logged operation, and its `data.mdb` is rebuilt from the
/// first k records as a ``PowerCutLog/Model`` says the disk holds them. The server is not cut: it
/// keeps what it committed. Then, as after a reboot, the phone goes on with the rest of the script
/// and books once more before it replicates (``afterTheCut``), and both devices push and pull until
/// nothing moves. Pass: the phone, the tablet and a fresh device that pulled everything list the
/// same bookings; every booking event of the phone is on the server and every server event of the
/// owner on the phone; nothing is pending, rejected or diverged; `verify` is clean on the phone.
///
/// Quick (CI): the cut of the finding, at the first write after the server committed a push whose
/// mark covers a pulled page that no flush has followed yet, under both models. `EVENTLOG_FULL=1`:
/// every cut point of the script under both models.
@Suite("Power cut of a replicating device", .serialized, .needsPostgres)
struct PowerCutTests {
  static let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")

  /// Who runs a step.
  enum Actor: String { case phone, tablet }

  /// What a step does, through one `eventlog` command (two for a delete: the list, then the
  /// delete of its first booking).
  enum Operation {
    case book(String)
    case deleteFirst
    case push
    case pull
    case replicate
  }

  struct Step: CustomStringConvertible {
    var actor: Actor
    var operation: Operation
    var description: String { "\(actor) \(operation)" }
  }

  static func phone(_ operation: Operation) -> Step { Step(actor: .phone, operation: operation) }
  static func tablet(_ operation: Operation) -> Step { Step(actor: .tablet, operation: operation) }

  /// The workload. The push at ``findingPush`` is the finding's: the phone booked, then pulled the
  /// tablet's events after its booking, so the push's mark covers the pulled page past the
  /// phone's last own event.
  static let script: [Step] = [
    tablet(.book("Tablet 1")), tablet(.push),
    phone(.book("Phone 1")), phone(.push),
    tablet(.book("Tablet 2")), tablet(.push),
    phone(.book("Phone 2")), phone(.pull), phone(.push),
    tablet(.pull), tablet(.deleteFirst), tablet(.book("Tablet 3")), tablet(.push),
    phone(.book("Phone 3")), phone(.deleteFirst), phone(.pull), phone(.push),
    phone(.pull), phone(.book("Phone 4")), phone(.replicate),
    tablet(.replicate),
  ]

  /// The index in ``script`` of the finding's push.
  static let findingPush = 8

  /// What the phone does after the cut, whatever the step the cut came in: a booking, then a
  /// replicate, as a user would after a reboot.
  static let afterTheCut: [Step] = [phone(.book("After the cut")), phone(.replicate)]

  @Test("the cut after a push that covered an unflushed pulled page: the phone's next booking is pushed")
  func cutOfTheFinding() async throws {
    let recording = try await World()
    defer { recording.destroy() }
    _ = try recording.run(cutAfter: nil, model: .synchronousWritesKept)
    let log = try PowerCutLog(contentsOf: recording.log)
    let cut = try #require(recording.firstWrite(ofStep: Self.findingPush, in: log))
    for model in PowerCutLog.Model.allCases {
      let world = try await World()
      defer { world.destroy() }
      let outcome = try #require(try world.run(cutAfter: cut, model: model))
      #expect(outcome.cutInStep == Self.findingPush, "\(model): the cut after record \(cut) fell elsewhere")
      #expect(outcome.problems.isEmpty, "\(model), cut after record \(cut): \(outcome)")
    }
  }

  @Test("every cut point of the script, under both models (EVENTLOG_FULL=1)", .enabled(if: ModelCheck.full))
  func everyCutPoint() async throws {
    let recording = try await World()
    defer { recording.destroy() }
    _ = try recording.run(cutAfter: nil, model: .synchronousWritesKept)
    let records = try PowerCutLog(contentsOf: recording.log).records.count
    var failures: [String] = []
    var runs = 0
    for cut in 0...records {
      for model in PowerCutLog.Model.allCases {
        await Task.yield()
        let world = try await World()
        defer { world.destroy() }
        guard let outcome = try world.run(cutAfter: cut, model: model) else { continue }
        runs += 1
        if !outcome.problems.isEmpty { failures.append("\(model), cut after record \(cut): \(outcome)") }
      }
    }
    #expect(runs >= 2 * records, "only \(runs) cut runs for \(records) records")
    #expect(
      failures.isEmpty,
      "\(failures.count) of \(runs) cut states diverged:\n\(failures.joined(separator: "\n"))")
  }
}

extension PowerCutTests {
  /// A command of the workload failed (not a check: the run could not go on).
  struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  /// How a run with a cut ended.
  struct Outcome: CustomStringConvertible {
    /// The step the phone was in when the power went out.
    var cutInStep: Int
    /// What the checks found; empty when the devices converged.
    var problems: [String]
    /// The phone's last push and pull, as `--json` prints them.
    var counts: String

    var description: String {
      "cut in step \(cutInStep) (\(PowerCutTests.script[cutInStep])); \(counts)\n  "
        + problems.joined(separator: "\n  ")
    }
  }

  /// A server database with the schema, a customer, the two devices' environments and the
  /// phone's power-cut log.
  final class World {
    let fixture: ServerFixture
    let customer: Customer
    var url: String { customer.url }
    let directory = TemporaryDirectory("power-cut")
    var phone: String { directory.environment("phone") }
    var tablet: String { directory.environment("tablet") }
    var log: String { directory.path("phone.log") }
    /// The log's record count when each step of the script began.
    var stepStarts: [Int] = []

    init() async throws {
      fixture = try await ServerFixture()
      customer = try fixture.customer("cut")
    }

    /// Drops the database (a full sweep makes hundreds).
    func destroy() {
      try? fixture.server.superuser("DROP DATABASE IF EXISTS \"\(fixture.database)\" WITH (FORCE)")
    }

    /// Runs `eventlog --db <actor's environment> arguments…` (under the shim, for the phone
    /// before the cut).
    func eventlog(
      _ actor: PowerCutTests.Actor, _ arguments: [String], shim: [String: String] = [:]
    ) throws -> ChildRun {
      try runChild(
        PowerCutTests.binary, ["--db", actor == .phone ? phone : tablet] + arguments, environment: shim)
    }

    func must(_ actor: PowerCutTests.Actor, _ arguments: String...) throws -> ChildRun {
      let run = try eventlog(actor, arguments)
      guard run.status == 0 else {
        throw PowerCutTests.Failure("\(actor) \(arguments.joined(separator: " ")): \(run)")
      }
      return run
    }

    /// The commands of one step: the delete lists first and deletes the first booking listed
    /// (none: nothing to do).
    func commands(_ step: PowerCutTests.Step, shim: [String: String]) throws -> [ChildRun] {
      switch step.operation {
      case .book(let name):
        return [
          try eventlog(
            step.actor,
            [
              "bookings", "create", "--restaurant", "Pasta Palace", "--date", "2099-06-01T19:00:00Z",
              "--party",
              "2", "--name", name,
            ], shim: shim)
        ]
      case .deleteFirst:
        let listed = try eventlog(step.actor, ["bookings", "list", "--json"], shim: shim)
        guard listed.status == 0 else { return [listed] }
        guard let id = Self.bookingIDs(listed).first else { return [listed] }
        return [listed, try eventlog(step.actor, ["bookings", "delete", id], shim: shim)]
      case .push: return [try eventlog(step.actor, ["push", url, "--retry-for", "20", "--json"], shim: shim)]
      case .pull: return [try eventlog(step.actor, ["pull", url, "--retry-for", "20", "--json"], shim: shim)]
      case .replicate:
        return [try eventlog(step.actor, ["replicate", url, "--retry-for", "20", "--json"], shim: shim)]
      }
    }

    static func bookingIDs(_ run: ChildRun) -> [String] {
      let list = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [[String: Any]] ?? []
      return list.compactMap { $0["id"] as? String }
    }

    /// The index of the first write record of `step` in `log`, counted from 1: a cut after it
    /// comes after the step's first commit began, and before that commit's flush.
    func firstWrite(ofStep step: Int, in log: PowerCutLog) -> Int? {
      guard step < stepStarts.count else { return nil }
      let start = stepStarts[step]
      let end = step + 1 < stepStarts.count ? stepStarts[step + 1] : log.records.count
      return (start..<end).first { log.records[$0].kind == .write }.map { $0 + 1 }
    }

    /// Runs the script with the phone under the shim; with `cut`, the power goes out after that
    /// record, the phone's file becomes what `model` keeps of it, and the phone goes on with the
    /// rest of the script and ``afterTheCut``. Then the checks.
    /// - Returns: the outcome, or `nil` when the script ended before the log had `cut` records.
    func run(cutAfter cut: Int?, model: PowerCutLog.Model) throws -> Outcome? {
      let catalog = try directory.file(
        "catalog.json",
        Data(
          #"[{"id":"11111111-1111-4111-8111-111111111111","name":"Pasta Palace","cuisine":"italian"}]"#.utf8))
      for actor in [PowerCutTests.Actor.phone, .tablet] {
        _ = try must(actor, "restaurants", "sync", "--from", catalog)
      }
      // The log begins with the phone's environment as the disk holds it: flushed.
      let dataFile = phone + "/data.mdb"
      let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dataFile))
      try handle.synchronize()
      try handle.close()
      let base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dataFile)))
      let shim = PowerCutLog.environment(directory: phone, log: log, stopAfter: cut)
      var cutInStep: Int?
      stepStarts = []
      for (index, step) in PowerCutTests.script.enumerated() {
        let live = step.actor == .phone && cutInStep == nil
        stepStarts.append(cutInStep == nil ? ((try? PowerCutLog(contentsOf: log))?.records.count ?? 0) : 0)
        for run in try commands(step, shim: live ? shim : [:]) {
          if live, run.signal == SIGKILL, let cut {
            try PowerCutLog(contentsOf: log).cut(
              environment: phone, afterRecords: cut, model: model, base: base)
            cutInStep = index
            break
          }
          guard run.status == 0 else {
            throw PowerCutTests.Failure("step \(index) (\(step)): \(run)")
          }
        }
      }
      guard cut == nil || cutInStep != nil else { return nil }
      for step in PowerCutTests.afterTheCut {
        for run in try commands(step, shim: [:]) where run.status != 0 {
          throw PowerCutTests.Failure("after the cut, \(step): \(run)")
        }
      }
      return try check(cutInStep: cutInStep ?? PowerCutTests.script.count - 1)
    }

    /// Both devices push and pull until nothing moves, a fresh device pulls everything, and the
    /// three are compared with each other and with the server.
    func check(cutInStep: Int) throws -> Outcome {
      var counts = ""
      for _ in 0..<2 {
        for actor in [PowerCutTests.Actor.phone, .tablet] {
          let pushed = try must(actor, "push", url, "--retry-for", "20", "--json")
          let pulled = try must(actor, "pull", url, "--retry-for", "20", "--json")
          if actor == .phone {
            counts = "phone's last push \(pushed.stdout.trimmed), pull \(pulled.stdout.trimmed)"
          }
        }
      }
      let fresh = directory.environment("fresh")
      let freshPull = try runChild(PowerCutTests.binary, ["--db", fresh, "pull", url, "--retry-for", "20"])
      guard freshPull.status == 0 else {
        throw PowerCutTests.Failure("the fresh device's pull: \(freshPull)")
      }
      var problems: [String] = []
      let phoneBookings = Self.bookingIDs(try must(.phone, "bookings", "list", "--json")).sorted()
      let tabletBookings = Self.bookingIDs(try must(.tablet, "bookings", "list", "--json")).sorted()
      let freshBookings = Self.bookingIDs(
        try runChild(PowerCutTests.binary, ["--db", fresh, "bookings", "list", "--json"])
      ).sorted()
      if phoneBookings != freshBookings || tabletBookings != freshBookings {
        problems.append(
          "bookings: the phone holds \(phoneBookings.count), the tablet \(tabletBookings.count), a fresh device "
            + "that pulled everything \(freshBookings.count); the phone's not on the fresh device: "
            + "\(Set(phoneBookings).subtracting(freshBookings).sorted())")
      }
      let server = Set(try serverEventIDs(fixture, owner: customer.role).map(\.lowercasedString))
      let local = try phoneBookingEventIDs()
      let unpushed = local.subtracting(server)
      if !unpushed.isEmpty { problems.append("events of the phone never pushed: \(unpushed.sorted())") }
      let unpulled = server.subtracting(local)
      if !unpulled.isEmpty { problems.append("server events not on the phone: \(unpulled.sorted())") }
      let status = try must(.phone, "remote", "status", "--json")
      let object =
        (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any] ?? [:]
      if object["pending"] as? Int != 0 || (object["rejected"] as? [Any])?.isEmpty != true
        || object["diverged"].map({ $0 is NSNull }) == false
      {
        problems.append("the phone's remote status: \(status.stdout.trimmed)")
      }
      let verified = try eventlog(.phone, ["verify"])
      if verified.status != 0 { problems.append("verify on the phone: \(verified)") }
      return Outcome(cutInStep: cutInStep, problems: problems, counts: counts)
    }

    /// The IDs of the booking events in the phone's log.
    func phoneBookingEventIDs() throws -> Set<String> {
      let log = try must(.phone, "log", "--json")
      return Set(
        log.stdout.split(separator: "\n").compactMap { line in
          guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            (object["stream"] as? String)?.hasPrefix("booking-") == true
          else { return nil }
          return (object["id"] as? String)?.lowercased()
        })
    }
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
