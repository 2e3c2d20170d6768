import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// A property of personal data's replication over random interleavings: devices book for a few
/// customers, forget customers, push, pull and go offline in a seeded order; once every device
/// has synced, they all hold the same bookings and the same erased subjects, every booking of a
/// subject that is not erased opens everywhere, and neither a device nor the server holds a key
/// of an erased subject (so none can open its values).
///
/// Quick mode (CI): 2 seeds of 30 steps. `EVENTLOG_FULL=1`: 6 seeds of 120 steps.
/// `EVENTLOG_SEED=n` replays one seed.
@Suite("Personal data converges", .needsPostgres)
struct PersonalDataConvergenceTests {
  static var full: Bool { ProcessInfo.processInfo.environment["EVENTLOG_FULL"] == "1" }
  static let names = ["Ada", "Grace", "Linus", "Barbara"]

  @Test func everyDeviceConvergesAndNoCopyOfAnErasedSubjectsKeyRemains() async throws {
    for seed in ModelCheck.randomSeeds(count: Self.full ? 6 : 2) {
      let fixture = try await ServerFixture()
      let violations = try await Self.run(seed: seed, steps: Self.full ? 120 : 30, fixture: fixture)
      #expect(violations.isEmpty, "seed \(seed) (EVENTLOG_SEED=\(seed) replays it): \(violations)")
    }
  }

  /// The property can fail: with the server's erasure trigger disabled, the server keeps an
  /// erased subject's key, and the check says so.
  @Test func withoutTheServersErasureTriggerTheCheckFails() async throws {
    let fixture = try await ServerFixture()
    try fixture.superuser("ALTER TABLE eventlog.events DISABLE TRIGGER events_apply_erasure")
    let violations = try await Self.run(seed: 7, steps: 10, fixture: fixture, forcedErasure: true)
    #expect(
      violations.contains { $0.contains("the server holds the key of erased subject") }, "\(violations)")
  }

  /// Runs `steps` random steps from `seed`, syncs every device, and returns what breaks the
  /// property (empty when it holds).
  static func run(
    seed: UInt64, steps: Int, fixture: ServerFixture, forcedErasure: Bool = false
  ) async throws -> [String] {
    var random = SplitMix64(seed: seed)
    func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
    let customer = try fixture.customer()
    let restaurant = UUID()
    var devices: [Device] = []
    for _ in 0..<3 {
      let device = try Device(customer)
      try await device.addRestaurant(id: restaurant)
      devices.append(device)
    }
    var offline = Set<Int>()
    for _ in 0..<steps {
      let index = Int(random.next() % 3)
      let device = devices[index]
      switch random.next() % 100 {
      case 0..<30:
        _ = try await device.book(restaurant, name: pick(names))
      case 30..<40:
        do {
          _ = try await device.bookings.forget(customerName: pick(names), reason: "asked")
        } catch BookingError.unknownCustomer {
          // No booking this device can open carries the name.
        }
      case 40..<65 where !offline.contains(index):
        _ = try await device.push()
      case 65..<90 where !offline.contains(index):
        _ = try await device.pull()
      case 90..<100:
        if !offline.insert(index).inserted { offline.remove(index) }
      default:
        break
      }
    }
    if forcedErasure {
      _ = try await devices[0].book(restaurant, name: "Zed")
      _ = try await devices[0].push()
      _ = try await devices[1].pull()
      _ = try await devices[0].bookings.forget(customerName: "Zed", reason: "asked")
    }
    // Everyone syncs: twice round, so that what one device learnt in the first round reaches the rest.
    for _ in 0..<2 {
      for device in devices {
        _ = try await device.push()
        _ = try await device.pull()
      }
    }
    return try await violations(devices, fixture: fixture, role: customer.role)
  }

  /// What breaks the property on `devices` and the server.
  static func violations(_ devices: [Device], fixture: ServerFixture, role: String) async throws -> [String] {
    var problems: [String] = []
    struct Shown: Hashable {
      var customer: UUID?
      var name: String?
      var erased: [String]
      var unavailable: [String]
    }
    var views: [[UUID: Shown]] = []
    var erasedSets: [Set<UUID>] = []
    for (index, device) in devices.enumerated() {
      var view: [UUID: Shown] = [:]
      for booking in try await device.allBookings() {
        view[booking.id] = Shown(
          customer: booking.customerID, name: booking.customerName, erased: booking.erasedFields.sorted(),
          unavailable: booking.unavailableFields.sorted())
      }
      views.append(view)
      let erased = Set(try device.store.erasedSubjects().map(\.subject))
      erasedSets.append(erased)
      let keys = Set(try device.store.subjectKeys().map(\.subject))
      for subject in erased.intersection(keys) {
        problems.append("device \(index) holds the key of erased subject \(subject)")
      }
      for (id, shown) in view {
        if let customer = shown.customer, erased.contains(customer), shown.name != nil || shown.erased.isEmpty
        {
          problems.append("device \(index) opens booking \(id) of erased subject \(customer)")
        }
        if !shown.unavailable.isEmpty {
          problems.append("device \(index) cannot open booking \(id): \(shown.unavailable)")
        }
      }
      try device.expectHealthy()
    }
    for index in 1..<devices.count {
      if views[index] != views[0] { problems.append("device \(index) shows other bookings than device 0") }
      if erasedSets[index] != erasedSets[0] {
        problems.append("device \(index) erased \(erasedSets[index]), device 0 \(erasedSets[0])")
      }
    }
    let server = try fixture.personalData(of: role)
    if server.fences != erasedSets[0] {
      problems.append("the server fences \(server.fences), the devices erased \(erasedSets[0])")
    }
    for subject in server.keys.intersection(erasedSets[0].union(server.fences)) {
      problems.append("the server holds the key of erased subject \(subject)")
    }
    return problems
  }
}
