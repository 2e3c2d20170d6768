import EventLog
import Foundation
import RestaurantBooking
import Synchronization
import TestKit
import Testing

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

#if canImport(Glibc)
  import Glibc
  private let sendSignal = Glibc.kill
#elseif canImport(Darwin)
  import Darwin
  private let sendSignal = Darwin.kill
#endif

/// The reliability tests, one suite so that they run one at a time: they spawn processes and
/// measure files, and two of them at once on 2 cores would blur each other's timings.
@Suite(.serialized) enum Reliability {}

// MARK: - Quick and full mode

/// Quick mode (the default, for CI) or full mode (`EVENTLOG_FULL=1`, run by hand).
enum Mode {
  /// Whether `EVENTLOG_FULL=1` is set.
  static let full = ProcessInfo.processInfo.environment["EVENTLOG_FULL"] == "1"

  /// The seed of every random choice: `EVENTLOG_SEED`, else a fixed one, so a failure repeats.
  static let seed: UInt64 =
    ProcessInfo.processInfo.environment["EVENTLOG_SEED"].flatMap { UInt64($0) }
    ?? 0x5EED_0006

  static func pick<T>(quick: T, full: T) -> T { Mode.full ? full : quick }

  static var name: String { full ? "full" : "quick" }
}

/// Prints one line of figures for Docs/Reliability.md (shown in the test output).
func report(_ test: String, _ figures: String) {
  print("[reliability] \(test) (\(Mode.name), seed \(Mode.seed)): \(figures)")
}

// MARK: - Environments
extension EventStore.Options {
  /// No flush per commit: a process crash (not a power loss) keeps every returned commit.
  static var noSync: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    return options
  }

  /// Opened read-only: nothing is caught up or written.
  static var readOnlyAccess: EventStore.Options {
    var options = EventStore.Options()
    options.readOnly = true
    return options
  }
}

/// Closes a store (``EventStore/close()``) and drops it, so that the environment can be opened
/// again (LMDB forbids opening one environment twice in a process).
func close(_ store: inout EventStore?) async {
  await store?.close()
  store = nil
}

// MARK: - Child processes

/// The built executables next to the test bundle (`.build/<config>/`).
enum Binaries {
  static let stress = locate("eventlog-stress", override: "EVENTLOG_STRESS_BINARY")
  static let eventlog = locate("eventlog", override: "EVENTLOG_BINARY")

  private static func locate(_ name: String, override: String) -> String {
    builtProduct(name, override: override)
  }
}

/// How a child process ended.
enum Termination: Equatable, CustomStringConvertible {
  case exited(Int32)
  case signaled(Int32)

  var description: String {
    switch self {
    case .exited(let status): "exit status \(status)"
    case .signaled(let signal): "signal \(signal)"
    }
  }
}

/// A child process whose standard output and error go to files (read while it runs; no pipe to
/// fill up and block it, nothing lost when it is killed).
final class Child {
  let process = Process()
  let name: String
  private let stdoutURL: URL
  private let stderrURL: URL

  /// Starts `executable arguments…` in `directory`.
  init(_ executable: String, _ arguments: [String], in directory: URL) throws {
    name = URL(fileURLWithPath: executable).lastPathComponent + " " + (arguments.first ?? "")
    let id = UUID().uuidString
    stdoutURL = directory.appendingPathComponent("child-\(id).out")
    stderrURL = directory.appendingPathComponent("child-\(id).err")
    _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
    try process.run()
  }

  deinit {
    if process.isRunning { _ = sendSignal(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: stdoutURL)
    try? FileManager.default.removeItem(at: stderrURL)
  }

  /// The complete lines written to standard output so far (a line cut by a kill is left out).
  var lines: [String] {
    let text = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines.removeLast()  // after the last newline: empty, or a line that was cut
    return lines
  }

  /// Standard error so far.
  var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

  /// Waits until a line starting with `prefix` was written; `nil` on timeout or exit.
  func waitForLine(prefix: String, timeout: Duration) async -> String? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
      if !process.isRunning { return lines.first(where: { $0.hasPrefix(prefix) }) }
      try? await Task.sleep(for: .milliseconds(2))
    }
    return nil
  }

  /// Sends `signal` (SIGSTOP, SIGCONT, …); whether it was sent.
  @discardableResult
  func send(_ signal: Int32) -> Bool {
    process.isRunning && sendSignal(process.processIdentifier, signal) == 0
  }

  /// SIGKILL: no handler, no clean-up, like a crash or the OOM killer.
  func kill() {
    if process.isRunning { _ = sendSignal(process.processIdentifier, SIGKILL) }
  }

  /// Waits for the process to end; `nil` on timeout (the process is then killed).
  func wait(timeout: Duration) async -> Termination? {
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
      if ContinuousClock.now >= deadline {
        kill()
        return nil
      }
      try? await Task.sleep(for: .milliseconds(2))
    }
    process.waitUntilExit()
    switch process.terminationReason {
    case .exit: return .exited(process.terminationStatus)
    case .uncaughtSignal: return .signaled(process.terminationStatus)
    @unknown default: return .exited(process.terminationStatus)
    }
  }
}

// MARK: - Acknowledged events

/// An event a writer process printed after its append returned:
/// `seq <seq> <id> <stream> <type> <payload length> <payload FNV-1a 64>`.
struct Acknowledged: Hashable, CustomStringConvertible {
  var sequence: UInt64
  var id: UUID
  var stream: String
  var type: String
  var length: Int
  var hash: UInt64

  init(sequence: UInt64, id: UUID, stream: String, type: String, length: Int, hash: UInt64) {
    self.sequence = sequence
    self.id = id
    self.stream = stream
    self.type = type
    self.length = length
    self.hash = hash
  }

  init(_ event: RecordedEvent) {
    self.init(
      sequence: event.sequence, id: event.id, stream: event.stream.rawValue, type: event.type,
      length: event.payload.count, hash: FNV1a64.hash(event.payload))
  }

  /// Parses a `seq …` line; `nil` for other lines.
  init?(line: String) {
    let fields = line.split(separator: " ")
    guard fields.count == 7, fields[0] == "seq", let sequence = UInt64(fields[1]),
      let id = UUID(uuidString: String(fields[2])), let length = Int(fields[5]),
      let hash = UInt64(fields[6], radix: 16)
    else { return nil }
    self.init(
      sequence: sequence, id: id, stream: String(fields[3]), type: String(fields[4]), length: length,
      hash: hash)
  }

  static func parse(_ lines: [String]) -> [Acknowledged] {
    lines.compactMap { $0.hasPrefix("seq ") ? Acknowledged(line: $0) : nil }
  }

  var description: String { "seq \(sequence) \(id) \(stream) \(type) \(length) \(hash)" }
}

// MARK: - Audit after a crash

/// What ``audit(path:projections:acknowledged:appendProbe:)`` found.
struct Audit {
  /// The head of the log as found (before the probe).
  var head: UInt64 = 0
  /// Whether the environment could be opened read-only (it cannot before its first commit).
  var openedReadOnly = false
  /// Each projection's checkpoint as found.
  var checkpoints: [String: UInt64] = [:]
  /// Every check that failed.
  var problems: [String] = []
  /// The probe event appended after the checks, acknowledged.
  var probe: Acknowledged?
}

/// Checks an environment left by a killed process, then appends one event.
///
/// Read-only first, so that nothing is caught up or repaired before it is looked at: the log is
/// a gap-free prefix `1...head` with unique IDs, `verify()` is ok (checksums, indexes,
/// checkpoints, projections against a replay), each projection's checkpoint is at or below the
/// head, a fresh replay equals the live projections, and every acknowledged event is stored at
/// its sequence number with the same ID, stream, type and payload bytes. Then the store is
/// opened for writing and one more event is appended at `head + 1`.
func audit(
  path: String, projections: [any Projection], acknowledged: [UInt64: Acknowledged], appendProbe: Bool = true
) async throws -> Audit {
  var result = Audit()
  var readOnlyStore: EventStore?
  do {
    readOnlyStore = try EventStore(path: path, projections: projections, options: .readOnlyAccess)
  } catch {
    // Killed before the first commit: there may be no environment, or one without databases.
    if !acknowledged.isEmpty {
      result.problems.append("cannot open read-only with \(acknowledged.count) events acknowledged: \(error)")
    }
  }
  if let store = readOnlyStore {
    result.openedReadOnly = true
    let head = try store.head()
    result.head = head
    if let highest = acknowledged.keys.max(), highest > head {
      result.problems.append("event \(highest) was acknowledged but the head is \(head)")
    }
    result.checkpoints = try store.read { snapshot in
      try Dictionary(
        uniqueKeysWithValues: projections.map { ($0.name, try snapshot.checkpoint(of: $0.name)) })
    }
    for (name, checkpoint) in result.checkpoints where checkpoint > head {
      result.problems.append("projection '\(name)' checkpoint \(checkpoint) is past the head \(head)")
    }
    let verification = try store.verify()
    if !verification.isClean { result.problems.append("verify: \(verification.problems.prefix(5))") }
    if verification.events != head {
      result.problems.append("verify saw \(verification.events) events, head \(head)")
    }
    if !projections.isEmpty, let difference = try store.firstDifference(from: store.replay()) {
      result.problems.append("the projections differ from a replay: \(difference)")
    }
    var expected: UInt64 = 1
    var ids = Set<UUID>()
    var matched = 0
    try store.forEachEvent { event in
      if event.sequence != expected {
        result.problems.append("a gap: expected event \(expected), found \(event.sequence)")
        expected = event.sequence
      }
      expected += 1
      if !ids.insert(event.id).inserted { result.problems.append("event ID \(event.id) is stored twice") }
      if let printed = acknowledged[event.sequence] {
        let stored = Acknowledged(event)
        if stored != printed {
          result.problems.append("event \(event.sequence) is \(stored), acknowledged as \(printed)")
        }
        matched += 1
      }
      return result.problems.count < 20
    }
    if expected - 1 != head { result.problems.append("read \(expected - 1) events, head \(head)") }
    if matched != acknowledged.count {
      result.problems.append("only \(matched) of \(acknowledged.count) acknowledged events are stored")
    }
  }
  await close(&readOnlyStore)
  guard appendProbe else { return result }
  var store: EventStore? = try EventStore(path: path, projections: projections, options: .noSync)
  if let store {
    let headNow = try store.head()
    if headNow != result.head {
      result.problems.append("the head is \(headNow) on the writable open, \(result.head) read-only")
    }
    let probe = try DomainEvents.bookingAppend(seed: UInt64(headNow) &+ Mode.seed)
    let appended = try await store.append([probe])
    if appended.lastSequence != headNow + 1 {
      result.problems.append("the next append landed at \(appended.lastSequence), not \(headNow + 1)")
    }
    if let event = try store.event(at: appended.lastSequence) { result.probe = Acknowledged(event) }
  }
  await close(&store)
  return result
}

// MARK: - Fingerprints

/// The fingerprint `eventlog-stress read-loop` prints: FNV-1a 64 of (sequence, id, payload) of
/// events `1...last`, in order.
func readLoopDigest(_ store: EventStore, through last: UInt64) throws -> String {
  var digest = FNV1a64()
  try store.forEachEvent(through: last) { event in
    digest.add(event.sequence)
    withUnsafeBytes(of: event.id.uuid) { digest.add($0) }
    digest.add(event.payload)
    return true
  }
  return digest.hex
}

/// A fingerprint of every field of every event: sequence, ID, stream, version, type, schema
/// version, recorded-at (µs), metadata and payload.
func logFingerprint(_ store: EventStore) throws -> (events: Int, digest: UInt64) {
  var digest = FNV1a64()
  let count = try store.forEachEvent { event in
    digest.add(event.sequence)
    withUnsafeBytes(of: event.id.uuid) { digest.add($0) }
    digest.add(event.stream.rawValue)
    digest.add(event.version)
    digest.add(event.type)
    digest.add(UInt64(event.schemaVersion))
    digest.add(UInt64(bitPattern: Int64((event.recordedAt.timeIntervalSince1970 * 1e6).rounded())))
    digest.add(event.metadata.correlationID.map { $0.uuidString } ?? "-")
    digest.add(event.metadata.causationID.map { $0.uuidString } ?? "-")
    digest.add(event.metadata.origin)
    digest.add(UInt64(event.payload.count))
    digest.add(event.payload)
    return true
  }
  return (count, digest.value)
}

/// Every entry of every table of every projection, live.
func liveTables(_ store: EventStore) throws -> [String: [[UInt8]: [UInt8]]] {
  try store.read { snapshot in
    var result: [String: [[UInt8]: [UInt8]]] = [:]
    for projection in store.projections {
      let view = try snapshot.projection(projection.name)
      for table in projection.tables { result["\(projection.name)/\(table)"] = try dump(view, table) }
    }
    return result
  }
}

/// Every entry of every table of a replay.
func replayedTables(
  _ store: EventStore, _ replay: EventStore.ReplayResult
) throws -> [String: [[UInt8]: [UInt8]]] {
  var result: [String: [[UInt8]: [UInt8]]] = [:]
  for projection in store.projections {
    let view = try replay.projection(projection.name)
    for table in projection.tables { result["\(projection.name)/\(table)"] = try dump(view, table) }
  }
  return result
}

private func dump(_ view: ProjectionReader, _ table: String) throws -> [[UInt8]: [UInt8]] {
  var entries: [[UInt8]: [UInt8]] = [:]
  try view.forEach(in: table) { key, value in
    entries[[UInt8](key)] = [UInt8](value)
    return true
  }
  return entries
}

// MARK: - Random numbers and domain events
/// Domain events for fixtures: restaurants added, renamed and removed on the catalog stream,
/// bookings created and deleted, with dates on whole seconds (so that an export and import keep
/// every payload byte).
struct DomainEvents {
  private var random: SplitMix64
  private var restaurants: [(id: UUID, name: String, cuisine: String)] = []
  private var bookings: [UUID] = []

  init(seed: UInt64) { random = SplitMix64(seed: seed) }

  /// One atomic append of about `count` events across the catalog and booking streams.
  mutating func append(count: Int) throws -> [EventStore.StreamAppend] {
    var catalog: [NewEvent] = []
    var appends: [EventStore.StreamAppend] = []
    var created: [UUID] = []
    var deletable = bookings
    bookings.removeAll(keepingCapacity: true)
    for _ in 0..<count {
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<15:
        let restaurant = (
          id: UUID(), name: "Restaurant \(random.next() % 1_000_000)",
          cuisine: ["Italian", "Thai", "Greek", "Mexican"][Int(random.next() % 4)]
        )
        restaurants.append(restaurant)
        catalog.append(
          try NewEvent(
            RestaurantAdded(restaurantID: restaurant.id, name: restaurant.name, cuisine: restaurant.cuisine),
            metadata: metadata))
      case 15..<22 where !restaurants.isEmpty:
        let index = Int.random(in: 0..<restaurants.count, using: &random)
        let old = restaurants[index]
        restaurants[index].name = "Restaurant \(random.next() % 1_000_000)"
        catalog.append(
          try NewEvent(
            RestaurantUpdated(
              restaurantID: old.id, name: .init(old: old.name, new: restaurants[index].name), cuisine: nil),
            metadata: metadata))
      case 22..<24 where !restaurants.isEmpty:
        let old = restaurants.remove(at: Int.random(in: 0..<restaurants.count, using: &random))
        catalog.append(
          try NewEvent(
            RestaurantRemoved(restaurantID: old.id, name: old.name, cuisine: old.cuisine), metadata: metadata)
        )
      case 24..<40 where !deletable.isEmpty:
        let id = deletable.removeLast()
        appends.append(
          EventStore.StreamAppend(
            stream: RestaurantBookingStreams.booking(id), expectedVersion: .exactly(1),
            events: [try NewEvent(BookingDeleted(bookingID: id), metadata: metadata)]))
      default:
        let id = UUID()
        created.append(id)
        appends.append(try booking(id))
      }
    }
    bookings = deletable + created
    if !catalog.isEmpty {
      appends.append(EventStore.StreamAppend(stream: RestaurantBookingStreams.catalog, events: catalog))
    }
    return appends
  }

  private var metadata: EventMetadata { EventMetadata(correlationID: UUID(), origin: "reliability-tests") }

  private mutating func booking(_ id: UUID) throws -> EventStore.StreamAppend {
    let restaurant = restaurants.randomElement(using: &random)
    let event = BookingCreated(
      bookingID: id, restaurantID: restaurant?.id ?? UUID(), restaurantName: restaurant?.name ?? "Walk-in",
      date: Date(timeIntervalSinceReferenceDate: Double(800_000_000 + random.next() % 100_000_000)),
      partySize: Int(1 + random.next() % 12), customerID: testCustomerID,
      customerName: "Guest \(random.next() % 100_000)",
      notes: random.next() % 3 == 0 ? "window seat" : nil,
      createdAt: Date(timeIntervalSinceReferenceDate: 780_000_000))
    return EventStore.StreamAppend(
      stream: RestaurantBookingStreams.booking(id), expectedVersion: .noStream,
      // Sealed here, so that the event acknowledged is the event stored (the store seals an
      // event it is given unsealed, with a random nonce).
      events: [try NewEvent(event, metadata: metadata).sealingPendingValues(with: { _ in Self.customerKey })])
  }

  /// The key the bookings' personal values are sealed with.
  static let customerKey = [UInt8](repeating: 0x5E, count: 32)

  /// One new booking in its own stream.
  static func bookingAppend(seed: UInt64) throws -> EventStore.StreamAppend {
    var generator = DomainEvents(seed: seed)
    return try generator.booking(UUID())
  }

  /// Fills `store` with `count` events in appends of `batch` events.
  static func populate(_ store: EventStore, count: Int, batch: Int = 1_000, seed: UInt64) async throws {
    var generator = DomainEvents(seed: seed)
    var written = 0
    while written < count {
      let appends = try generator.append(count: min(batch, count - written))
      let result = try await store.append(appends)
      written += result.events.count
    }
  }
}
