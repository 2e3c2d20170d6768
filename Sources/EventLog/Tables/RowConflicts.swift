import Foundation

/// The conflicts of a table with updates (``TableProjection/conflictsTable``): under a row's
/// primary key, the conflicts the convergent rule decided among the row's events (an array of
/// ``StoredConflict``, `BinaryEncoder`'s bytes); no entry for a row without one.
///
/// **Concurrent.** A write W *had seen* an earlier-stamped write L of its row when W names,
/// as its `causationID`, an event of the row (its *base*: the row's latest event when W was
/// written, which ``EntityRepository`` names) stamped at or after L. A write whose causation
/// names no event of the row is taken as sequential: it had seen every write stamped before it.
/// Two writes are concurrent when the later-stamped one had not seen the earlier one.
///
/// **Deterministic.** A row's conflicts are a function of the set of its events (their stamps,
/// effects, causation and provenance), worked out again from all of them whenever an event can
/// change them: an event stamped before the row's latest (its refold), or one stamped after it
/// whose base is not the row's latest. So every device that holds the same events holds the same
/// conflicts, whatever order they came in, and a replay rebuilds what the live path stored.
enum RowConflicts {
  /// The table's name, `.conflicts`.
  static let table = ".conflicts"
}

/// One conflict as the `.conflicts` table stores it.
struct StoredConflict: Codable, Equatable {
  /// The row's primary key as shown: a UUID key in its text form, another in hex.
  var key: String
  var field: String
  /// ``Conflict/Kind``'s raw value.
  var kind: String
  var winner: StoredWrite
  var loser: StoredWrite
}

/// One side of a ``StoredConflict``.
struct StoredWrite: Codable, Equatable {
  var event: UUID
  /// The event's recorded-at, in microseconds since 1970 (with the ID, its stamp).
  var recordedAt: Int64
  var device: UUID?
  var deviceSequence: UInt64?
  /// The field's value as JSON text; `nil` for a delete.
  var value: String?

  init(_ event: RecordedEvent, value: String?) {
    self.event = event.id
    recordedAt = event.recordedAt.microsecondsSince1970
    device = event.provenance?.device
    deviceSequence = event.provenance?.sequence
    self.value = value
  }
}

/// One event of a row, as its fold sees it.
struct RowStep<Row: TableRow> {
  var event: RecordedEvent
  var stamp: Stamp
  var effect: RowEffect<Row>
}

extension TableSchema {
  /// The row's events so far, in stamp order: `event` (whose effect is `effect`), and the
  /// events of `streams` stored before it whose handler acts on the row under `key`.
  func rowSteps(
    _ event: RecordedEvent, effect: RowEffect<Row>, key: [UInt8], streams: [[UInt8]], log: LogReader
  ) throws -> [RowStep<Row>] {
    var steps = [RowStep(event: event, stamp: Stamp(event), effect: effect)]
    for earlier in try log.events(inStreams: streams, before: event.sequence) {
      guard let effect = try self.effect(of: earlier), Self.key(of: effect, primaryKey: primaryKey) == key
      else {
        continue
      }
      steps.append(RowStep(event: earlier, stamp: Stamp(earlier), effect: effect))
    }
    steps.sort { $0.stamp < $1.stamp }
    return steps
  }

  /// Works out the conflicts of the row under `key` again from all its events, `event` among
  /// them: for an event stamped after the row's latest whose base is another event
  /// (``RowArrival/inOrderUnseen``), applied to the row already.
  func recordConflicts(_ event: RecordedEvent, writer: TableWriter<Row>) throws {
    guard let effect = try self.effect(of: event) else { return }
    guard let log = writer.state.log else {
      throw EventStoreError.invalidProjection(
        "projection '\(projection)' must read a row's events for its conflicts, and this fold cannot read the log"
      )
    }
    let key = Self.key(of: effect, primaryKey: primaryKey)
    let streams =
      try writer.state.withValue(forKey: key, in: RowStamps.table) { RowStamps.streams($0) } ?? []
    let steps = try rowSteps(event, effect: effect, key: key, streams: streams, log: log)
    try storeConflicts(of: steps, key: key, state: writer.state)
  }

  /// Stores the conflicts of the row under `key`, whose events are `steps` in stamp order
  /// (deletes its entry when it has none).
  func storeConflicts(of steps: [RowStep<Row>], key: [UInt8], state: ProjectionWriter) throws {
    let conflicts = try Self.conflicts(of: steps, key: key)
    if conflicts.isEmpty {
      _ = try state.delete(forKey: key, in: RowConflicts.table)
    } else {
      try state.putRow(conflicts, forKey: key, in: RowConflicts.table)
    }
  }

  /// The conflicts among a row's events, `steps` in stamp order (see ``RowConflicts``): the row
  /// folded as the convergent rule folds it, each field's last writer kept, and a conflict
  /// recorded where a write overwrites or removes a field whose last writer it had not seen, and
  /// where a tombstone discards a change that had not seen the delete.
  static func conflicts(of steps: [RowStep<Row>], key: [UInt8]) throws -> [StoredConflict] {
    var stamps: [UUID: Stamp] = [:]
    for step in steps { stamps[step.event.id] = step.stamp }
    // No write names a base among the row's events: every write is sequential (the usual case,
    // and every table whose events name no causation), with no field to render.
    guard steps.contains(where: { $0.event.metadata.causationID.map { stamps[$0] != nil } ?? false }) else {
      return []
    }
    /// Whether `step` had seen the write stamped `earlier`.
    func saw(_ step: RowStep<Row>, _ earlier: Stamp) -> Bool {
      guard let base = step.event.metadata.causationID, let baseStamp = stamps[base] else { return true }
      return earlier < baseStamp || earlier == baseStamp
    }
    let shownKey =
      key.count == 16
      ? UUID(uuid: key.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).lowercasedString
      : "0x" + Hex.string(key)
    var conflicts: [StoredConflict] = []
    func record(_ kind: Conflict.Kind, _ field: String, winner: StoredWrite, loser: StoredWrite) {
      conflicts.append(
        StoredConflict(key: shownKey, field: field, kind: kind.rawValue, winner: winner, loser: loser))
    }
    var current: (row: Row, fields: [String: String])?
    var writers: [String: Int] = [:]  // each field's last writer, by its position in `steps`
    var lastDelete: (position: Int, before: Row)?
    for (position, step) in steps.enumerated() {
      switch step.effect {
      case .create(let row):
        let fields = try shownFields(of: row)
        current = (row, fields)
        writers = fields.mapValues { _ in position }
        lastDelete = nil
      case .update(_, let change):
        if let (before, fields) = current {
          var row = before
          try change(&row)
          let changed = try shownFields(of: row)
          for field in Self.sortedFields(fields, changed) where fields[field] != changed[field] {
            if let writer = writers[field], !saw(step, steps[writer].stamp) {
              record(
                .overwritten, field, winner: StoredWrite(step.event, value: changed[field] ?? "null"),
                loser: StoredWrite(steps[writer].event, value: fields[field] ?? "null"))
            }
            writers[field] = position
          }
          current = (row, changed)
        } else if let (deletion, before) = lastDelete, !saw(step, steps[deletion].stamp) {
          // What the change would have made of the row the delete removed. A change that
          // cannot apply to it (its closure throws) lost nothing to show.
          var row = before
          guard (try? change(&row)) != nil else { continue }
          let old = try shownFields(of: before)
          let new = try shownFields(of: row)
          for field in Self.sortedFields(old, new) where old[field] != new[field] {
            record(
              .discarded, field, winner: StoredWrite(steps[deletion].event, value: nil),
              loser: StoredWrite(step.event, value: new[field] ?? "null"))
          }
        }
      case .delete:
        guard let (row, fields) = current else { continue }
        for field in Self.sortedFields(writers, [:]) {
          guard let writer = writers[field], !saw(step, steps[writer].stamp) else { continue }
          record(
            .deleted, field, winner: StoredWrite(step.event, value: nil),
            loser: StoredWrite(steps[writer].event, value: fields[field] ?? "null"))
        }
        current = nil
        writers = [:]
        lastDelete = (position, row)
      }
    }
    return conflicts
  }

  /// The names of `a`'s and `b`'s fields, in the order of their UTF-8 bytes (the same on every
  /// device and build).
  static func sortedFields<A, B>(_ a: [String: A], _ b: [String: B]) -> [String] {
    Set(a.keys).union(b.keys).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// A row's fields as JSON text by name (as ``TableProjection/shownFields(ofEntryIn:value:)``
  /// shows them); a row that is not `Encodable` is one field, `bytes`, its stored bytes in hex.
  static func shownFields(of row: Row) throws -> [String: String] {
    guard let encodable = row as? any Encodable else {
      let bytes = try RowWriter.withRow({ try row.write(to: &$0) }) { Array($0) }
      return ["bytes": "\"\(Hex.string(bytes))\""]
    }
    let node = try JSONNode.parse(try PayloadJSONEncoder().encode(encodable))
    guard case .object(let members) = node.value else {
      return ["value": String(decoding: node.rendered, as: UTF8.self)]
    }
    return members.mapValues { String(decoding: $0.rendered, as: UTF8.self) }
  }
}
