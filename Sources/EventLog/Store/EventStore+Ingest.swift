import Foundation
import LMDB

extension EventStore {
  /// An event recorded elsewhere (another device, a backup), to store as it came: its ID, type,
  /// schema version, payload, metadata and recorded-at are kept; its sequence number and version
  /// within the stream are this log's own.
  public struct IngestedEvent: Sendable, Hashable {
    /// The stream it belongs to.
    public var stream: StreamID
    /// The event, with ``NewEvent/recordedAt`` set to when it was first recorded.
    public var event: NewEvent
    /// How the log it comes from skipped it (an `export` says so), when it was invalid or refused
    /// there: it is stored and skipped the same way, whatever this store's rules say, so that a
    /// backup restores the log it was taken of. (An event skipped there as unreadable is judged
    /// here: this build may read it.)
    public var skipped: (kind: EventStore.SkippedEvent.Kind, reason: String)?
    /// The device that first recorded it and its sequence there (a pulled event's pushing
    /// device, an imported event's origin), stored in its record; `nil` when not known.
    public var provenance: RecordedEvent.Provenance?

    /// Creates an ingested event.
    /// - Parameters:
    ///   - stream: the stream it belongs to.
    ///   - event: the event.
    ///   - skipped: how the log it comes from skipped it, if it did.
    ///   - provenance: the device that first recorded it, and its sequence there, if known.
    public init(
      stream: StreamID, event: NewEvent, skipped: (kind: EventStore.SkippedEvent.Kind, reason: String)? = nil,
      provenance: RecordedEvent.Provenance? = nil
    ) {
      self.stream = stream
      self.event = event
      self.skipped = skipped
      self.provenance = provenance
    }

    /// Whether two ingested events are the same, skip and provenance included.
    public static func == (lhs: IngestedEvent, rhs: IngestedEvent) -> Bool {
      lhs.stream == rhs.stream && lhs.event == rhs.event && lhs.skipped?.kind == rhs.skipped?.kind
        && lhs.skipped?.reason == rhs.skipped?.reason && lhs.provenance == rhs.provenance
    }

    /// Hashes the stream, the event, the skip and the provenance.
    public func hash(into hasher: inout Hasher) {
      hasher.combine(stream)
      hasher.combine(event)
      hasher.combine(skipped?.kind)
      hasher.combine(skipped?.reason)
      hasher.combine(provenance)
    }
  }
}

extension EventStore {
  /// What ``EventStore/ingest(_:expectingHead:allOrNothing:updatingState:)`` did with one event.
  public enum IngestOutcome: Sendable, Hashable {
    /// Stored at `sequence` and folded into the projections.
    case stored(sequence: UInt64)
    /// Stored at `sequence`, but the projections skip it (``EventStore/SkippedEvent``).
    case skipped(sequence: UInt64, kind: EventStore.SkippedEvent.Kind, reason: String)
    /// An event with its ID is stored already, at `sequence`; nothing was written.
    case alreadyPresent(sequence: UInt64)
    /// It cannot be stored at all (an invalid stream ID, a field past its limit); nothing was
    /// written.
    case refused(reason: String)

    /// The sequence it is stored at, if it is.
    public var sequence: UInt64? {
      switch self {
      case .stored(let sequence), .skipped(let sequence, _, _), .alreadyPresent(let sequence): sequence
      case .refused: nil
      }
    }
  }
}

extension EventStore {
  /// A change of the key-value state kept beside the log (``EventStore/stateValue(forKey:)``).
  public struct StateChange: Sendable, Hashable {
    /// The key (1 to 511 bytes); extensions prefix theirs with their name (`replication.`).
    public var key: [UInt8]
    /// The new value; `nil` deletes the key.
    public var value: [UInt8]?

    /// Sets `key` to `value`.
    public static func put(_ key: [UInt8], _ value: [UInt8]) -> StateChange {
      StateChange(key: key, value: value)
    }
    /// Deletes `key`.
    public static func delete(_ key: [UInt8]) -> StateChange { StateChange(key: key, value: nil) }
  }
}

extension EventStore {
  /// Stores events recorded elsewhere, each on its own: one that is stored already (by its ID)
  /// is not stored again, one that cannot be stored is refused, and one the store's
  /// ``admission`` does not admit, or that a projection refuses (it throws), is stored but
  /// skipped by the projections, so no event from elsewhere can wedge the log. All of it, and the
  /// state changes `updatingState` derives from the outcomes, commit in one write transaction:
  /// a crash leaves the state before or after, never between.
  ///
  /// Replication's pull stores each page this way, with its cursor in the same transaction.
  /// - Parameters:
  ///   - events: the events, in the order to store them.
  ///   - expectingHead: when set, the head the log must be at, checked in the transaction
  ///     before anything is written (an import into an empty log expects 0).
  ///   - allOrNothing: when `true`, an event that would be refused (it cannot be stored) or is
  ///     present already fails the whole ingest instead (an import stores every event of its file
  ///     or none). Events the admission or a projection does not admit are stored and skipped
  ///     either way, as in a pull.
  ///   - updatingState: called inside the transaction with an outcome per event; its changes
  ///     commit with the events. It must not block.
  /// - Returns: an outcome per event, in order.
  /// - Throws: ``EventStoreError/unexpectedHead(path:expected:actual:)``,
  ///   ``EventStoreError/readOnly(path:)``, or a storage error (then nothing is stored).
  /// - Complexity: O(k log n) for k events.
  @discardableResult
  public func ingest(
    _ events: [IngestedEvent], expectingHead: UInt64? = nil, allOrNothing: Bool = false,
    updatingState: @escaping @Sendable ([IngestOutcome]) -> [StateChange] = { _ in [] }
  ) async throws -> [IngestOutcome] {
    let outcomes = try await exclusive { [self] () throws -> [IngestOutcome] in
      // A projection that throws on an event aborts the transaction; the event is then stored
      // as invalid in the next attempt (at most one attempt more per event).
      var failing: [UUID: String] = [:]
      while true {
        do {
          return try ingestOnce(
            events, expectingHead: expectingHead, allOrNothing: allOrNothing,
            failing: failing, updatingState: updatingState)
        } catch let failure as IngestProjectionFailure where failing[failure.id] == nil {
          failing[failure.id] = failure.reason
        }
      }
    }
    if let last = outcomes.compactMap(\.sequence).max() { notifier.publish(max(last, try head())) }
    return outcomes
  }

  private func ingestOnce(
    _ events: [IngestedEvent], expectingHead: UInt64?, allOrNothing: Bool, failing: [UUID: String],
    updatingState: @escaping @Sendable ([IngestOutcome]) -> [StateChange]
  ) throws -> [IngestOutcome] {
    try storage {
      try environment.write { txn in
        var batch = try WriteBatch(store: self, transaction: txn)
        if let expectingHead, batch.head != expectingHead {
          throw EventStoreError.unexpectedHead(path: path, expected: expectingHead, actual: batch.head)
        }
        let outcomes = try batch.ingest(events, admission: admission, failing: failing)
        if allOrNothing {
          for (event, outcome) in zip(events, outcomes) {
            switch outcome {
            case .refused(let reason):
              throw EventStoreError.invalidEvent(id: event.event.id, reason: reason)
            case .alreadyPresent(let sequence):
              throw EventStoreError.partiallyStoredAppend(id: event.event.id, sequence: sequence)
            case .stored, .skipped: break
            }
          }
        }
        try batch.finish()
        try self.apply(updatingState(outcomes), in: txn)
        return outcomes
      }
    }
  }

  /// Applies `changes` to the state in one write transaction of their own.
  public func updateState(_ changes: [StateChange]) async throws {
    guard !changes.isEmpty else { return }
    try await exclusive { [self] in
      try storage { try environment.write { txn in try self.apply(changes, in: txn) } }
    }
  }

  private func apply(_ changes: [StateChange], in txn: WriteTransaction) throws {
    guard !changes.isEmpty else { return }
    guard let state = schema.state else { throw EventStoreError.readOnly(path: path) }
    for change in changes {
      guard !change.key.isEmpty, change.key.count <= 511 else {
        throw EventStoreError.invalidState(key: change.key, reason: "a state key has 1 to 511 bytes")
      }
      if let value = change.value {
        try change.key.withUnsafeBytes { k in
          try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: state) }
        }
      } else {
        _ = try change.key.withUnsafeBytes { try txn.delete(forKey: $0, in: state) }
      }
    }
  }

  /// The state value of `key`, or `nil`.
  public func stateValue(forKey key: [UInt8]) throws -> [UInt8]? {
    guard let state = schema.state, !key.isEmpty else { return nil }
    return try storage { try environment.read { txn in try txn.value(forKey: key, in: state) } }
  }

  /// The state entries whose keys start with `prefix`, in key order, from the first key at or
  /// after `start` (when given).
  /// - Complexity: O(log n + k).
  public func stateEntries(
    withPrefix prefix: [UInt8], from start: [UInt8]? = nil, limit: Int = .max
  ) throws -> [(key: [UInt8], value: [UInt8])] {
    guard let state = schema.state else { return [] }
    let first = start.map { prefix.lexicographicallyPrecedes($0) ? $0 : prefix } ?? prefix
    return try storage {
      try environment.read { txn in
        try txn.withCursor(in: state) { cursor in
          var entries: [(key: [UInt8], value: [UInt8])] = []
          var found = first.isEmpty ? try cursor.move(.first) : try cursor.seek(first)
          while found && entries.count < limit {
            let key = [UInt8](cursor.key)
            guard key.starts(with: prefix) else { break }
            entries.append((key, [UInt8](cursor.value)))
            found = try cursor.move(.next)
          }
          return entries
        }
      }
    }
  }

  /// The events the projections skip, in sequence order.
  /// - Complexity: O(k).
  public func skippedEvents(limit: Int = .max) throws -> [EventStore.SkippedEvent] {
    guard let skipped = schema.skipped else { return [] }
    return try storage {
      try environment.read { txn in
        try txn.withCursor(in: skipped) { cursor in
          var events: [EventStore.SkippedEvent] = []
          var found = try cursor.move(.first)
          while found && events.count < limit {
            let sequence = cursor.key.loadUnaligned(as: UInt64.self)
            events.append(
              EventStore.SkippedEvent(sequence: sequence, encoded: cursor.value)
                ?? EventStore.SkippedEvent(
                  sequence: sequence, kind: .invalid, reason: "(an unreadable skip record)"))
            found = try cursor.move(.next)
          }
          return events
        }
      }
    }
  }

  /// How many events the projections skip.
  public func skippedCount() throws -> Int {
    guard let skipped = schema.skipped else { return 0 }
    return try storage { try environment.read { txn in try txn.count(in: skipped) } }
  }
}

extension EventStore {
  /// Looks again at every skipped event with `admission` (a newer build may read what an older
  /// one skipped): those it admits now are no longer skipped, and every projection is rebuilt
  /// (in the batch that follows) so that they are folded in their place in the log. Those in
  /// `refused` (a projection threw on them in an earlier attempt) stay skipped, as invalid.
  /// - Returns: the sequences readmitted.
  static func readmitSkipped(
    in txn: WriteTransaction, schema: Schema, admission: any EventAdmission, payloads: PayloadForms,
    projections: [any Projection], refused: [UInt64: String] = [:]
  ) throws -> [UInt64] {
    guard let skipped = schema.skipped else { return [] }
    var readmitted: [UInt64] = []
    try txn.withCursor(in: skipped) { cursor in
      var found = try cursor.move(.first)
      while found {
        let sequence = cursor.key.loadUnaligned(as: UInt64.self)
        let event = try withUnsafeBytes(of: sequence) { key in
          try txn.withValue(forKey: key, in: schema.events) { try RecordCodec.decode($0, sequence: sequence) }
        }
        let kind = cursor.value.first.flatMap(EventStore.SkippedEvent.Kind.init(rawValue:))
        // A JSON payload is judged in binary, once this build's types or a layout convert it.
        if refused[sequence] == nil, kind != .refused, let event,
          payloads.verdict(on: event, admission: admission, in: txn).verdict.isAdmitted
        {
          readmitted.append(sequence)
        }
        found = try cursor.move(.next)
      }
    }
    for (sequence, reason) in refused {
      let value = EventStore.SkippedEvent(sequence: sequence, kind: .refused, reason: reason).encoded
      try withUnsafeBytes(of: sequence) { k in
        try value.withUnsafeBytes { try txn.put($0, forKey: k, in: skipped) }
      }
    }
    guard !readmitted.isEmpty else { return [] }
    for sequence in readmitted {
      _ = try withUnsafeBytes(of: sequence) { try txn.delete(forKey: $0, in: skipped) }
    }
    // Without a checkpoint, the batch that follows rebuilds each projection from the log.
    for projection in projections {
      _ = try Array(projection.name.utf8).withUnsafeBytes {
        try txn.delete(forKey: $0, in: schema.checkpoints)
      }
    }
    return readmitted
  }
}
