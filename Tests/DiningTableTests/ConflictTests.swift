import EventLog
import Foundation
import Synchronization
import TestKit
import Testing

/// The conflicts the convergent rule records: two devices (each its own store, with a wall clock
/// of its own) change one dining table before they exchange events, by `ingest` as a pull does.
@Suite("Conflicts of concurrent changes")
struct ConflictTests {
  let dir = TemporaryDirectory()
  static let start = Date(microsecondsSince1970: 1_800_000_000_000_000)

  /// A wall clock a test sets.
  final class Clock: Sendable {
    private let now = Mutex(ConflictTests.start)
    func set(_ date: Date) { now.withLock { $0 = date } }
    func advance(_ seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var read: @Sendable () -> Date { { [self] in now.withLock { $0 } } }
  }

  /// What a sequence yielded.
  final class Collected: Sendable {
    let values = Mutex<[[Conflict]]>([])
  }

  /// One device: its store, repository and clock.
  struct Device {
    let store: EventStore
    let tables: EventSourcedDiningTableRepository
    let clock: Clock
    var entities: EntityRepository<DiningTable> { tables.entities }
    var id: UUID? { store.deviceID }
  }

  func device(_ name: String) throws -> Device {
    let clock = Clock()
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    options.wallClock = clock.read
    let store = try EventStore(
      path: dir.environment(name), schema: FloorPlan.schema.appSchema, options: options)
    return Device(store: store, tables: EventSourcedDiningTableRepository(store: store), clock: clock)
  }

  /// Hands `source`'s events that `target` lacks to `target`, in `source`'s order, as a pull
  /// would (their IDs, times and provenance).
  static func send(from source: Device, to target: Device) async throws {
    let events = try source.store.events().filter { try target.store.sequence(ofEventID: $0.id) == nil }
    guard !events.isEmpty else { return }
    _ = try await target.store.ingest(
      events.map { event in
        EventStore.IngestedEvent(
          stream: event.stream,
          event: NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt),
          provenance: event.provenance)
      })
  }

  /// Both ways.
  static func exchange(_ a: Device, _ b: Device) async throws {
    try await send(from: a, to: b)
    try await send(from: b, to: a)
  }

  /// A conflict without its local sequence numbers, which differ from log to log.
  static func portable(_ conflict: Conflict) -> Conflict {
    var conflict = conflict
    conflict.winner.sequence = nil
    conflict.loser.sequence = nil
    return conflict
  }

  /// The ID of the last event `device` appended.
  static func lastEvent(_ device: Device) throws -> RecordedEvent {
    try #require(try device.store.events().last)
  }

  /// Checks that the conflicts' sequence numbers are `device`'s own for their events, and that a
  /// replay and a rebuild of its tables give the same conflicts as the live path stored.
  static func checkLocal(_ device: Device) async throws {
    let conflicts = try device.store.conflicts()
    for conflict in conflicts {
      #expect(conflict.winner.sequence == (try device.store.sequence(ofEventID: conflict.winner.eventID)))
      #expect(conflict.loser.sequence == (try device.store.sequence(ofEventID: conflict.loser.eventID)))
      #expect(conflict.winner.sequence != nil && conflict.loser.sequence != nil)
    }
    #expect(try device.store.firstDifference(from: device.store.replay()) == nil)
    try await device.store.rebuildProjections()
    #expect(try device.store.conflicts() == conflicts)
  }

  @Test("one field changed on two devices apart: the same conflict on both, the later stamp the winner")
  func sameField() async throws {
    let phone = try device("phone.db")
    let tablet = try device("tablet.db")
    let table = try await phone.tables.add(label: "A", seats: 2, zone: "inside")
    try await Self.send(from: phone, to: tablet)
    phone.clock.advance(1)
    tablet.clock.advance(2)
    _ = try await phone.tables.change(id: table.id, label: "Phone", seats: 6, zone: nil)
    let phoneChange = try Self.lastEvent(phone)
    _ = try await tablet.tables.change(id: table.id, label: "Tablet", seats: nil, zone: "terrace")
    let tabletChange = try Self.lastEvent(tablet)
    #expect(try phone.store.conflicts().isEmpty && tablet.store.conflicts().isEmpty)
    // The phone takes the later change in stamp order, the tablet the earlier one late.
    try await Self.exchange(phone, tablet)

    let expected = Conflict(
      table: "dining-table", key: table.id.lowercasedString, field: "label", kind: .overwritten,
      winner: .init(
        eventID: tabletChange.id, sequence: nil, device: tablet.id, deviceSequence: tabletChange.sequence,
        recordedAt: tabletChange.recordedAt, value: #""Tablet""#),
      loser: .init(
        eventID: phoneChange.id, sequence: nil, device: phone.id, deviceSequence: phoneChange.sequence,
        recordedAt: phoneChange.recordedAt, value: #""Phone""#))
    // Seats and zone were changed on one device each: no conflict.
    #expect(try phone.store.conflicts().map(Self.portable) == [expected])
    #expect(try tablet.store.conflicts().map(Self.portable) == [expected])
    #expect(try phone.store.conflicts(in: "dining-table").count == 1)
    #expect(try await phone.entities.get(id: table.id)?.label == "Tablet")
    try await Self.checkLocal(phone)
    try await Self.checkLocal(tablet)
  }

  @Test("a device whose clock is 10 minutes behind loses its later change, and the conflict says so")
  func clockBehind() async throws {
    let phone = try device("phone.db")
    let tablet = try device("tablet.db")
    tablet.clock.advance(-600)
    let table = try await phone.tables.add(label: "A", seats: 2, zone: "inside")
    try await Self.send(from: phone, to: tablet)
    phone.clock.advance(1)
    tablet.clock.advance(1)
    _ = try await phone.tables.change(id: table.id, label: nil, seats: 4, zone: nil)
    let phoneChange = try Self.lastEvent(phone)
    // A minute later, on the tablet, which has not seen the phone's change.
    tablet.clock.advance(60)
    _ = try await tablet.tables.change(id: table.id, label: nil, seats: 8, zone: nil)
    let tabletChange = try Self.lastEvent(tablet)
    // The tablet's clock took the create's time up: its change is stamped before the phone's.
    #expect(tabletChange.recordedAt < phoneChange.recordedAt)
    try await Self.exchange(phone, tablet)

    for device in [phone, tablet] {
      let conflicts = try device.store.conflicts()
      try #require(conflicts.count == 1)
      #expect(conflicts[0].field == "seats" && conflicts[0].kind == .overwritten)
      #expect(conflicts[0].winner.eventID == phoneChange.id && conflicts[0].winner.value == "4")
      #expect(conflicts[0].winner.device == phone.id)
      #expect(conflicts[0].loser.eventID == tabletChange.id && conflicts[0].loser.value == "8")
      #expect(conflicts[0].loser.device == tablet.id)
      #expect(try await device.entities.get(id: table.id)?.seats == 4)
      try await Self.checkLocal(device)
    }
  }

  @Test("a change and a delete that crossed: the delete wins, whichever is stamped later")
  func changeAgainstDelete() async throws {
    let phone = try device("phone.db")
    let tablet = try device("tablet.db")
    let first = try await phone.tables.add(label: "A", seats: 2, zone: "inside")
    let second = try await phone.tables.add(label: "B", seats: 2, zone: "inside")
    try await Self.send(from: phone, to: tablet)
    // The first: the change is stamped before the delete, which removes the row it changed.
    phone.clock.advance(1)
    tablet.clock.advance(2)
    _ = try await phone.tables.change(id: first.id, label: nil, seats: nil, zone: "terrace")
    let change = try Self.lastEvent(phone)
    try await tablet.entities.delete(id: first.id)
    let delete = try Self.lastEvent(tablet)
    // The second: the delete is stamped first, and its tombstone discards the later change.
    tablet.clock.advance(1)
    phone.clock.advance(3)
    try await tablet.entities.delete(id: second.id)
    let secondDelete = try Self.lastEvent(tablet)
    _ = try await phone.tables.change(id: second.id, label: "Bar", seats: nil, zone: nil)
    let secondChange = try Self.lastEvent(phone)
    try await Self.exchange(phone, tablet)

    for device in [phone, tablet] {
      let conflicts = try device.store.conflicts()
      try #require(conflicts.count == 2, "\(conflicts)")
      let deleted = try #require(conflicts.first { $0.key == first.id.lowercasedString })
      #expect(deleted.kind == .deleted && deleted.field == "zone")
      #expect(deleted.winner.eventID == delete.id && deleted.winner.value == nil)
      #expect(deleted.loser.eventID == change.id && deleted.loser.value == #""terrace""#)
      let discarded = try #require(conflicts.first { $0.key == second.id.lowercasedString })
      #expect(discarded.kind == .discarded && discarded.field == "label")
      #expect(discarded.winner.eventID == secondDelete.id && discarded.winner.value == nil)
      #expect(discarded.loser.eventID == secondChange.id && discarded.loser.value == #""Bar""#)
      #expect(try await device.entities.get(id: first.id) == nil)
      #expect(try await device.entities.get(id: second.id) == nil)
      try await Self.checkLocal(device)
    }
  }

  @Test("sequential changes, on one device or after an exchange, are no conflict")
  func sequential() async throws {
    let phone = try device("phone.db")
    let tablet = try device("tablet.db")
    let table = try await phone.tables.add(label: "A", seats: 2, zone: "inside")
    _ = try await phone.tables.change(id: table.id, label: "B", seats: nil, zone: nil)
    _ = try await phone.tables.change(id: table.id, label: "C", seats: nil, zone: nil)
    try await Self.send(from: phone, to: tablet)
    // The tablet's clock is behind: its change follows the phone's because it had seen it.
    tablet.clock.advance(-600)
    _ = try await tablet.tables.change(id: table.id, label: "D", seats: 3, zone: nil)
    try await Self.send(from: tablet, to: phone)
    _ = try await phone.tables.change(id: table.id, label: "E", seats: nil, zone: nil)
    try await phone.entities.delete(id: table.id)
    try await Self.exchange(phone, tablet)
    #expect(try phone.store.conflicts().isEmpty)
    #expect(try tablet.store.conflicts().isEmpty)
  }

  @Test("three devices apart: every device records the same conflicts, whatever order it took them in")
  func arrivalOrder() async throws {
    let a = try device("a.db")
    let b = try device("b.db")
    let c = try device("c.db")
    let table = try await a.tables.add(label: "A", seats: 2, zone: "inside")
    try await Self.send(from: a, to: b)
    try await Self.send(from: a, to: c)
    a.clock.advance(1)
    b.clock.advance(3)
    c.clock.advance(2)
    _ = try await a.tables.change(id: table.id, label: "by a", seats: nil, zone: nil)
    _ = try await b.tables.change(id: table.id, label: "by b", seats: nil, zone: nil)
    _ = try await c.tables.change(id: table.id, label: "by c", seats: 5, zone: nil)
    // A takes b's (later) first, then c's (between); c takes a's late, then b's.
    try await Self.send(from: b, to: a)
    try await Self.send(from: c, to: a)
    try await Self.send(from: a, to: c)
    try await Self.send(from: a, to: b)
    let reference = try a.store.conflicts().map(Self.portable)
    // In stamp order a's, c's, b's label: c's overwrote a's, b's overwrote c's, none had seen
    // the one it overwrote. C's seats only c changed.
    #expect(reference.count == 2)
    #expect(reference.map(\.loser.value) == [#""by a""#, #""by c""#])
    #expect(reference.map(\.winner.value) == [#""by c""#, #""by b""#])
    #expect(Set(reference.map(\.field)) == ["label"])
    #expect(try b.store.conflicts().map(Self.portable) == reference)
    #expect(try c.store.conflicts().map(Self.portable) == reference)
    // A fresh store that takes b's log, in b's order.
    let fresh = try device("fresh.db")
    try await Self.send(from: b, to: fresh)
    #expect(try fresh.store.conflicts().map(Self.portable) == reference)
    for device in [a, b, c, fresh] { try await Self.checkLocal(device) }
  }

  @Test(
    "devices that change, delete and exchange at random hold the same conflicts, and a replay rebuilds them",
    arguments: [UInt64(1), 2, 3])
  func randomExchanges(seed: UInt64) async throws {
    var random = SplitMix64(seed: 0xC0_F1_1C7 &+ seed)
    func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
    let devices = try (0..<3).map { try device("device-\($0).db") }
    var trace: [String] = []
    for step in 0..<80 {
      let index = below(3)
      let device = devices[index]
      // Clocks apart by up to a few seconds either way, stepping on.
      device.clock.advance(Double(below(3_000)) / 1_000 - 1)
      let live = try await device.tables.tables(inZone: nil)
      switch below(10) {
      case 0, 1:
        _ = try await device.tables.add(label: "t\(step)", seats: 2, zone: "inside")
        trace.append("\(step): \(index) adds")
      case 2..<7 where !live.isEmpty:
        let table = live[below(live.count)]
        let value = "\(step) by \(index)"
        switch below(3) {
        case 0: _ = try await device.tables.change(id: table.id, label: value, seats: nil, zone: nil)
        case 1: _ = try await device.tables.change(id: table.id, label: nil, seats: 1 + below(20), zone: nil)
        default: _ = try await device.tables.change(id: table.id, label: nil, seats: nil, zone: value)
        }
        trace.append("\(step): \(index) changes \(table.label)")
      case 7 where !live.isEmpty:
        let table = live[below(live.count)]
        try await device.entities.delete(id: table.id)
        trace.append("\(step): \(index) deletes \(table.label)")
      default:
        let source = devices[below(3)]
        try await Self.send(from: source, to: device)
        trace.append("\(step): \(index) takes another's events")
      }
    }
    for target in devices { for source in devices { try await Self.send(from: source, to: target) } }
    let reference = try devices[0].store.conflicts().map(Self.portable)
    for device in devices {
      #expect(
        try device.store.conflicts().map(Self.portable) == reference,
        "seed \(seed):\n\(trace.joined(separator: "\n"))")
      try await Self.checkLocal(device)
    }
    // A fresh store that takes the three logs merged at random, each in its order.
    let fresh = try device("fresh.db")
    var logs = try devices.map { try $0.store.events()[...] }
    var merged: [RecordedEvent] = []
    var seen = Set<UUID>()
    while let next = logs.indices.filter({ !logs[$0].isEmpty }).randomElement(using: &random) {
      let event = logs[next].removeFirst()
      if seen.insert(event.id).inserted { merged.append(event) }
    }
    _ = try await fresh.store.ingest(
      merged.map { event in
        EventStore.IngestedEvent(
          stream: event.stream,
          event: NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt),
          provenance: event.provenance)
      })
    #expect(try fresh.store.conflicts().map(Self.portable) == reference, "seed \(seed)")
    // Not vacuous: the devices changed things apart.
    #expect(!reference.isEmpty, "seed \(seed): no conflict")
    print("[conflicts] seed \(seed): \(reference.count) conflicts, \(merged.count) events")
  }

  @Test("the repository follows its entity's conflicts")
  func repositorySequence() async throws {
    let phone = try device("phone.db")
    let tablet = try device("tablet.db")
    let table = try await phone.tables.add(label: "A", seats: 2, zone: "inside")
    try await Self.send(from: phone, to: tablet)
    let seen = Collected()
    let entities = phone.entities
    let following = Task {
      for try await conflicts in entities.conflicts() { seen.values.withLock { $0.append(conflicts) } }
    }
    defer { following.cancel() }
    /// Waits (10 s at most) for the sequence to have yielded `count` values.
    func values(_ count: Int) async throws -> [[Conflict]] {
      for _ in 0..<1_000 where seen.values.withLock({ $0.count }) < count {
        try await Task.sleep(for: .milliseconds(10))
      }
      return seen.values.withLock { $0 }
    }
    #expect(try await values(1) == [[]])
    phone.clock.advance(1)
    tablet.clock.advance(2)
    _ = try await phone.tables.change(id: table.id, label: "Phone", seats: nil, zone: nil)
    _ = try await tablet.tables.change(id: table.id, label: "Tablet", seats: nil, zone: nil)
    try await Self.send(from: tablet, to: phone)
    let yielded = try await values(2)
    try #require(yielded.count == 2)
    #expect(yielded[1] == (try phone.store.conflicts()))
    #expect(yielded[1].map(\.field) == ["label"] && yielded[1].first?.winner.value == #""Tablet""#)
    #expect(throws: EventStoreError.self) { try phone.store.conflicts(in: "no-such-table") }
  }
}
