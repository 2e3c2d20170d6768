import Foundation

extension EventStore {
  /// An entry of a projection that differs between two points of the log, as `eventlog diff` and
  /// `eventlog history` show it: its fields before and after (``Projection/shownFields(ofEntryIn:value:)``).
  public struct RowChange: Sendable, Hashable {
    /// What happened to the entry.
    public enum Kind: String, Sendable, CaseIterable {
      /// It was not there before.
      case added
      /// It is not there after.
      case removed
      /// It is there before and after, with other bytes.
      case changed
    }

    /// The projection that owns the table.
    public var projection: String
    /// The table.
    public var table: String
    /// The entry's key, as stored.
    public var key: [UInt8]
    /// Its fields before; `nil` when it was not there.
    public var before: [ShownField]?
    /// Its fields after; `nil` when it is not there.
    public var after: [ShownField]?

    /// Added, removed or changed.
    public var kind: Kind {
      switch (before, after) {
      case (nil, _): .added
      case (_, nil): .removed
      default: .changed
      }
    }

    /// The names of the fields whose values differ, sorted (every field of an added or a removed
    /// entry).
    public var changedFields: [String] {
      let old = Dictionary((before ?? []).map { ($0.name, $0.json) }, uniquingKeysWith: { a, _ in a })
      let new = Dictionary((after ?? []).map { ($0.name, $0.json) }, uniquingKeysWith: { a, _ in a })
      return Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
        .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The key as text: a UUID in lower case (16 bytes), the UTF-8 text when it is printable,
    /// else hex.
    public var keyText: String {
      if key.count == 16 {
        let uuid = key.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return uuid.lowercasedString
      }
      if let text = String(validating: key, as: UTF8.self),
        !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
      {
        return text
      }
      return Hex.string(key)
    }
  }

  /// The point of the log as of `time`: the last event before the first one recorded after it
  /// (0 when the first event was). What a replay through it builds is the log as it stood when
  /// it held only events recorded by `time`. Events recorded by then that reached the log later
  /// (pulled from another device after newer ones were appended) are not in it:
  /// ``lateEvents(recordedBy:after:)`` counts them.
  /// - Complexity: O(log n + k) with the time index, for the k events recorded after `time`.
  public func sequence(asOf time: Date) throws -> UInt64 {
    let after = Date(microsecondsSince1970: time.microsecondsSince1970 + 1)
    guard let first = try sequences(recordedFrom: after, through: nil).first else { return try head() }
    return first - 1
  }

  /// The sequences after `sequence` of events recorded by `time` (that reached the log after one
  /// recorded later).
  public func lateEvents(recordedBy time: Date, after sequence: UInt64) throws -> [UInt64] {
    try sequences(recordedFrom: nil, through: time).filter { $0 > sequence }
  }

  /// What the projections' entries gained, lost and changed from the state as of event `from`
  /// to the state as of event `to` (`from` ≤ `to`; 0 is the empty log).
  ///
  /// Replays through `from`, then folds the events up to `to` noting each entry they change:
  /// memory is bounded by the projections' state and the entries changed, not by the log.
  /// - Parameters:
  ///   - from: the earlier point.
  ///   - to: the later point (at most the head).
  ///   - progress: called as the fold advances.
  /// - Returns: the entries that differ, by projection, table and key, in the order of
  ///   ``projections`` and of the tables' keys; tables a projection leaves out are not listed.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` for a damaged or missing
  ///   event, ``EventStoreError/projectionFailed(projection:sequence:underlying:)``.
  public func projectionChanges(
    from: UInt64, to: UInt64, progress: ((ProgressReport) -> Void)? = nil
  ) throws -> [RowChange] {
    precondition(from <= to, "projectionChanges(from:to:) takes the earlier point first")
    let clock = ContinuousClock()
    let start = clock.now
    let replay = try self.replay(through: from) {
      progress?(ProgressReport(completed: $0.completed, total: to, elapsed: clock.now - start))
    }
    startRecording(replay)
    try advance(replay, through: to) {
      progress?(ProgressReport(completed: $0, total: to, elapsed: clock.now - start))
    }
    return recordedChanges(replay)
  }

  /// For each of `sequences`, what folding that one event changed in the projections: the steps
  /// of an entity's history (`eventlog history`).
  ///
  /// One replay up to the last of them, noting changes only while each of them is folded.
  /// - Parameters:
  ///   - sequences: events of the log, ascending.
  ///   - progress: called as the fold advances.
  /// - Returns: the changes of each event, in the order given.
  /// - Throws: as ``projectionChanges(from:to:progress:)``.
  public func projectionChanges(
    ofEvents sequences: [UInt64], progress: ((ProgressReport) -> Void)? = nil
  ) throws -> [(sequence: UInt64, changes: [RowChange])] {
    guard let first = sequences.first, let last = sequences.last, first >= 1 else { return [] }
    precondition(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "sequences ascending")
    let clock = ContinuousClock()
    let start = clock.now
    let report: (UInt64) -> Void = {
      progress?(ProgressReport(completed: $0, total: last, elapsed: clock.now - start))
    }
    let replay = try self.replay(through: first - 1) { report($0.completed) }
    var steps: [(sequence: UInt64, changes: [RowChange])] = []
    for sequence in sequences {
      try advance(replay, through: sequence - 1, progress: report)
      startRecording(replay)
      try advance(replay, through: sequence, progress: report)
      steps.append((sequence, recordedChanges(replay)))
    }
    return steps
  }

  private func startRecording(_ replay: ReplayResult) {
    for tables in replay.tables.values {
      for table in tables.values { table.startRecordingChanges() }
    }
  }

  /// Folds `replay` on up to `last`, a chunk of ``Options/replayChunkSize`` events per read
  /// transaction.
  private func advance(_ replay: ReplayResult, through last: UInt64, progress: (UInt64) -> Void) throws {
    let chunk = UInt64(max(1, options.replayChunkSize))
    while replay.throughSequence < last {
      let end = min(last, replay.throughSequence + chunk)
      try storage {
        try environment.read { txn in
          try replay.advance(through: end, in: txn, schema: schema, payloads: payloadForms)
        }
      }
      progress(end)
    }
  }

  /// The changes each table of `replay` recorded, shown by its projection; recording stops.
  private func recordedChanges(_ replay: ReplayResult) -> [RowChange] {
    var changes: [RowChange] = []
    for projection in projections {
      guard let tables = replay.tables[projection.name] else { continue }
      for name in projection.tables {
        guard let table = tables[name] else { continue }
        for change in table.recordedChanges() {
          guard let before = Self.shown(change.before, in: name, of: projection),
            let after = Self.shown(change.after, in: name, of: projection)
          else { continue }
          changes.append(
            RowChange(projection: projection.name, table: name, key: change.key, before: before, after: after)
          )
        }
      }
    }
    return changes
  }

  /// The fields of an entry's value (`.some(nil)`: absent), `nil` when the projection leaves the
  /// table out; an entry that does not read back shows as one field, `unreadable`.
  private static func shown(
    _ value: [UInt8]?, in table: String, of projection: any Projection
  ) -> [ShownField]?? {
    guard let value else { return .some(nil) }
    do {
      guard let fields = try projection.shownFields(ofEntryIn: table, value: value) else { return nil }
      return .some(fields)
    } catch {
      var quoted: [UInt8] = []
      JSONWriter.appendQuoted(String(describing: error), to: &quoted)
      return .some([ShownField(name: "unreadable", json: String(decoding: quoted, as: UTF8.self))])
    }
  }
}
