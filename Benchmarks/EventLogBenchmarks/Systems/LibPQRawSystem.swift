import EventLog
import Foundation
import Replication
import RestaurantBooking

/// `libpq-raw`: hand-written libpq (``RawPQConnection``: prepared statements, binary parameters
/// and results) doing the rows of the replicate workloads, with the same local work as
/// `eventlog`'s `Replicator`, so that the comparison is about the transport.
///
/// - Push: reads the outbox from the same local log (`EventStore.events(from:limit:)`, replicated
///   streams, not pulled), in batches of ``ReplicationOptions/pushBatchSize`` (500); each batch
///   is one server transaction of one multi-row `INSERT` into `eventlog.events`, at positions
///   the client assigns after the owner's head it read once, and the upsert of the device's mark
///   into `eventlog.devices`; then the local pushed mark, as `Replicator` writes it. It checks no
///   idempotency (a duplicate ID fails the insert), sends no notification and reads no row back.
/// - Pull: `SELECT`s pages of ``ReplicationOptions/pullPageSize`` (1000) of the owner's events
///   after the cursor, and stores each with `EventStore.ingest` with the same state changes as
///   `Replicator` (the cursor, where each event came from) in one durable local transaction.
struct LibPQRawSystem: BenchmarkSystem {
  func prepareFixture(_ workload: Workload, size: Int, at path: String) async throws {
    guard workload.needsServer else { throw UnsupportedWorkload(workload: workload, system: .libpqRaw) }
    try await ReplicationFixture.build(workload, size: size, at: path)
  }

  func makeRun(
    _ workload: Workload, size: Int, batchSize: Int, fixture: String?, directory: String
  ) async throws -> PreparedRun {
    guard let fixture, workload.needsServer else {
      throw UnsupportedWorkload(workload: workload, system: .libpqRaw)
    }
    let options = ReplicationOptions()
    if workload == .replicatePush {
      let run = try ReplicationFixture.PushRun(fixture: fixture, directory: directory)
      let pusher = try RawPusher(
        connection: RawPQConnection(url: run.url), store: run.store, batchSize: options.pushBatchSize)
      let box = CountBox()
      return PreparedRun(
        operations: size,
        body: { box.count = try await pusher.push() },
        finish: { try run.finish(stored: box.count) },
        externalCPUSeconds: try run.backendCPU())
    }
    let run = try ReplicationFixture.PullRun(fixture: fixture, directory: directory)
    let puller = try RawPuller(
      connection: RawPQConnection(url: run.url), store: run.store, pageSize: options.pullPageSize)
    let box = CountBox()
    return PreparedRun(
      operations: size,
      body: { box.count = try await puller.pull() },
      finish: { "pulled=\(box.count) " + (try run.finish()) },
      externalCPUSeconds: try run.backendCPU())
  }
}

final class CountBox {
  var count = 0
}

/// Replication's state keys and values in the environment, as `Docs/OnDiskFormat.md` gives them
/// (and `Replicator` writes them).
enum RawReplicationState {
  static let pushedKey = Array("replication.pushed".utf8)
  static let cursorKey = Array("replication.cursor".utf8)
  static let pulledPrefix = Array("replication.pulled.".utf8)
  static let unstorablePrefix = Array("replication.unstorable.".utf8)

  static func key(_ prefix: [UInt8], _ number: UInt64) -> [UInt8] {
    prefix + withUnsafeBytes(of: number.bigEndian, Array.init)
  }

  static func encode(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

  static func decode(_ bytes: [UInt8]?) -> UInt64 {
    guard let bytes, bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
  }
}

/// `replicate.push` by hand.
final class RawPusher {
  let connection: RawPQConnection
  let store: EventStore
  let batchSize: Int
  private var prepared: Set<Int> = []

  init(connection: RawPQConnection, store: EventStore, batchSize: Int) throws {
    self.connection = connection
    self.store = store
    self.batchSize = batchSize
  }

  private static let columns =
    "position, id, origin_device, origin_sequence, stream, type, schema_version, payload, metadata, recorded_at"
  private static let types: [UInt32] = {
    typealias OID = BinaryParameters.OID
    return [
      OID.int8, OID.uuid, OID.uuid, OID.int8, OID.text, OID.text, OID.int4, OID.bytea, OID.jsonb,
      OID.timestamptz,
    ]
  }()

  /// The name of the prepared multi-row `INSERT` of `rows` events, prepared on first use.
  private func insert(rows: Int) throws -> String {
    let name = "insert\(rows)"
    guard !prepared.contains(rows) else { return name }
    let width = Self.types.count
    let values = (0..<rows).map { row in
      "(" + (1...width).map { "$\(row * width + $0)" }.joined(separator: ",") + ")"
    }
    try connection.prepare(
      name, "INSERT INTO eventlog.events (\(Self.columns)) VALUES " + values.joined(separator: ","),
      types: Array(repeating: Self.types, count: rows).flatMap { $0 })
    prepared.insert(rows)
    return name
  }

  /// Pushes the outbox; returns the events stored.
  func push() async throws -> Int {
    guard let device = store.deviceID else {
      throw RawPQConnection.Failure(description: "the local log has no device ID")
    }
    typealias OID = BinaryParameters.OID
    try connection.prepare(
      "mark", "SELECT pushed_through FROM eventlog.devices WHERE owner = current_user::text AND device = $1",
      types: [OID.uuid])
    try connection.prepare(
      "head", "SELECT coalesce(max(position), 0) FROM eventlog.events WHERE owner = current_user::text",
      types: [])
    try connection.prepare(
      "upsert",
      """
      INSERT INTO eventlog.devices AS d (device, pushed_through) VALUES ($1, $2)
      ON CONFLICT (owner, device) DO UPDATE
      SET pushed_through = greatest(d.pushed_through, excluded.pushed_through), last_push_at = now()
      """, types: [OID.uuid, OID.int8])
    var parameters = BinaryParameters(capacity: batchSize * 400)
    // The marks, as `Replicator` reads them: the local one, and the server's after a crash.
    var mark = RawReplicationState.decode(try store.stateValue(forKey: RawReplicationState.pushedKey))
    parameters.uuid(device)
    let marks = try connection.run("mark", parameters)
    let serverMark = marks.rows > 0 ? UInt64(clamping: try marks.integer(0, 0)) : 0
    marks.clear()
    let head = try store.head()
    if serverMark > mark && serverMark <= head { mark = serverMark }
    parameters.removeAll()
    let heads = try connection.run("head", parameters)
    var position = try heads.integer(0, 0)
    heads.clear()

    var stored = 0
    var through = mark
    while true {
      let events = try store.events(from: through + 1, limit: batchSize)
      guard let last = events.last else { break }
      let pulled = try pulledSequences(from: through + 1, through: last.sequence)
      let batch = events.filter {
        RestaurantBookingSchema.isReplicated($0.stream) && !pulled.contains($0.sequence)
      }
      through = last.sequence
      if !batch.isEmpty {
        parameters.removeAll()
        for event in batch {
          position += 1
          parameters.int8(position)
          parameters.uuid(event.id)
          parameters.uuid(device)
          parameters.int8(Int64(event.sequence))
          parameters.text(event.stream.rawValue)
          parameters.text(event.type)
          parameters.int4(Int32(event.schemaVersion))
          parameters.bytea(event.payload)
          parameters.jsonb(Self.json(event.metadata))
          parameters.timestamptz(microsecondsSince1970: event.recordedAt.microsecondsSince1970)
        }
        let name = try insert(rows: batch.count)
        try connection.execute("BEGIN")
        let inserted = try connection.run(name, parameters)
        stored += inserted.affectedRows
        inserted.clear()
        parameters.removeAll()
        parameters.uuid(device)
        parameters.int8(Int64(through))
        try connection.run("upsert", parameters).clear()
        try connection.execute("COMMIT")
      }
      try await store.updateState([.put(RawReplicationState.pushedKey, RawReplicationState.encode(through))])
    }
    return stored
  }

  /// The sequences in `first...last` of events a pull brought (none in the fixture; read all the same).
  private func pulledSequences(from first: UInt64, through last: UInt64) throws -> Set<UInt64> {
    let prefix = RawReplicationState.pulledPrefix
    var sequences = Set<UInt64>()
    for entry in try store.stateEntries(
      withPrefix: prefix, from: RawReplicationState.key(prefix, first), limit: Int(clamping: last - first + 1)
    ) {
      guard entry.key.count == prefix.count + 8 else { break }
      let sequence = entry.key[prefix.count...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      guard sequence <= last else { break }
      sequences.insert(sequence)
    }
    return sequences
  }

  /// The metadata as the JSON object `eventlog.push` stores (`jsonb` normalises its spelling).
  static func json(_ metadata: EventMetadata) -> String {
    var text = #"{"origin":"# + quoted(metadata.origin)
    if let id = metadata.correlationID { text += #","correlationID":""# + id.uuidString.lowercased() + #"""# }
    if let id = metadata.causationID { text += #","causationID":""# + id.uuidString.lowercased() + #"""# }
    return text + "}"
  }

  static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}

/// `replicate.pull` by hand.
final class RawPuller {
  let connection: RawPQConnection
  let store: EventStore
  let pageSize: Int

  init(connection: RawPQConnection, store: EventStore, pageSize: Int) throws {
    self.connection = connection
    self.store = store
    self.pageSize = pageSize
  }

  /// Where a pulled event came from, as the pull records it.
  private struct Origin: Sendable {
    var position: UInt64
    var device: UUID
    var sequence: UInt64
    var id: UUID
  }

  /// Pulls every page; returns the events stored.
  func pull() async throws -> Int {
    typealias OID = BinaryParameters.OID
    try connection.prepare(
      "page",
      """
      SELECT position, id, origin_device, origin_sequence, stream, type, schema_version, payload,
        metadata->>'correlationID', metadata->>'causationID', metadata->>'origin', recorded_at
      FROM eventlog.events
      WHERE owner = current_user::text AND position > $1 AND position <= $1 + $2
      ORDER BY position
      """, types: [OID.int8, OID.int8])
    var cursor = RawReplicationState.decode(try store.stateValue(forKey: RawReplicationState.cursorKey))
    var parameters = BinaryParameters(capacity: 16)
    var stored = 0
    while true {
      parameters.removeAll()
      parameters.int8(Int64(cursor))
      parameters.int8(Int64(pageSize))
      let page = try connection.run("page", parameters)
      var events: [IngestedEvent] = []
      var origins: [Origin] = []
      do {
        defer { page.clear() }
        events.reserveCapacity(page.rows)
        origins.reserveCapacity(page.rows)
        for row in 0..<page.rows {
          guard let schemaVersion = UInt16(exactly: try page.integer(row, 6)),
            let stream = page.text(row, 4), let type = page.text(row, 5)
          else { throw RawPQConnection.Failure(description: "row \(row + 1) of a page is not an event") }
          let payload = page.bytes(row, 7)
          let metadata = EventMetadata(
            correlationID: page.text(row, 8).flatMap(UUID.init(uuidString:)),
            causationID: page.text(row, 9).flatMap(UUID.init(uuidString:)), origin: page.text(row, 10) ?? "")
          let id = try page.uuid(row, 1)
          events.append(
            IngestedEvent(
              stream: StreamID(stream),
              event: NewEvent(
                id: id, type: type, schemaVersion: schemaVersion, payload: Array(payload), metadata: metadata,
                recordedAt: Date(
                  microsecondsSince1970: try page.integer(row, 11)
                    + BinaryParameters.postgresEpochMicroseconds))))
          origins.append(
            Origin(
              position: UInt64(clamping: try page.integer(row, 0)), device: try page.uuid(row, 2),
              sequence: UInt64(clamping: try page.integer(row, 3)), id: id))
        }
      }
      guard let last = origins.last else { break }
      let outcomes = try await store.ingest(events) { [origins] outcomes in
        var changes: [StateChange] = [
          .put(RawReplicationState.cursorKey, RawReplicationState.encode(last.position))
        ]
        for (origin, outcome) in zip(origins, outcomes) {
          switch outcome {
          case .stored(let sequence), .skipped(let sequence, _, _):
            var value = RawReplicationState.encode(origin.position)
            withUnsafeBytes(of: origin.device.uuid) { value.append(contentsOf: $0) }
            value += RawReplicationState.encode(origin.sequence)
            changes.append(.put(RawReplicationState.key(RawReplicationState.pulledPrefix, sequence), value))
          case .refused(let reason):
            var value = withUnsafeBytes(of: origin.id.uuid, Array.init)
            value += Array(reason.utf8.prefix(2_000))
            changes.append(
              .put(RawReplicationState.key(RawReplicationState.unstorablePrefix, origin.position), value))
          case .alreadyPresent:
            break
          }
        }
        return changes
      }
      // As `Replicator` counts `pulled`: stored, and stored but skipped by the projections.
      stored += outcomes.count {
        switch $0 {
        case .stored, .skipped: true
        case .alreadyPresent, .refused: false
        }
      }
      cursor = last.position
      if origins.count < pageSize { break }
    }
    return stored
  }
}
