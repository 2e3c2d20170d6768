import Foundation
import LMDB

/// One write transaction of the writer: catches up projections that are behind, appends any
/// number of requests (each validated before it writes anything) and writes the checkpoints.
///
/// The store's own projections are applied to every event, so their checkpoints follow the head
/// (``Schema/Checkpoint/followsHead``) and are written only when that changes, not at every
/// commit. Checkpoints of projections this store does not apply (registered by another process)
/// are pinned to the head before the first event is written.
struct WriteBatch {
  let store: EventStore
  let txn: WriteTransaction
  private(set) var head: UInt64
  private var targets: [ProjectionEngine.Target] = []
  private var storedCheckpoints: [Schema.Checkpoint?] = []
  /// Checkpoints that follow the head, of projections this store does not apply; pinned to the
  /// head before this batch appends.
  private var foreignFollowing: [(name: [UInt8], version: UInt32)] = []
  /// The wall clock when the batch began, in microseconds since 1970.
  let wallClock: Int64
  /// The hybrid logical clock: the largest recorded-at the log has seen, in microseconds. An
  /// appended event is recorded at `max(wallClock, clock + 1)`; an ingested one keeps its time;
  /// either raises the clock to its time.
  private(set) var clock: Int64
  /// The recorded-at of the head's record (0 in an empty log), which the next batch reads.
  private var headRecordedAt: Int64
  /// The chain value of the head's record (``ChainValue/zero`` in an empty log), which the
  /// next record's value is computed after.
  private var headChain: ChainValue
  /// The clock as `meta` stores it (``Schema/clockKey``), or `nil` when it has none yet.
  private var storedClock: Int64?
  /// Records each payload type's layout (format 4, ``LayoutRecorder``).
  private var layouts = LayoutRecorder()
  /// The events of each type this batch wrote, added to `type_counts` by ``finish()``.
  private var typeCountDeltas: [String: UInt64] = [:]

  init(store: EventStore, transaction txn: WriteTransaction) throws {
    self.store = store
    self.txn = txn
    wallClock = RecordCodec.microseconds(store.options.wallClock())
    (head, headRecordedAt, headChain) = try Self.headRecord(in: txn, schema: store.schema)
    storedClock = try Self.storedClock(in: txn, schema: store.schema)
    // An environment that has no stored clock yet (new, or written by a build before the clock):
    // the largest recorded-at of its log, found once; `finish` stores it.
    if let storedClock {
      clock = max(storedClock, headRecordedAt)
    } else {
      clock = try Self.largestRecordedAt(in: txn, schema: store.schema)
    }
    // One pass over the (few) stored checkpoints: this store's own, and those of projections it
    // does not apply that follow the head.
    storedCheckpoints = Array(repeating: nil, count: store.projections.count)
    try txn.withCursor(in: store.schema.checkpoints) { cursor in
      var found = try cursor.move(.first)
      while found {
        let name = cursor.key
        let checkpoint = Schema.decodeCheckpoint(cursor.value)
        if let index = store.projections.firstIndex(where: { $0.name.utf8.elementsEqual(name) }) {
          storedCheckpoints[index] = checkpoint
        } else if let checkpoint, checkpoint.isFollowingHead {
          foreignFollowing.append((Array(name), checkpoint.version))
        }
        found = try cursor.move(.next)
      }
    }
    let log =
      store.projections.isEmpty
      ? nil : LogReader(.transaction(txn), schema: store.schema, payloads: store.payloadForms)
    for (projection, checkpoint) in zip(store.projections, storedCheckpoints) {
      let databases = store.projectionDatabases[projection.name] ?? [:]
      let state = ProjectionWriter(projection: projection.name, backend: .lmdb(txn, databases), log: log)
      let target = ProjectionEngine.Target(projection: projection, state: state)
      if let checkpoint, checkpoint.version == projection.version, checkpoint.isFollowingHead {
        // Up to date.
      } else if let checkpoint, checkpoint.version == projection.version, checkpoint.sequence <= head {
        try ProjectionEngine.fold(
          from: checkpoint.sequence + 1, through: head, in: txn, schema: store.schema,
          payloads: store.payloadForms, into: [target])
      } else {
        // New, of another version, or past the head (a damaged or rolled-back environment): rebuild.
        let (memoryTarget, tables) = ProjectionEngine.memoryTarget(
          for: projection,
          log: log ?? LogReader(.transaction(txn), schema: store.schema, payloads: store.payloadForms))
        try ProjectionEngine.fold(
          from: 1, through: head, in: txn, schema: store.schema, payloads: store.payloadForms,
          into: [memoryTarget])
        try ProjectionEngine.write(tables, to: databases, in: txn)
      }
      targets.append(target)
    }
  }

  /// Pins the checkpoints of projections this store does not apply, and that follow the head,
  /// to the head: the events about to be appended are not applied to them.
  private mutating func pinForeignCheckpoints() throws {
    for (name, version) in foreignFollowing {
      try Self.store(
        Schema.Checkpoint(version: version, sequence: head), ofProjection: name, in: txn, schema: store.schema
      )
    }
    foreignFollowing.removeAll()
  }

  static func head(in txn: Transaction, events: Database) throws -> UInt64 {
    try txn.withCursor(in: events) { cursor in
      try cursor.move(.last) ? cursor.key.loadUnaligned(as: UInt64.self) : 0
    }
  }

  /// The head, its record's recorded-at in microseconds (0 for an empty log) and its chain
  /// value (``ChainValue/zero`` for an empty log): read from the last record, which the head's
  /// lookup has in hand.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` when the head's record is
  ///   of record format 1, which carries no chain value: the open's upgrade rewrites every such
  ///   record before anything is appended, so only a build before format 5 writing beside this
  ///   one leaves one there.
  static func headRecord(in txn: Transaction, schema: Schema) throws -> (UInt64, Int64, ChainValue) {
    try txn.withCursor(in: schema.events) { cursor in
      guard try cursor.move(.last) else { return (0, 0, .zero) }
      let head = cursor.key.loadUnaligned(as: UInt64.self)
      guard let chain = RecordCodec.storedChain(of: cursor.value) else {
        throw EventStoreError.corruptedRecord(
          sequence: head,
          reason: "it is a record of format \(cursor.value.first ?? 0), which carries no chain value: "
            + "a build before environment format 5 appended it; stop older builds and open the environment again"
        )
      }
      return (head, RecordCodec.recordedAtMicroseconds(of: cursor.value) ?? 0, chain)
    }
  }

  /// The clock `meta` stores, or `nil`.
  static func storedClock(in txn: Transaction, schema: Schema) throws -> Int64? {
    try Schema.clockKey.withUnsafeBytes { key in
      try txn.withValue(forKey: key, in: schema.meta) { value -> Int64? in
        value.count == 8 ? Int64(littleEndian: value.loadUnaligned(as: Int64.self)) : nil
      }
    } ?? nil
  }

  /// The largest recorded-at of every record in the log (0 for an empty log): a scan, made once
  /// for an environment that has no stored clock.
  static func largestRecordedAt(in txn: Transaction, schema: Schema) throws -> Int64 {
    try txn.withCursor(in: schema.events) { cursor in
      var largest: Int64 = 0
      var found = try cursor.move(.first)
      while found {
        if let micros = RecordCodec.recordedAtMicroseconds(of: cursor.value), micros > largest {
          largest = micros
        }
        found = try cursor.move(.next)
      }
      return largest
    }
  }

  static func checkpoint(
    of projection: String, in txn: Transaction, schema: Schema
  ) throws -> Schema.Checkpoint? {
    let key = Array(projection.utf8)
    return try key.withUnsafeBytes { k in
      try txn.withValue(forKey: k, in: schema.checkpoints) { Schema.decodeCheckpoint($0) }
    } ?? nil
  }

  /// Stores `checkpoint` as the checkpoint of the projection whose UTF-8 name is `name`.
  static func store(
    _ checkpoint: Schema.Checkpoint, ofProjection name: [UInt8], in txn: WriteTransaction, schema: Schema
  ) throws {
    let value = Schema.encode(checkpoint)
    try name.withUnsafeBytes { k in
      try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: schema.checkpoints) }
    }
  }

  static func streamVersion(of stream: [UInt8], in txn: Transaction, schema: Schema) throws -> UInt64 {
    try txn.withCursor(in: schema.streamEvents) { cursor in
      let found = try stream.withUnsafeBytes { try cursor.seek($0, exact: true) }
      guard found, try cursor.move(.lastDuplicate) else { return 0 }
      return Schema.parseStreamEntry(cursor.value).version
    }
  }

  /// Appends one request atomically with respect to the others in the batch.
  ///
  /// Everything that can reject the request is checked before anything is written, so a rejected
  /// request leaves the transaction as it was.
  mutating func append(_ appends: [EventStore.StreamAppend]) throws -> EventStore.AppendResult {
    let schema = store.schema
    // 1. The request itself.
    var ids = Set<UUID>()
    var total = 0
    for append in appends {
      if let reason = append.stream.invalidReason {
        throw EventStoreError.invalidStream(append.stream, reason: reason)
      }
      for event in append.events {
        if let reason = RecordCodec.invalidReason(event) {
          throw EventStoreError.invalidEvent(id: event.id, reason: reason)
        }
        if event.payloadEncoding == .json {
          throw EventStoreError.invalidEvent(
            id: event.id, reason: "a JSON payload comes from elsewhere: ingest it, do not append it")
        }
        guard ids.insert(event.id).inserted else {
          throw EventStoreError.duplicateEventInAppend(id: event.id)
        }
        total += 1
      }
    }
    guard total > 0 else { throw EventStoreError.emptyAppend }

    // 2. Idempotency: an append whose events are all stored returns their positions.
    var existing: [UInt64] = []
    var firstStoredID: UUID?
    for append in appends {
      for event in append.events {
        let sequence = try withUnsafeBytes(of: event.id.uuid) { k in
          try txn.withValue(forKey: k, in: schema.eventIDs) { $0.loadUnaligned(as: UInt64.self) }
        }
        if let sequence {
          existing.append(UInt64(littleEndian: sequence))
          if firstStoredID == nil { firstStoredID = event.id }
        }
      }
    }
    if existing.count == total {
      return try storedResult(existing)
    }
    if let id = firstStoredID, let sequence = existing.first {
      throw EventStoreError.partiallyStoredAppend(id: id, sequence: sequence)
    }

    // 3. Expected versions, in order (a stream named twice sees its first part).
    var versions: [StreamID: UInt64] = [:]
    var startVersions: [UInt64] = []
    for append in appends {
      let current =
        try versions[append.stream]
        ?? Self.streamVersion(of: Array(append.stream.rawValue.utf8), in: txn, schema: schema)
      guard append.expectedVersion.isSatisfied(by: current) else {
        throw EventStoreError.wrongExpectedVersion(
          stream: append.stream, expected: append.expectedVersion, actual: current)
      }
      startVersions.append(current)
      versions[append.stream] = current + UInt64(append.events.count)
    }

    // The erasure fence: an erased subject's data is never recorded again.
    for append in appends {
      for index in append.events.indices where !append.events[index].pendingSeals.isEmpty {
        try checkSubjectsNotErased(append.events[index])
      }
    }

    // 4. Write events, stream index, ID index, projections.
    if !foreignFollowing.isEmpty { try pinForeignCheckpoints() }
    var positions: [EventStore.AppendResult.Position] = []
    positions.reserveCapacity(total)
    var idEntries: [(id: UUID, sequence: UInt64)] = []
    idEntries.reserveCapacity(total)
    for (append, startVersion) in zip(appends, startVersions) {
      let streamKey = Array(append.stream.rawValue.utf8)
      var version = startVersion
      for var event in append.events {
        version += 1
        if !event.pendingSeals.isEmpty { try seal(&event) }
        let recorded = try write(event, to: append.stream, streamKey: streamKey, version: version)
        idEntries.append((event.id, recorded.sequence))
        positions.append(
          EventStore.AppendResult.Position(
            id: event.id, stream: append.stream, version: version, sequence: recorded.sequence))
        if !targets.isEmpty { try ProjectionEngine.apply(recorded, to: targets) }
      }
    }
    try index(&idEntries)
    return EventStore.AppendResult(events: positions, alreadyStored: false)
  }

  /// Writes `event` at the next sequence number as version `version` of `stream` (its record and
  /// its stream index entry; not the ID index) and returns it as recorded.
  private mutating func write(
    _ event: NewEvent, to stream: StreamID, streamKey: [UInt8], version: UInt64,
    provenance: RecordedEvent.Provenance?? = .none
  ) throws -> RecordedEvent {
    let schema = store.schema
    head += 1
    let sequence = head
    // An event recorded elsewhere keeps its time; a new one is stamped after everything the log
    // has seen, even when the wall clock stepped back or another device's clock runs ahead.
    let micros =
      event.recordedAt.map(RecordCodec.microseconds) ?? max(wallClock, clock < .max ? clock + 1 : clock)
    // Every event the log holds is recorded at or before the clock, so a time at or past it sorts
    // last in the time index: appended (the common case), not searched for.
    let lastInTime = micros >= clock
    if micros > clock { clock = micros }
    headRecordedAt = micros
    // An appended event is this device's own; an ingested one says where it came from (or not).
    let origin: RecordedEvent.Provenance? =
      switch provenance {
      case .none: store.deviceID.map { RecordedEvent.Provenance(device: $0, sequence: sequence) }
      // A device of all zeros or a sequence of 0 (a hostile row) cannot be stored as known.
      case .some(let given):
        given.flatMap { $0.device == RecordCodec.unknownDevice || $0.sequence == 0 ? nil : $0 }
      }
    let fields = RecordCodec.Fields(
      sequence: sequence, version: version, recordedAtMicroseconds: micros, event: event, stream: stream,
      provenance: origin, subjects: event.subjects, previousChain: headChain)
    var chain = headChain
    try withUnsafeBytes(of: sequence) { key in
      try txn.put(
        reservingCount: RecordCodec.encodedSize(fields), forKey: key, in: schema.events, flags: .append
      ) {
        chain = RecordCodec.encode(fields, into: $0)
      }
    }
    headChain = chain
    var entry = Schema.streamEntry(version: version, sequence: sequence)
    try streamKey.withUnsafeBytes { k in
      try withUnsafeBytes(of: &entry) { v in try txn.put(v, forKey: k, in: schema.streamEvents) }
    }
    try Self.indexForAudit(
      sequence: sequence, microseconds: micros, lastInTime: lastInTime,
      device: Schema.deviceIndexKey(of: origin, own: store.deviceID), in: txn, schema: schema)
    typeCountDeltas[event.type, default: 0] += 1
    if event.type == SubjectErased.eventType { try applyErasure(event, atMicroseconds: micros) }
    try layouts.record(event, at: sequence, cache: store.layoutCache, database: schema.layouts, in: txn)
    return RecordedEvent(
      sequence: sequence, id: event.id, stream: stream, version: version, type: event.type,
      schemaVersion: event.schemaVersion, recordedAt: RecordCodec.date(microseconds: micros),
      metadata: event.metadata, payload: event.payload, payloadEncoding: event.payloadEncoding,
      provenance: origin, chain: chain, subjects: event.subjects)
  }

  /// Adds an event's entries to the time and device indexes (``Schema/byTime``,
  /// ``Schema/byDevice``).
  /// - Parameters:
  ///   - sequence: the event's sequence.
  ///   - microseconds: its recorded-at.
  ///   - lastInTime: whether its time key sorts after every key of the time index (then it is
  ///     appended: one page touched, no search).
  ///   - device: its key in the device index (``Schema/deviceIndexKey(of:own:)``); `nil` for
  ///     this environment's own events, which the index leaves out.
  ///   - txn: the transaction that writes the event.
  ///   - schema: the databases.
  /// - Throws: the storage error of a put.
  static func indexForAudit(
    sequence: UInt64, microseconds: Int64, lastInTime: Bool, device: UUID?, in txn: WriteTransaction,
    schema: Schema
  ) throws {
    if let byTime = schema.byTime {
      var key = Schema.timeKey(microseconds: microseconds, sequence: sequence)
      try withUnsafeBytes(of: &key) { k in
        try txn.put(
          UnsafeRawBufferPointer(start: nil, count: 0), forKey: k, in: byTime,
          flags: lastInTime ? .append : [])
      }
    }
    if let byDevice = schema.byDevice, let device {
      var value = sequence.bigEndian
      try withUnsafeBytes(of: device.uuid) { k in
        try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: byDevice) }
      }
    }
  }

  /// Adds `deltas` to the stored event counts per type (``Schema/typeCounts``).
  static func addTypeCounts(_ deltas: [String: UInt64], in txn: WriteTransaction, schema: Schema) throws {
    guard let typeCounts = schema.typeCounts else { return }
    for (type, delta) in deltas {
      let key = Array(type.utf8)
      let stored =
        try key.withUnsafeBytes { k in
          try txn.withValue(forKey: k, in: typeCounts) {
            $0.count == 8 ? UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) : 0
          }
        } ?? 0
      var value = (stored + delta).littleEndian
      try key.withUnsafeBytes { k in
        try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: typeCounts) }
      }
    }
  }

  /// Adds the ID index entries of events just written.
  private func index(_ idEntries: inout [(id: UUID, sequence: UInt64)]) throws {
    // Random keys are LMDB's slow path: insert them in key order.
    if idEntries.count > 1 { idEntries.sort { Self.precedes($0.id, $1.id) } }
    for entry in idEntries {
      var sequence = entry.sequence.littleEndian
      try withUnsafeBytes(of: entry.id.uuid) { k in
        try withUnsafeBytes(of: &sequence) { v in
          try txn.put(v, forKey: k, in: store.schema.eventIDs, flags: .noOverwrite)
        }
      }
    }
  }

  /// The sequence of the stored event `id`, or `nil`.
  private func storedSequence(of id: UUID) throws -> UInt64? {
    try withUnsafeBytes(of: id.uuid) { k in
      try txn.withValue(forKey: k, in: store.schema.eventIDs) {
        UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
      }
    }
  }

  /// Stores events recorded elsewhere, each on its own (``EventStore/ingest(_:updatingState:)``):
  /// one already stored (by ID) or that cannot be stored writes nothing; one that `admission`
  /// does not admit is stored and recorded as skipped, not applied to the projections.
  /// - Parameters:
  ///   - events: the events, in order.
  ///   - admission: the domain's rules, or `nil` to admit every event.
  ///   - failing: events a projection failed on in an earlier attempt of this ingest, by ID,
  ///     with the reason: they are stored and skipped as refused.
  /// - Returns: an outcome per event.
  /// - Throws: ``IngestProjectionFailure`` when a projection fails on an admitted event: the
  ///   caller aborts the transaction and ingests again with the event in `failing`.
  mutating func ingest(
    _ events: [EventStore.IngestedEvent], admission: (any EventAdmission)?, failing: [UUID: String] = [:]
  ) throws -> [EventStore.IngestOutcome] {
    var outcomes: [EventStore.IngestOutcome] = []
    outcomes.reserveCapacity(events.count)
    var versions: [StreamID: UInt64] = [:]
    var written: [UUID: UInt64] = [:]
    var idEntries: [(id: UUID, sequence: UInt64)] = []
    for item in events {
      if let reason = item.stream.invalidReason ?? RecordCodec.invalidReason(item.event) {
        outcomes.append(.refused(reason: reason))
        continue
      }
      if let sequence = try written[item.event.id] ?? storedSequence(of: item.event.id) {
        outcomes.append(.alreadyPresent(sequence: sequence))
        continue
      }
      if !foreignFollowing.isEmpty { try pinForeignCheckpoints() }
      let streamKey = Array(item.stream.rawValue.utf8)
      // An event made here and ingested (not received sealed) is sealed as an append seals it;
      // one holding values of an erased subject is refused.
      var event = item.event
      if !event.pendingSeals.isEmpty {
        do {
          try checkSubjectsNotErased(event)
        } catch let error as EventStoreError {
          outcomes.append(.refused(reason: error.description))
          continue
        }
        try seal(&event)
      }
      let version =
        try (versions[item.stream] ?? Self.streamVersion(of: streamKey, in: txn, schema: store.schema)) + 1
      versions[item.stream] = version
      let recorded = try write(
        event, to: item.stream, streamKey: streamKey, version: version, provenance: .some(item.provenance))
      written[item.event.id] = recorded.sequence
      idEntries.append((item.event.id, recorded.sequence))
      let kept: (kind: EventStore.SkippedEvent.Kind, reason: String)? =
        failing[item.event.id].map { (.refused, $0) }
        ?? item.skipped.flatMap { $0.kind == .unreadable ? nil : $0 }
      if let kept {
        try skip(
          recorded.sequence,
          EventStore.SkippedEvent(sequence: recorded.sequence, kind: kept.kind, reason: kept.reason))
        outcomes.append(.skipped(sequence: recorded.sequence, kind: kept.kind, reason: kept.reason))
        continue
      }
      // A JSON payload is judged and folded in binary; one that does not convert is unreadable.
      let (verdict, folded) = store.payloadForms.verdict(on: recorded, admission: admission, in: txn)
      switch verdict {
      case .admitted:
        if !targets.isEmpty, let folded {
          do {
            try ProjectionEngine.apply(folded, to: targets)
          } catch EventStoreError.projectionFailed(let projection, _, let underlying) {
            throw IngestProjectionFailure(
              id: item.event.id, reason: "the projection '\(projection)' refused it: \(underlying)")
          }
        }
        outcomes.append(.stored(sequence: recorded.sequence))
      case .unreadable(let reason):
        try skip(
          recorded.sequence,
          EventStore.SkippedEvent(sequence: recorded.sequence, kind: .unreadable, reason: reason))
        outcomes.append(.skipped(sequence: recorded.sequence, kind: .unreadable, reason: reason))
      case .invalid(let reason):
        try skip(
          recorded.sequence,
          EventStore.SkippedEvent(sequence: recorded.sequence, kind: .invalid, reason: reason))
        outcomes.append(.skipped(sequence: recorded.sequence, kind: .invalid, reason: reason))
      }
    }
    try index(&idEntries)
    return outcomes
  }

  private func skip(_ sequence: UInt64, _ skipped: EventStore.SkippedEvent) throws {
    guard let database = store.schema.skipped else { throw EventStoreError.readOnly(path: store.path) }
    let value = skipped.encoded
    try withUnsafeBytes(of: sequence) { k in
      try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: database, flags: .append) }
    }
  }

  private static func precedes(_ a: UUID, _ b: UUID) -> Bool { a.byteOrder < b.byteOrder }

  /// The positions of events already stored, read back from their records.
  private func storedResult(_ sequences: [UInt64]) throws -> EventStore.AppendResult {
    var positions: [EventStore.AppendResult.Position] = []
    for sequence in sequences {
      let event = try withUnsafeBytes(of: sequence) { key in
        try txn.withValue(forKey: key, in: store.schema.events) {
          try RecordCodec.decode($0, sequence: sequence)
        }
      }
      guard let event else {
        throw EventStoreError.corruptedRecord(sequence: sequence, reason: "indexed by its ID but not stored")
      }
      positions.append(
        EventStore.AppendResult.Position(
          id: event.id, stream: event.stream, version: event.version, sequence: sequence))
    }
    return EventStore.AppendResult(events: positions, alreadyStored: true)
  }

  /// Makes every projection's checkpoint follow the head, writing those that did not, and stores
  /// the clock when the head's record does not carry it (an ingested event older than the clock
  /// is the head, or the environment had no stored clock).
  mutating func finish() throws {
    if !typeCountDeltas.isEmpty {
      try Self.addTypeCounts(typeCountDeltas, in: txn, schema: store.schema)
      typeCountDeltas.removeAll()
    }
    if clock > headRecordedAt || storedClock == nil, storedClock != clock {
      var value = clock.littleEndian
      try Schema.clockKey.withUnsafeBytes { k in
        try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: store.schema.meta) }
      }
      storedClock = clock
    }
    for (index, target) in targets.enumerated() {
      let checkpoint = Schema.Checkpoint.following(version: target.projection.version)
      guard storedCheckpoints[index] != checkpoint else { continue }
      try Self.store(
        checkpoint, ofProjection: Array(target.projection.name.utf8), in: txn, schema: store.schema)
      storedCheckpoints[index] = checkpoint
    }
  }
}

/// A projection failed on an event that came from elsewhere: the ingest is tried again with the
/// event stored but skipped as invalid, so that one event can never wedge a pull or an import.
struct IngestProjectionFailure: Error {
  /// The event's ID.
  var id: UUID
  /// What the projection said.
  var reason: String
}
