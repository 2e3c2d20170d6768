import EventLog
import Foundation
import Replication
import ReplicationPostgres
import RestaurantBooking

/// `libpq-raw`: hand-written libpq (``RawPQConnection``: prepared statements, binary parameters
/// and results) doing the rows of the replicate workloads, with the same local work as
/// `eventlog`'s `Replicator`, so that the comparison is about the transport: the same JSON rows
/// (payloads converted by the same ``PayloadConversion``: the store's event types and recorded
/// layouts), the same
/// device mark, the same local state.
///
/// Under server schema version 3 a client role has no table privilege, so the baseline connects
/// as the **database's owner** (who owns the tables) and writes and reads the customer's rows by
/// naming its owner key (``ReplicationDatabase/ownerKey``). It so bypasses everything the
/// functions check: the owner's derivation from the session, the bounds of every column, the
/// replicated streams, the lookup of IDs already stored (idempotency), the outcome per event, the
/// notification, and on a pull the check of the event at the cursor and the page's byte budget.
/// A device could never do this; it is the floor of what the same rows cost through libpq.
///
/// - Push: reads the server's mark of the device under its key, trusts it as `Replicator` does,
///   then reads the outbox from the same local log (`EventStore.events(from:limit:)`, replicated
///   streams, not pulled) in batches of ``ReplicationOptions/pushBatchSize`` (500); each batch's
///   payloads are converted to JSON, then one server transaction: the owner's row locked (the
///   owner's turn, as `eventlog.push_events` takes it) with its last position, one multi-row
///   `INSERT` of `jsonb` payloads (each with the length of its text, which the table holds from
///   server schema version 4, as `push` measures it) and metadata at the positions after it, with
///   each event's origin and pushing device and its value in the server's chain (server schema
///   version 5: computed in the `INSERT` by the same aggregate and encoding as `push`'s, from the
///   value at the position before), the upsert of the device's mark in `eventlog.device_marks`
///   (keyed by the SHA-256 of the device's key, naming the batch's last event) and the device's
///   chain value at the mark in `eventlog.attested_heads`; then locally, in one durable commit,
///   the pushed mark, an acknowledgement and the server position per stored event, as `Replicator`
///   writes them. Before the events, the data subjects' keys the server has not answered for go
///   through `eventlog_api.push_keys` on a second connection, as the customer (the keys' table is
///   under forced row-level security, out of the tables' owner's reach), with a note per key;
///   each row carries its event's data subjects.
/// - Pull: `SELECT`s pages of ``ReplicationOptions/pullPageSize`` (1000) of the owner's events
///   after the cursor, converts each `jsonb` payload back to its binary form, and stores the page
///   with `EventStore.ingest` with the same state changes as `Replicator` (the cursor with the
///   event ID at it, the server's chain value there, where each event came from and its server
///   position, a note for each event it cannot store) in one durable local transaction. It fetches and stores in turn (`Replicator` fetches the next page
///   while it stores one). Each event carries its data subjects; after the events, the keys come
///   through `eventlog_api.pull_keys` on the customer's connection, stored with the key cursor and
///   a note per key, as `Replicator` stores them.
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
      let connection = try RawPQConnection(url: run.ownerURL)
      let keys = try RawPQConnection(url: run.url)
      let pusher = RawPusher(
        connection: connection, keyConnection: keys, store: run.store, owner: run.database.ownerKey,
        batchSize: options.pushBatchSize)
      let box = CountBox()
      let backends = [connection.backendPID, keys.backendPID]
      return PreparedRun(
        operations: size,
        body: { box.count = try await pusher.push() },
        finish: { try run.finish(stored: box.count) },
        externalCPUSeconds: { ReplicationDatabase.cpuSeconds(of: backends) })
    }
    let run = try ReplicationFixture.PullRun(fixture: fixture, directory: directory)
    let connection = try RawPQConnection(url: run.ownerURL)
    let keys = try RawPQConnection(url: run.url)
    let puller = RawPuller(
      connection: connection, keyConnection: keys, store: run.store, owner: run.database.ownerKey,
      pageSize: options.pullPageSize)
    let box = CountBox()
    let backends = [connection.backendPID, keys.backendPID]
    return PreparedRun(
      operations: size,
      body: { box.count = try await puller.pull() },
      finish: { "pulled=\(box.count) " + (try run.finish()) },
      externalCPUSeconds: { ReplicationDatabase.cpuSeconds(of: backends) })
  }
}

final class CountBox {
  var count = 0
}

/// Replication's state keys and values in the environment, as `Docs/OnDiskFormat.md` gives them
/// (and `Replicator` writes them).
enum RawReplicationState {
  static let deviceKeyKey = Array("replication.device-key".utf8)
  static let pushedKey = Array("replication.pushed".utf8)
  static let cursorKey = Array("replication.cursor".utf8)
  static let ackedPrefix = Array("replication.acked.".utf8)
  static let pulledPrefix = Array("replication.pulled.".utf8)
  static let unstorablePrefix = Array("replication.unstorable.".utf8)
  static let ownerKey = Array("replication.owner".utf8)
  static let positionPrefix = Array("replication.position.".utf8)
  static let atPrefix = Array("replication.at.".utf8)
  static let serverHeadKey = Array("replication.server-head".utf8)
  static let keySentPrefix = Array("replication.key-sent.".utf8)
  static let keyCursorKey = Array("replication.key-cursor".utf8)
  /// Keys per `push_keys` and `pull_keys` call, as `Replicator` sends and asks for them.
  static let keyBatchSize = 1_000

  /// The notes that the server answered for the keys of `subjects`.
  static func keysSent(_ subjects: [UUID]) -> [EventStore.StateChange] {
    subjects.map { .put(keySentPrefix + bytes(of: $0), []) }
  }

  /// The two entries that say the local event `sequence` is at server `position`.
  static func located(_ sequence: UInt64, at position: UInt64) -> [EventStore.StateChange] {
    [.put(key(positionPrefix, sequence), encode(position)), .put(key(atPrefix, position), encode(sequence))]
  }

  /// Checks that `store` replicates as `owner` and records it at the first contact, as
  /// `Replicator` does before a push or a pull (which learns the owner from `server_info`; this
  /// baseline names it).
  static func admit(_ owner: String, in store: EventStore) async throws {
    if let recorded = try store.stateValue(forKey: ownerKey) {
      guard recorded == Array(owner.utf8) else {
        throw RawPQConnection.Failure(description: "the local log replicates as another owner")
      }
      return
    }
    try await store.updateState([.put(ownerKey, Array(owner.utf8))])
  }

  static func key(_ prefix: [UInt8], _ number: UInt64) -> [UInt8] {
    prefix + withUnsafeBytes(of: number.bigEndian, Array.init)
  }

  static func encode(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

  static func decode(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    guard bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
  }

  static func bytes(of id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid, Array.init) }

  /// An ID and a reason, as an unstorable event's entry holds them.
  static func note(_ id: UUID, _ reason: String) -> [UInt8] {
    bytes(of: id) + Array(reason.utf8.prefix(2_000))
  }
}

/// `replicate.push` by hand.
final class RawPusher {
  let connection: RawPQConnection
  /// The customer's connection, for the keys: `eventlog.subject_keys` is under forced row-level
  /// security, so even the tables' owner reaches it only through `eventlog_api.push_keys`.
  let keyConnection: RawPQConnection
  let store: EventStore
  /// The customer's owner key, written into every row.
  let owner: String
  let batchSize: Int
  /// The replicated streams: the store's schema's, as `Replicator` takes them.
  private let replicated: AppSchema.StreamSelection
  private var prepared: Set<Int> = []

  init(
    connection: RawPQConnection, keyConnection: RawPQConnection, store: EventStore, owner: String,
    batchSize: Int
  ) {
    self.connection = connection
    self.keyConnection = keyConnection
    self.store = store
    self.owner = owner
    self.batchSize = batchSize
    replicated = store.appSchema.replicatedStreams
  }

  private static let columns =
    "owner, position, id, origin_device, origin_sequence, pushed_by, pushed_sequence, stream, type, "
    + "schema_version, payload, metadata, recorded_at, subjects"
  /// The types of one row's parameters (the owner, `$1`, is shared by every row).
  private static let rowTypes: [UInt32] = {
    typealias OID = BinaryParameters.OID
    return [
      OID.int8, OID.uuid, OID.uuid, OID.int8, OID.uuid, OID.int8, OID.text, OID.text, OID.int4, OID.jsonb,
      OID.jsonb, OID.timestamptz, OID.text,
    ]
  }()

  /// The name of the prepared multi-row `INSERT` of `rows` events, prepared on first use: each
  /// payload's and metadata's text rendered once, for the length pulls budget by and for the
  /// server's chain, which runs on from the row before the first (`$2` is its position) in
  /// position order, as `push` computes it (server schema version 5).
  private func insert(rows: Int) throws -> String {
    let name = "insert\(rows)"
    guard !prepared.contains(rows) else { return name }
    let width = Self.rowTypes.count
    let values = (0..<rows).map { row in
      "($1," + (1...width).map { "$\(1 + row * width + $0)" }.joined(separator: ",") + ")"
    }
    let encoding = ServerSchema.storedRowEncoding(
      "x", pushedBy: "x.pushed_by", pushedSequence: "x.pushed_sequence", metadataText: "x.metadata_text",
      payloadText: "x.payload_text")
    try connection.prepare(
      name,
      """
      INSERT INTO eventlog.events (\(Self.columns), payload_text_bytes, chain)
      SELECT x.owner, x.position, x.id, x.origin_device, x.origin_sequence, x.pushed_by, x.pushed_sequence,
        x.stream, x.type, x.schema_version, x.payload, x.metadata, x.recorded_at, x.subjects::uuid[],
        pg_catalog.octet_length(x.payload_text),
        eventlog.chain(coalesce((SELECT e.chain FROM eventlog.events e WHERE e.owner = $1 AND e.position = $2 - 1),
          \(ServerSchema.genesis)), \(encoding))
          OVER (ORDER BY x.position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
      FROM (
        SELECT v.*, v.payload::text AS payload_text, v.metadata::text AS metadata_text
        FROM (VALUES \(values.joined(separator: ","))) v(\(Self.columns))
      ) x
      """,
      types: [BinaryParameters.OID.text] + Array(repeating: Self.rowTypes, count: rows).flatMap { $0 })
    prepared.insert(rows)
    return name
  }

  /// This device's secret key, as `Replicator` keeps it: made and stored on first use.
  private func deviceKey() async throws -> String {
    if let key = try store.stateValue(forKey: RawReplicationState.deviceKeyKey), key.count == 64 {
      return String(decoding: key, as: UTF8.self)
    }
    var generator = SystemRandomNumberGenerator()
    let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
      .joined()
    try await store.updateState([.put(RawReplicationState.deviceKeyKey, Array(key.utf8))])
    return key
  }

  /// Pushes the outbox; returns the events stored.
  func push() async throws -> Int {
    guard let device = store.deviceID else {
      throw RawPQConnection.Failure(description: "the local log has no device ID")
    }
    try await RawReplicationState.admit(owner, in: store)
    let key = try await deviceKey()
    // The payloads' JSON form: the store's event types and recorded layouts, as `Replicator`
    // reads them at the start of a push.
    let conversion = try PayloadConversion(store: store)
    typealias OID = BinaryParameters.OID
    try connection.prepare(
      "mark",
      """
      SELECT pushed_through, last_sequence, last_id FROM eventlog.device_marks
      WHERE owner = $1 AND device = $2 AND key_hash = pg_catalog.sha256(pg_catalog.convert_to($3, 'UTF8'))
      """, types: [OID.text, OID.uuid, OID.text])
    try connection.prepare(
      "owner", "INSERT INTO eventlog.owners (owner) VALUES ($1) ON CONFLICT (owner) DO NOTHING",
      types: [OID.text])
    try connection.prepare(
      "turn",
      """
      SELECT (SELECT coalesce(max(e.position), 0) FROM eventlog.events e WHERE e.owner = o.owner)
      FROM eventlog.owners o WHERE o.owner = $1 FOR UPDATE
      """, types: [OID.text])
    try connection.prepare(
      "upsert",
      """
      INSERT INTO eventlog.device_marks AS d (owner, device, key_hash, pushed_through, last_sequence, last_id)
      VALUES ($1, $2, pg_catalog.sha256(pg_catalog.convert_to($3, 'UTF8')), $4, $5, $6)
      ON CONFLICT (owner, device, key_hash) DO UPDATE
      SET pushed_through = excluded.pushed_through, last_sequence = excluded.last_sequence,
        last_id = excluded.last_id, updated_at = pg_catalog.now()
      """, types: [OID.text, OID.uuid, OID.text, OID.int8, OID.int8, OID.uuid])
    // The device's chain value at the batch's mark, with the owner's last position and chain value.
    try connection.prepare(
      "attest",
      """
      INSERT INTO eventlog.attested_heads (owner, device, key_hash, sequence, head, server_position, server_head)
      SELECT $1, $2, pg_catalog.sha256(pg_catalog.convert_to($3, 'UTF8')), $4, $5, e.position, e.chain
      FROM eventlog.events e WHERE e.owner = $1 ORDER BY e.position DESC LIMIT 1
      ON CONFLICT (owner, device, key_hash, sequence, head) DO NOTHING
      """, types: [OID.text, OID.uuid, OID.text, OID.int8, OID.bytea])
    var parameters = BinaryParameters(capacity: batchSize * 500)

    // The marks, as `Replicator` reads them: the server's is trusted when this log holds, at the
    // sequence it names, the event it acknowledged; else the whole outbox goes (0).
    let localMark = RawReplicationState.decode(
      try store.stateValue(forKey: RawReplicationState.pushedKey)?[...] ?? [])
    parameters.text(owner)
    parameters.uuid(device)
    parameters.text(key)
    let marks = try connection.run("mark", parameters)
    var mark: UInt64 = 0
    if marks.rows > 0, !marks.isNull(0, 1), !marks.isNull(0, 2) {
      let through = UInt64(clamping: try marks.integer(0, 0))
      let sequence = UInt64(clamping: try marks.integer(0, 1))
      let id = try marks.uuid(0, 2)
      if sequence <= through, try store.event(at: sequence)?.id == id { mark = through }
    }
    marks.clear()
    if mark != localMark {
      var changes: [EventStore.StateChange] = [
        .put(RawReplicationState.pushedKey, RawReplicationState.encode(mark))
      ]
      if mark < localMark {
        for entry in try store.stateEntries(withPrefix: RawReplicationState.ackedPrefix) {
          changes.append(.delete(entry.key))
        }
      }
      try await store.updateState(changes)
    }
    parameters.removeAll()
    parameters.text(owner)
    try connection.run("owner", parameters).clear()
    // The keys before the events, as `Replicator` sends them (server schema version 6).
    try await pushKeys(device: device)

    var stored = 0
    var through = mark
    var payloads: [[UInt8]] = []
    var metadata: [UInt8] = []
    while true {
      let (batch, last) = try collect(after: through)
      guard !batch.isEmpty else {
        if last > through {
          try await store.updateState([.put(RawReplicationState.pushedKey, RawReplicationState.encode(last))])
        }
        break
      }
      through = last
      payloads.removeAll(keepingCapacity: true)
      for event in batch { payloads.append(conversion.outgoing(event)) }

      try connection.execute("BEGIN")
      parameters.removeAll()
      parameters.text(owner)
      let turn = try connection.run("turn", parameters)
      guard turn.rows == 1 else {
        turn.clear()
        throw RawPQConnection.Failure(description: "the owner's row is missing")
      }
      let head = try turn.integer(0, 0)
      turn.clear()
      parameters.removeAll()
      parameters.text(owner)
      for (index, event) in batch.enumerated() {
        parameters.int8(head + 1 + Int64(index))
        parameters.uuid(event.id)
        parameters.uuid(event.provenance?.device ?? device)
        parameters.int8(Int64(event.provenance?.sequence ?? event.sequence))
        parameters.uuid(device)
        parameters.int8(Int64(event.sequence))
        parameters.text(event.stream.rawValue)
        parameters.text(event.type)
        parameters.int4(Int32(event.schemaVersion))
        parameters.jsonb(payloads[index])
        Self.json(event.metadata, into: &metadata)
        parameters.jsonb(metadata)
        parameters.timestamptz(microsecondsSince1970: event.recordedAt.microsecondsSince1970)
        // The event's data subjects (server schema version 6), as an array literal.
        parameters.text("{" + event.subjects.map(\.uuidString).joined(separator: ",") + "}")
      }
      let inserted = try connection.run(try insert(rows: batch.count), parameters)
      stored += inserted.affectedRows
      inserted.clear()
      let lastEvent = batch[batch.count - 1]
      parameters.removeAll()
      parameters.text(owner)
      parameters.uuid(device)
      parameters.text(key)
      parameters.int8(Int64(through))
      parameters.int8(Int64(lastEvent.sequence))
      parameters.uuid(lastEvent.id)
      try connection.run("upsert", parameters).clear()
      if let chain = try store.event(at: through)?.chain {
        parameters.removeAll()
        parameters.text(owner)
        parameters.uuid(device)
        parameters.text(key)
        parameters.int8(Int64(through))
        parameters.bytea(chain.bytes)
        try connection.run("attest", parameters).clear()
      }
      try connection.execute("COMMIT")

      // As `Replicator` records a batch: an acknowledgement and the server position per stored
      // event, and the mark.
      var changes: [EventStore.StateChange] = []
      changes.reserveCapacity(3 * batch.count + 1)
      for (index, event) in batch.enumerated() {
        let position = UInt64(head + 1 + Int64(index))
        changes.append(
          .put(
            RawReplicationState.key(RawReplicationState.ackedPrefix, position),
            RawReplicationState.bytes(of: event.id)))
        changes += RawReplicationState.located(event.sequence, at: position)
      }
      changes.append(.put(RawReplicationState.pushedKey, RawReplicationState.encode(through)))
      try await store.updateState(changes)
    }
    return stored
  }

  /// Sends the keys the server has not answered for, as `Replicator` does: `eventlog_api.push_keys`
  /// on the customer's connection, a batch at a time, then a note per key answered.
  private func pushKeys(device: UUID) async throws {
    let prefix = RawReplicationState.keySentPrefix
    let sent = Set(try store.stateEntries(withPrefix: prefix).map { Array($0.key.dropFirst(prefix.count)) })
    let waiting = try store.subjectKeys().filter { !sent.contains(RawReplicationState.bytes(of: $0.subject)) }
    guard !waiting.isEmpty else { return }
    try keyConnection.prepare(
      "push_keys", "SELECT subject, outcome FROM eventlog_api.push_keys($1, $2)",
      types: [BinaryParameters.OID.uuid, BinaryParameters.OID.jsonb])
    var parameters = BinaryParameters(capacity: 128 * RawReplicationState.keyBatchSize)
    for start in stride(from: 0, to: waiting.count, by: RawReplicationState.keyBatchSize) {
      let batch = waiting[start..<min(start + RawReplicationState.keyBatchSize, waiting.count)]
      parameters.removeAll()
      parameters.uuid(device)
      parameters.jsonb(
        ReplicationWire.keys(
          batch.map { SubjectKey(subject: $0.subject, key: $0.key, createdAt: $0.createdAt) }))
      let answered = try keyConnection.run("push_keys", parameters)
      let rows = answered.rows
      answered.clear()
      guard rows == batch.count else {
        throw RawPQConnection.Failure(description: "push_keys answered \(rows) rows for \(batch.count) keys")
      }
      try await store.updateState(RawReplicationState.keysSent(batch.map(\.subject)))
    }
  }

  /// The outbox events after `mark`, up to a batch, and the last local sequence looked at (as
  /// `Replicator` collects a batch).
  private func collect(after mark: UInt64) throws -> ([RecordedEvent], UInt64) {
    var batch: [RecordedEvent] = []
    var through = mark
    while batch.count < batchSize {
      let chunk = batchSize - batch.count
      let events = try store.events(from: through + 1, limit: chunk)
      guard let last = events.last else { break }
      let pulled = try pulledSequences(from: through + 1, through: last.sequence)
      for event in events {
        if replicated.contains(event.stream) && !pulled.contains(event.sequence) {
          batch.append(event)
        }
        through = event.sequence
      }
      if events.count < chunk { break }
    }
    return (batch, through)
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

  /// The metadata as the JSON object a push stores (`ReplicationWire`'s form), into `out`.
  static func json(_ metadata: EventMetadata, into out: inout [UInt8]) {
    out.removeAll(keepingCapacity: true)
    out.append(contentsOf: #"{"origin":"#.utf8)
    JSONWriter.appendQuoted(metadata.origin, to: &out)
    if let id = metadata.correlationID {
      out.append(contentsOf: #","correlationID":""#.utf8)
      id.appendLowercased(to: &out)
      out.append(UInt8(ascii: "\""))
    }
    if let id = metadata.causationID {
      out.append(contentsOf: #","causationID":""#.utf8)
      id.appendLowercased(to: &out)
      out.append(UInt8(ascii: "\""))
    }
    out.append(UInt8(ascii: "}"))
  }
}

/// `replicate.pull` by hand.
final class RawPuller {
  let connection: RawPQConnection
  /// As ``RawPusher``'s: the customer's, for `eventlog_api.pull_keys`.
  let keyConnection: RawPQConnection
  let store: EventStore
  /// The customer's owner key, whose rows it reads.
  let owner: String
  let pageSize: Int
  /// As ``RawPusher``'s.
  private let replicated: AppSchema.StreamSelection

  init(
    connection: RawPQConnection, keyConnection: RawPQConnection, store: EventStore, owner: String,
    pageSize: Int
  ) {
    self.connection = connection
    self.keyConnection = keyConnection
    self.store = store
    self.owner = owner
    self.pageSize = pageSize
    replicated = store.appSchema.replicatedStreams
  }

  /// Pulls every page; returns the events stored.
  func pull() async throws -> Int {
    try await RawReplicationState.admit(owner, in: store)
    // As `Replicator` reads it at the start of a pull.
    let conversion = try PayloadConversion(store: store)
    typealias OID = BinaryParameters.OID
    try connection.prepare(
      "page",
      """
      SELECT position, id, origin_device, origin_sequence, stream, type, schema_version, payload,
        metadata->>'correlationID', metadata->>'causationID', metadata->>'origin', recorded_at, chain,
        pg_catalog.array_to_string(subjects, ',')
      FROM eventlog.events
      WHERE owner = $1 AND position > $2 AND position <= $2 + $3
      ORDER BY position
      """, types: [OID.text, OID.int8, OID.int8])
    // The cursor as `Replicator` stores it: the position, then the ID of the event there.
    var cursor = RawReplicationState.decode(
      try store.stateValue(forKey: RawReplicationState.cursorKey)?.prefix(8) ?? [])
    var parameters = BinaryParameters(capacity: 64)
    var stored = 0
    while true {
      parameters.removeAll()
      parameters.text(owner)
      parameters.int8(Int64(cursor))
      parameters.int8(Int64(pageSize))
      let page = try connection.run("page", parameters)
      let rows = page.rows
      var events: [EventStore.IngestedEvent] = []
      var sources: [ServerEvent] = []
      var notes: [EventStore.StateChange] = []
      var last: (position: UInt64, id: UUID, chain: [UInt8])?
      do {
        defer { page.clear() }
        events.reserveCapacity(rows)
        sources.reserveCapacity(rows)
        for row in 0..<rows {
          guard let schemaVersion = UInt16(exactly: try page.integer(row, 6)),
            let stream = page.text(row, 4), let type = page.text(row, 5)
          else { throw RawPQConnection.Failure(description: "row \(row + 1) of a page is not an event") }
          let event = ServerEvent(
            position: UInt64(clamping: try page.integer(row, 0)), id: try page.uuid(row, 1),
            originDevice: try page.uuid(row, 2), originSequence: UInt64(clamping: try page.integer(row, 3)),
            stream: StreamID(stream), type: type, schemaVersion: schemaVersion,
            payload: Array(try page.jsonb(row, 7)),
            metadata: EventMetadata(
              correlationID: page.text(row, 8).flatMap(UUID.init(uuidString:)),
              causationID: page.text(row, 9).flatMap(UUID.init(uuidString:)), origin: page.text(row, 10) ?? ""
            ),
            recordedAt: Date(
              microsecondsSince1970: try page.integer(row, 11) + BinaryParameters.postgresEpochMicroseconds),
            subjects: try (page.text(row, 13) ?? "").split(separator: ",").map { text in
              guard let subject = UUID(uuidString: String(text)) else {
                throw RawPQConnection.Failure(
                  description: "row \(row + 1) of a page names a malformed subject")
              }
              return subject
            })
          last = (event.position, event.id, Array(page.bytes(row, 12)))
          // As `Replicator` stores a page: an event it cannot store is noted and passed.
          let unstorable: String
          if !replicated.contains(event.stream) {
            unstorable = "the stream '\(event.stream)' is not replicated by this app"
          } else {
            switch conversion.incoming(event) {
            case .event(let stored):
              events.append(EventStore.IngestedEvent(stream: event.stream, event: stored))
              sources.append(event)
              continue
            case .unconvertible(let reason):
              unstorable = reason
            }
          }
          notes.append(
            .put(
              RawReplicationState.key(RawReplicationState.unstorablePrefix, event.position),
              RawReplicationState.note(event.id, unstorable)))
        }
      }
      guard let last else { break }
      let cursorValue = RawReplicationState.encode(last.position) + RawReplicationState.bytes(of: last.id)
      // The server's chain value at the cursor, as `Replicator` records it with the cursor.
      let headValue = RawReplicationState.encode(last.position) + last.chain
      let outcomes = try await store.ingest(events) { [notes, sources] outcomes in
        var changes = notes
        changes.append(.put(RawReplicationState.cursorKey, cursorValue))
        changes.append(.put(RawReplicationState.serverHeadKey, headValue))
        for (event, outcome) in zip(sources, outcomes) {
          switch outcome {
          case .stored(let sequence), .skipped(let sequence, _, _):
            var value = RawReplicationState.encode(event.position)
            value += RawReplicationState.bytes(of: event.originDevice)
            value += RawReplicationState.encode(event.originSequence)
            changes.append(.put(RawReplicationState.key(RawReplicationState.pulledPrefix, sequence), value))
            changes += RawReplicationState.located(sequence, at: event.position)
          case .refused(let reason):
            changes.append(
              .put(
                RawReplicationState.key(RawReplicationState.unstorablePrefix, event.position),
                RawReplicationState.note(event.id, reason)))
          case .alreadyPresent(let sequence):
            changes += RawReplicationState.located(sequence, at: event.position)
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
      if rows < pageSize { break }
    }
    // The keys after the events, as `Replicator` pulls them (server schema version 6).
    try await pullKeys()
    return stored
  }

  /// Brings the keys stored after the last pulled, as `Replicator` does: `eventlog_api.pull_keys`
  /// on the customer's connection, stored with the key cursor and a note per key.
  private func pullKeys() async throws {
    try keyConnection.prepare(
      "pull_keys", "SELECT serial, subject, key, created_at_us FROM eventlog_api.pull_keys($1, $2)",
      types: [BinaryParameters.OID.int8, BinaryParameters.OID.int4])
    var serial = RawReplicationState.decode(
      try store.stateValue(forKey: RawReplicationState.keyCursorKey)?[...] ?? [])
    var parameters = BinaryParameters(capacity: 32)
    while true {
      parameters.removeAll()
      parameters.int8(Int64(serial))
      parameters.int4(Int32(RawReplicationState.keyBatchSize))
      let page = try keyConnection.run("pull_keys", parameters)
      var keys: [ServerSubjectKey] = []
      do {
        defer { page.clear() }
        for row in 0..<page.rows {
          keys.append(
            try ReplicationWire.serverKey(
              serial: String(try page.integer(row, 0)), subject: try page.uuid(row, 1).uuidString,
              key: page.text(row, 2), createdAtMicroseconds: String(try page.integer(row, 3)),
              server: "libpq-raw"))
        }
      }
      guard let last = keys.last else { break }
      _ = try await store.storeSubjectKeys(
        keys.map { SubjectKey(subject: $0.key.subject, key: $0.key.key, createdAt: $0.key.createdAt) })
      serial = last.serial
      try await store.updateState(
        [.put(RawReplicationState.keyCursorKey, RawReplicationState.encode(serial))]
          + RawReplicationState.keysSent(keys.map(\.key.subject)))
      if keys.count < RawReplicationState.keyBatchSize { break }
    }
  }
}
