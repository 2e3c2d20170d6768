import EventLog
import Foundation
import Postgres
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import TestKit
import Testing

/// The customer (data subject) of this file's bookings.
private let testCustomerID = UUID(uuidString: "c0570e00-0000-4000-8000-000000000001") ?? UUID()

/// Issue 28's property: every export of anything a pull can store imports again. Whatever a
/// pull stores (in binary, as JSON, skipped as unreadable, invalid or refused), `export` writes
/// a file that `import` into an empty environment stores identically (the same records, JSON
/// flags and layouts, the same events skipped the same way), whose `export` is the same bytes.
///
/// The shapes are what a hostile co-device can push (``PulledShapes``): fields of the wrong type,
/// missing fields, extra keys at any depth, nested objects, unknown types, other schema versions,
/// `$binary` forms, NUL and other control characters, lone surrogates, numbers beyond a `Double`,
/// duplicate keys, other streams, repeated IDs. They are handed to the store as a pull hands them
/// (`PayloadConversion`, then `ingest` page by page), or pushed through a real PostgreSQL and
/// pulled.
///
/// Quick mode (CI): fixed seeds. `EVENTLOG_FULL=1`: more seeds, random ones, and more shapes.
/// `EVENTLOG_SEED=n` replays one seed.
@Suite("Every export of what a pull stores imports again")
struct PulledShapePropertyTests {
  static let full = ModelCheck.full
  static var seeds: [UInt64] { full ? ModelCheck.randomSeeds(count: 8) : ModelCheck.seeds([28, 2_028]) }

  @Test func everyPulledShapeHandedToTheStoreExportsAndImportsAgain() async throws {
    for seed in Self.seeds {
      let trace = ModelCheck.Trace(seed: seed)
      var shapes = PulledShapes(seed: seed)
      let directory = TemporaryDirectory("shapes")
      let device = try EventStore(path: directory.environment(), schema: .restaurantBooking, options: .fast)
      try await shapes.addLocalEvents(to: device)
      let conversion = try PayloadConversion(store: device)
      var position: UInt64 = 0
      for _ in 0..<(Self.full ? 30 : 6) {
        // A page, as `Replicator` stores it: replicated streams only, converted, then ingested.
        var page: [EventStore.IngestedEvent] = []
        for _ in 0..<(Self.full ? 100 : 40) {
          position += 1
          let (shaped, shape) = shapes.next(position: position)
          trace.steps.append("\(position): \(shape)")
          // The row as a transport reads it, checked field by field.
          let row = try ReplicationWire.row(
            ReplicationWire.RowFields(
              position: String(position), id: shaped.id.uuidString,
              originDevice: shaped.originDevice.uuidString,
              originSequence: String(shaped.originSequence), stream: shaped.stream.rawValue,
              type: shaped.type,
              schemaVersion: String(shaped.schemaVersion), payload: shaped.payload,
              correlationID: shaped.metadata.correlationID?.uuidString, causationID: nil,
              origin: shaped.metadata.origin,
              recordedAtMicroseconds: String(shaped.recordedAt.microsecondsSince1970)),
            server: "shapes")
          guard case .event(let event) = row, RestaurantBookingSchema.isReplicated(event.stream),
            case .event(let stored) = conversion.incoming(event)
          else { continue }
          page.append(EventStore.IngestedEvent(stream: event.stream, event: stored))
        }
        _ = try await device.ingest(page)
      }
      #expect(try device.verify().isClean, "\(trace)")
      #expect(try device.firstDifference(from: device.replay()) == nil, "\(trace)")
      try expectEveryOutcome(in: device, trace: trace)
      let problems = try backupProblems(of: device, in: directory)
      #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(trace)")
      await device.close()
    }
  }
}

/// The same, through a real PostgreSQL: a co-device pushes the shapes one by one (what the server
/// refuses goes no further), and a device pulls them.
@Suite("Every export of what a pull from PostgreSQL stores imports again", .needsPostgres)
struct PulledShapeServerPropertyTests {
  @Test func everyShapeAServerHoldsExportsAndImportsAgain() async throws {
    for seed in PulledShapePropertyTests.seeds {
      let trace = ModelCheck.Trace(seed: seed)
      var shapes = PulledShapes(seed: seed)
      let fixture = try await ServerFixture()
      let ada = try fixture.customer("ada")
      let hostile = try Device(ada)
      let count = PulledShapePropertyTests.full ? 400 : 120
      for index in 1...count {
        let (event, shape) = shapes.next(position: UInt64(index))
        let outgoing = OutgoingEvent(
          localSequence: UInt64(index), id: event.id, stream: event.stream, type: event.type,
          schemaVersion: event.schemaVersion, payload: event.payload, metadata: event.metadata,
          recordedAt: event.recordedAt)
        let outcome: String
        do {
          outcome =
            "\(try await hostile.transport.push([outgoing], device: .random(), through: UInt64(index)))"
        } catch let error as PostgresError where error.failureKind == .rejected {
          outcome = "refused: \(error.sqlState ?? "")"
        }
        trace.steps.append("\(index): \(shape) -> \(outcome)")
      }
      let tablet = try Device(ada)
      try await shapes.addLocalEvents(to: tablet.store)
      let pulled = try await tablet.pull()
      trace.steps.append("pulled: \(pulled)")
      #expect(try tablet.store.verify().isClean, "\(trace)")
      try expectEveryOutcome(in: tablet.store, trace: trace)
      let problems = try backupProblems(of: tablet.store, in: tablet.directory)
      #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(trace)")
    }
  }
}

// MARK: - The check

/// The shapes reached every way a pull stores an event: in binary and as JSON, folded and skipped
/// as unreadable, invalid and refused; and the stored JSON payloads include ones the
/// projections fold (a key the type does not read) and ones they skip.
func expectEveryOutcome(
  in store: EventStore, trace: ModelCheck.Trace, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let events = try store.events(from: 1, limit: .max)
  let skipped = try store.skippedEvents()
  let skippedSequences = Set(skipped.map(\.sequence))
  let json = events.filter { $0.payloadEncoding == .json }
  let summary =
    "\(events.count) events, \(json.count) as JSON, skipped: "
    + "\(Dictionary(grouping: skipped, by: \.kind).mapValues(\.count))"
  trace.steps.append(summary)
  #expect(
    events.contains { $0.payloadEncoding == .binary && !skippedSequences.contains($0.sequence) },
    "\(summary)", sourceLocation: sourceLocation)
  #expect(
    json.contains { !skippedSequences.contains($0.sequence) }, "\(summary)", sourceLocation: sourceLocation)
  #expect(
    json.contains { skippedSequences.contains($0.sequence) }, "\(summary)", sourceLocation: sourceLocation)
  #expect(
    Set(skipped.map(\.kind)) == [.unreadable, .invalid, .refused], "\(summary)",
    sourceLocation: sourceLocation)
}

/// What differs between `store` and the environment its export is imported into: exports,
/// imports and exports again with the built `eventlog`, and compares the two exports byte for
/// byte, the records (payloads, JSON flags), the layouts and the skipped events; `verify` of the
/// copy must pass. Empty when the backup restores the log.
func backupProblems(of store: EventStore, in directory: TemporaryDirectory) throws -> [String] {
  let binary = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  var problems: [String] = []
  let exported = try runChild(binary, ["--db", store.path, "export"])
  guard exported.status == 0 else { return ["export failed: \(exported)"] }
  let file = try directory.file("backup-\(UUID().uuidString).jsonl", Data(exported.stdout.utf8))
  let restored = TemporaryDirectory("restored")
  let imported = try runChild(binary, ["--db", restored.environment(), "import", file])
  guard imported.status == 0 else { return ["import failed: \(imported)"] }
  let again = try runChild(binary, ["--db", restored.environment(), "export"])
  if exportedEvents(again.stdout) != exportedEvents(exported.stdout) {
    let first = exported.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let second = again.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let line =
      zip(first, second).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      ?? min(first.count, second.count)
    problems.append(
      "the exports differ from line \(line + 1):\n  \(first.dropFirst(line).first ?? "(none)")\n  "
        + "\(second.dropFirst(line).first ?? "(none)")")
  }
  let verify = try runChild(binary, ["--db", restored.environment(), "verify"])
  if verify.status != 0 { problems.append("verify of the copy: \(verify)") }
  var options = EventStore.Options.fast
  options.readOnly = true
  let copy = try EventStore(path: restored.environment(), options: options)
  let original = try store.events(from: 1, limit: .max)
  let restoredEvents = try copy.events(from: 1, limit: .max)
  if let index = zip(original, restoredEvents).enumerated().first(where: { $0.element.0 != $0.element.1 })?
    .offset
  {
    problems.append("record \(index + 1) differs:\n  \(original[index])\n  \(restoredEvents[index])")
  } else if original.count != restoredEvents.count {
    problems.append("\(original.count) records, \(restoredEvents.count) restored")
  }
  func skips(_ store: EventStore) throws -> [String] {
    try store.skippedEvents().map { "\($0.sequence) \($0.kind) \($0.reason)" }
  }
  if try skips(copy) != skips(store) {
    problems.append("the skipped events differ:\n  \(try skips(store))\n  \(try skips(copy))")
  }
  if try copy.layouts() != store.layouts() { problems.append("the layouts differ") }
  return problems
}

// MARK: - The shapes

/// Server events of every shape a co-device holding the customer's role can push, from a seed.
/// Most start from a well-formed `BookingCreated` or `BookingDeleted` and break it a few ways.
struct PulledShapes {
  private var random: SplitMix64
  /// The bookings created so far: deletes and second creates name them.
  private var bookings: [UUID] = []
  /// Event IDs used so far: some events repeat one.
  private var ids: [UUID] = []
  /// The restaurant of the bookings, in the device's catalog.
  let restaurant: UUID

  init(seed: UInt64) {
    random = SplitMix64(seed: seed)
    restaurant = random.uuid()
  }

  /// The device's own events: its catalog's restaurant and one booking.
  func addLocalEvents(to store: EventStore) async throws {
    try await store.append(
      [try NewEvent(RestaurantAdded(restaurantID: restaurant, name: "Pasta Palace", cuisine: "italian"))],
      to: RestaurantBookingStreams.catalog)
    _ = try await EventSourcedBookingRepository(store: store, origin: "device").create(
      restaurantID: restaurant, date: Date().addingTimeInterval(86_400), partySize: 2, customerName: "Ada",
      notes: "window")
  }

  private mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
  private mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

  /// Raw JSON values a field may be replaced with, or an extra key may hold.
  private static let values = [
    "2.0", #""2""#, "null", "true", "[]", "{}", #"{"a":{"b":[1,2,{"c":null}]}}"#, "-0", "0", "-1", "1001",
    "1e300", "1e400", "-1e400", "123456789012345678901234567890", "9223372036854775807",
    "9223372036854775808",
    "0.1000000000000000055511151231257827", #""\u0000""#, #""A\u0001\u001f\u007f\u0085""#, #""\ud800""#,
    #""\udc00x""#, #""\ud83d\ude00""#, #""\u2028\u2029""#, #""Zoë""#, #""""#, #""   ""#,
    #""2026-12-24T19:30:00+01:00""#, #""2026-12-24T19:30:00.123456789012Z""#, #""2026-12-24T19:30:00Z""#,
    #""0001-01-01T00:00:00Z""#, #""9999-12-31T23:59:59.999999Z""#, #""not a date""#,
    #""0A0A0A0A-0B0B-4C0C-8D0D-0E0E0E0E0E0E""#, #""0a0a0a0a-0b0b-4c0c-8d0d-0e0e0e0e0e0e""#, #""ZZZZ""#,
    #"{"$binary":"AQID"}"#, String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
  ]

  /// Keys an extra member may have.
  private static let keys = [
    "table", "vip", "", "partysize", "PartySize", "$binary", "$schemaVersion", "ü", #"a\"b"#, "\\u0000",
    "notes", "customerName",
  ]

  /// The shapes every run starts with, whatever the seed: one of each outcome (folded in binary,
  /// refused by the projection, invalid, folded from JSON, unreadable JSON, an unknown type).
  private var fixed: [(second: Bool, edit: Edit)] = [
    (false, .none), (true, .none), (false, .field("partySize", "0")), (false, .extra("table", "4")),
    (false, .field("partySize", #""2""#)), (false, .type("BookingMoved")),
  ]

  /// A fixed shape's one change.
  private enum Edit {
    case none
    case field(String, String)
    case extra(String, String)
    case type(String)
  }

  /// The next event at server `position`, and what its shape is (for a failure's trace).
  mutating func next(position: UInt64) -> (event: ServerEvent, shape: String) {
    var notes: [String] = []
    var booking = random.uuid()
    let fixedShape = fixed.isEmpty ? nil : fixed.removeFirst()
    let deleting = fixedShape == nil && !bookings.isEmpty && chance(25)
    if deleting || fixedShape?.second == true || (fixedShape == nil && !bookings.isEmpty && chance(20)) {
      booking = fixedShape?.second == true ? bookings[bookings.count - 1] : pick(bookings)
    } else {
      bookings.append(booking)
    }
    var type = deleting ? BookingDeleted.eventType : BookingCreated.eventType
    // The event's ID first: a well-formed booking's name is sealed for its event.
    var id = random.uuid()
    if fixedShape == nil, !ids.isEmpty, chance(5) {
      id = pick(ids)
      notes.append("repeated id")
    }
    ids.append(id)
    // The fields of a well-formed event of `type`, as raw JSON text, in order.
    var members: [(key: String, value: String)] =
      deleting
      ? [("bookingID", Self.quoted(booking.lowercasedString))]
      : Self.created(booking: booking, restaurant: restaurant, eventID: id, random: &random)
    var stream = RestaurantBookingStreams.booking(booking)
    var schemaVersion: UInt16 = 1
    var whole: String?

    switch fixedShape?.edit {
    case .field(let key, let value):
      if let index = members.firstIndex(where: { $0.key == key }) { members[index].value = value }
      notes.append("\(key)=\(value)")
    case .extra(let key, let value):
      members.append((key, value))
      notes.append("extra \(key)=\(value)")
    case .type(let name):
      type = name
      notes.append("type \(name)")
    case .none?, nil: break
    }
    for _ in 0..<(fixedShape == nil ? Int(random.next() % 4) : 0) {
      switch random.next() % 12 {
      case 0, 1, 2:
        guard !members.isEmpty else { continue }
        let index = Int(random.next() % UInt64(members.count))
        members[index].value = pick(Self.values)
        notes.append("\(members[index].key)=\(members[index].value)")
      case 3:
        guard !members.isEmpty else { continue }
        let index = Int(random.next() % UInt64(members.count))
        notes.append("no \(members[index].key)")
        members.remove(at: index)
      case 4, 5:
        let key = pick(Self.keys)
        let value = pick(Self.values)
        members.insert((key, value), at: Int(random.next() % UInt64(members.count + 1)))
        notes.append("extra \(key)=\(value)")
      case 6:
        guard let member = members.first else { continue }
        members.append((member.key, pick(Self.values)))
        notes.append("duplicate \(member.key)")
      case 7:
        type = pick(["BookingMoved", "Ünïcödé", RestaurantAdded.eventType, BookingDeleted.eventType, "x"])
        notes.append("type \(type)")
      case 8:
        schemaVersion = pick([0, 2, 3, 65_535])
        notes.append("schema \(schemaVersion)")
      case 9:
        stream = pick([
          StreamID("booking-" + booking.lowercasedString), RestaurantBookingStreams.booking(random.uuid()),
          "booking-nope", RestaurantBookingStreams.catalog, "booking-",
        ])
        notes.append("stream \(stream)")
      case 10:
        let binary = Self.binaryPayload(booking: booking, restaurant: restaurant, random: &random)
        whole = pick([
          #"{"$binary":"\#(binary)"}"#, #"{"$binary":"\#(binary)","$schemaVersion":1}"#,
          #"{"$binary":"\#(binary)","$schemaVersion":2}"#, #"{"$binary":"\#(binary)","x":1}"#,
          #"{"$binary":"AQID","$schemaVersion":1}"#, #"{"$binary":"!!"}"#, #"{"$binary":5}"#, "{}",
          String(repeating: #"{"a":"#, count: 60) + "1" + String(repeating: "}", count: 60),
        ])
        notes.append("payload \(whole?.prefix(60) ?? "")")
      default:
        // Key order and white space: the same value to a reader.
        members.shuffle(using: &random)
        notes.append("shuffled")
      }
    }
    let payload =
      whole ?? "{"
      + members.map { Self.quotedKey($0.key) + (chance(20) ? " : " : ":") + $0.value }
      .joined(separator: chance(20) ? " ,\n" : ",") + "}"
    let origin = pick(["co-device", "Zoë's phone", "tab\tbed", "", String(repeating: "o", count: 900)])
    let event = ServerEvent(
      position: position, id: id, originDevice: random.uuid(), originSequence: position, stream: stream,
      type: type, schemaVersion: schemaVersion, payload: Array(payload.utf8),
      metadata: EventMetadata(correlationID: chance(50) ? random.uuid() : nil, origin: origin),
      recordedAt: Date(
        microsecondsSince1970: 1_700_000_000_000_000 + Int64(random.next() % 10_000_000_000_000)))
    return (event, "\(type) \(notes.joined(separator: ", ")): \(payload.prefix(300))")
  }

  /// The key the well-formed bookings' names are sealed with (a key the pulling device does not
  /// hold: their names show as unavailable, which changes nothing a backup holds).
  private static let customerKey = [UInt8](repeating: 28, count: 32)

  /// A well-formed `BookingCreated`'s members, as raw JSON, with names of every kind: sealed for
  /// event `eventID` (Base64, as a device of this build pushes them), or in clear (as a build
  /// before sealing pushed them).
  private static func created(
    booking: UUID, restaurant: UUID, eventID: UUID, random: inout SplitMix64
  ) -> [(key: String, value: String)] {
    let name = ["Ada", "Zoë", "李", "A\u{1}b", "x y"][Int(random.next() % 5)]
    let notes = random.next() % 2 == 0 ? nil : "by the window \u{1F600}"
    var value = BookingCreated(
      bookingID: booking, restaurantID: restaurant, restaurantName: "Pasta Palace",
      date: Date(timeIntervalSinceReferenceDate: Double(random.next() % 1_000_000_000)),
      partySize: Int(random.next() % 30),
      customerID: testCustomerID, customerName: name, notes: notes,
      createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000.123_456_7))
    if random.next() % 4 == 0 {
      value.customerName = Personal(storedBytes: Array(name.utf8))
      value.notes = notes.map { Personal(storedBytes: Array($0.utf8)) }
    } else if let sealed = try? NewEvent(value, id: eventID).sealingPendingValues(with: { _ in customerKey }),
      let stored = try? BinaryDecoder().decode(BookingCreated.self, from: sealed.payload)
    {
      value = stored
    }
    guard let json = try? PayloadJSONEncoder().encode(value), let members = try? JSONNode.parse(json).members
    else {
      // (A plain value to seal does not render: the shapes would all be `{}`.)
      Issue.record("a well-formed BookingCreated does not render as JSON")
      return []
    }
    return members.keys.sorted().compactMap { key in
      members[key].map { (key, String(decoding: $0.rendered, as: UTF8.self)) }
    }
  }

  /// The Base64 of a `BookingCreated`'s binary payload, a damaged one, or random bytes.
  private static func binaryPayload(booking: UUID, restaurant: UUID, random: inout SplitMix64) -> String {
    let value = BookingCreated(
      bookingID: booking, restaurantID: restaurant, restaurantName: "Pasta Palace",
      date: Date(timeIntervalSinceReferenceDate: 900_000_000), partySize: 3,
      // A name as stored before sealing: a binary payload a pull may hand over, which encodes without a key
      // (a plain value to seal does not: its encoder seals only in an append).
      customerName: Personal(storedBytes: Array((random.next() % 3 == 0 ? "A\u{0}da" : "Ada").utf8)),
      notes: nil,
      createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
    var bytes = (try? BinaryEncoder().encode(value)) ?? []
    switch random.next() % 4 {
    case 0: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
    case 1: bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    default: break
    }
    return Data(bytes).base64EncodedString()
  }

  private static func quoted(_ text: String) -> String {
    String(decoding: JSONNode(.string(text)).rendered, as: UTF8.self)
  }

  /// A key as JSON: the listed keys that hold a backslash are written as they are (escapes).
  private static func quotedKey(_ key: String) -> String { key.contains("\\") ? "\"\(key)\"" : quoted(key) }
}
