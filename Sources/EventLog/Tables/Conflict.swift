import Foundation

/// A concurrent write that a table's convergent rule overwrote or discarded: two devices wrote
/// one field of a row without either having seen the other's write, and the later stamp won; or
/// a change and a delete crossed.
///
/// A write had seen another when the event it names as its causation (its *base*: the row's
/// latest event when it was written, which ``EntityRepository`` names) is stamped at or after
/// the other; a write that names no event of its row is taken as having seen every write stamped
/// before it. The engine records a row's conflicts in the same transaction that applies the
/// event, works them out from the row's events alone (so every device that holds the same events
/// holds the same conflicts, whatever order they came in, and a replay rebuilds them), and keeps
/// them in the table's ``TableProjection/conflictsTable``. Read them with
/// ``EventStore/conflicts(in:)``, or follow them with ``EntityRepository/conflicts()``.
public struct Conflict: Sendable, Hashable {
  /// How the rule decided.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// Two writes of one field: the later stamp's value holds, the earlier one's is lost.
    case overwritten
    /// A change lost to a delete stamped after it that had not seen it: the row is gone.
    case deleted
    /// A change stamped after a delete that it had not seen: the tombstone discards it.
    case discarded
  }

  /// One of the two writes.
  public struct Write: Sendable, Hashable {
    /// The event's ID.
    public var eventID: UUID
    /// The event's sequence number in this log (`nil` if the log no longer holds it).
    public var sequence: UInt64?
    /// The device that recorded the event, when its record says.
    public var device: UUID?
    /// The event's sequence number on that device.
    public var deviceSequence: UInt64?
    /// The event's recorded-at: with its ID, its stamp.
    public var recordedAt: Date
    /// The field's value this write left (the winner) or would have left (the loser), as JSON
    /// text; `nil` for a delete.
    public var value: String?

    /// A write.
    /// - Parameters:
    ///   - eventID: the event's ID.
    ///   - sequence: its sequence number in this log.
    ///   - device: the device that recorded it.
    ///   - deviceSequence: its sequence number there.
    ///   - recordedAt: its recorded-at.
    ///   - value: the field's value as JSON text, `nil` for a delete.
    public init(
      eventID: UUID, sequence: UInt64?, device: UUID?, deviceSequence: UInt64?, recordedAt: Date,
      value: String?
    ) {
      self.eventID = eventID
      self.sequence = sequence
      self.device = device
      self.deviceSequence = deviceSequence
      self.recordedAt = recordedAt
      self.value = value
    }
  }

  /// The table (its projection's name).
  public var table: String
  /// The row's primary key: a UUID key as its text, another in hex (`0x…`).
  public var key: String
  /// The field, as the row's `Codable` conformance names it (`bytes` for a row that is not
  /// `Encodable`).
  public var field: String
  /// How the rule decided.
  public var kind: Kind
  /// The write that holds: the later stamp, or the delete.
  public var winner: Write
  /// The write that was lost.
  public var loser: Write

  /// A conflict.
  /// - Parameters:
  ///   - table: the table.
  ///   - key: the row's key as shown.
  ///   - field: the field.
  ///   - kind: how the rule decided.
  ///   - winner: the write that holds.
  ///   - loser: the write that was lost.
  public init(table: String, key: String, field: String, kind: Kind, winner: Write, loser: Write) {
    self.table = table
    self.key = key
    self.field = field
    self.kind = kind
    self.winner = winner
    self.loser = loser
  }
}

extension EventStore {
  /// The names of the tables that keep conflicts: the table projections with updates.
  public var conflictTables: [String] {
    projections.filter { $0.tables.contains(RowConflicts.table) }.map(\.name)
  }

  /// The conflicts the convergent rule recorded (``Conflict``), in the order of the winning
  /// writes' stamps, oldest first. A table an earlier build wrote, opened read-only before a
  /// writable open rebuilt it, has none.
  /// - Parameter table: only this table's; every table's when `nil`.
  /// - Returns: the conflicts, oldest first.
  /// - Throws: ``EventStoreError/invalidProjection(_:)`` when `table` keeps no conflicts, or a
  ///   storage error.
  public func conflicts(in table: String? = nil) throws -> [Conflict] {
    try read { try $0.conflicts(in: table) }
  }
}

extension EventStore.StoreSnapshot {
  /// The conflicts the convergent rule recorded (``EventStore/conflicts(in:)``), in this
  /// snapshot.
  /// - Parameter table: only this table's; every table's when `nil`.
  /// - Returns: the conflicts, oldest first.
  /// - Throws: ``EventStoreError/invalidProjection(_:)`` when `table` keeps no conflicts, or a
  ///   storage error.
  public func conflicts(in table: String? = nil) throws -> [Conflict] {
    let tables = store.conflictTables
    if let table, !tables.contains(table) {
      throw EventStoreError.invalidProjection(
        "table '\(table)' keeps no conflicts (tables with updates: \(tables.isEmpty ? "none" : tables.joined(separator: ", ")))"
      )
    }
    var conflicts: [(stamp: Stamp, conflict: Conflict)] = []
    for name in tables where table == nil || table == name {
      // A projection the environment does not hold yet, or holds as an earlier build left it
      // (without `.conflicts`: a read-only open before the rebuild), has none recorded.
      guard store.projectionDatabases[name]?[RowConflicts.table] != nil else { continue }
      let reader = try projection(name)
      try reader.forEach(in: RowConflicts.table) { _, value in
        for stored in try BinaryDecoder().decode([StoredConflict].self, from: Array(value)) {
          guard let kind = Conflict.Kind(rawValue: stored.kind) else { continue }
          conflicts.append(
            (
              Stamp(microseconds: stored.winner.recordedAt, id: stored.winner.event),
              Conflict(
                table: name, key: stored.key, field: stored.field, kind: kind,
                winner: try write(stored.winner), loser: try write(stored.loser))
            ))
        }
        return true
      }
    }
    // Stable: one row's conflicts keep the order its fold found them in.
    return conflicts.enumerated().sorted {
      ($0.element.stamp, $0.offset) < ($1.element.stamp, $1.offset)
    }.map(\.element.conflict)
  }

  private func write(_ stored: StoredWrite) throws -> Conflict.Write {
    Conflict.Write(
      eventID: stored.event, sequence: try sequence(ofEventID: stored.event), device: stored.device,
      deviceSequence: stored.deviceSequence, recordedAt: Date(microsecondsSince1970: stored.recordedAt),
      value: stored.value)
  }

  /// The sequence of the event with ID `id` in this snapshot, or `nil`.
  func sequence(ofEventID id: UUID) throws -> UInt64? {
    try storage {
      try withUnsafeBytes(of: id.uuid) { key in
        try transaction.withValue(forKey: key, in: store.schema.eventIDs) {
          UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
        }
      }
    }
  }
}
