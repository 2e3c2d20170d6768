import Foundation

/// An event's stamp: its recorded-at in microseconds, then its ID's bytes. Every device reads the
/// same stamp from the same event, and no two events share one (IDs are unique), so stamps order
/// any set of events the same way everywhere. ``EventStore``'s hybrid logical clock makes a new
/// event's stamp later than every event its log held when it was appended.
struct Stamp: Comparable {
  var microseconds: Int64
  /// The ID's `UUID.byteOrder`: with equal times, stamps order as their IDs' bytes.
  var high: UInt64
  var low: UInt64

  /// The size of a stamp in ``RowStamps``: microseconds (Int64 little-endian), then the 16 ID bytes.
  static let size = 24

  init(_ event: RecordedEvent) {
    microseconds = event.recordedAt.microsecondsSince1970
    (high, low) = event.id.byteOrder
  }

  /// The stamp stored at the start of `bytes` (at least ``size`` bytes).
  init(stored bytes: UnsafeRawBufferPointer) {
    microseconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self))
    high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
  }

  /// Appends the stored form to `bytes`.
  func append(to bytes: inout [UInt8]) {
    withUnsafeBytes(of: microseconds.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: high.bigEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: low.bigEndian) { bytes.append(contentsOf: $0) }
  }

  static func < (a: Stamp, b: Stamp) -> Bool {
    (a.microseconds, a.high, a.low) < (b.microseconds, b.high, b.low)
  }
}

/// A row's entry in the stamps table of a table with updates (``TableProjection/stampsTable``),
/// under the row's primary key:
///
/// ```
/// offset size
///  0     24   the latest stamp among the row's events (``Stamp``)
/// 24     8×n  the sequence numbers (UInt64 little-endian) of the row's events in stamp order,
///             from its last delete on (the events before a delete have no effect on the row)
/// ```
///
/// A key with an entry but no row was deleted (its entry starts with the delete: a tombstone), or
/// has seen only updates so far.
enum RowStamps {
  /// The entry of a row whose events are `sequences`, the last stamped `latest`.
  static func entry(latest: Stamp, sequences: some Sequence<UInt64>) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Stamp.size + 8 * sequences.underestimatedCount)
    latest.append(to: &bytes)
    for sequence in sequences { withUnsafeBytes(of: sequence.littleEndian) { bytes.append(contentsOf: $0) } }
    return bytes
  }

  /// The sequence numbers of a stored entry.
  static func sequences(_ entry: UnsafeRawBufferPointer) -> [UInt64] {
    stride(from: Stamp.size, to: entry.count - 7, by: 8).map {
      UInt64(littleEndian: entry.loadUnaligned(fromByteOffset: $0, as: UInt64.self))
    }
  }
}

extension TableSchema {
  /// Folds an event of a create, update or delete handler into a table with updates, by the
  /// convergent rule: the row becomes the fold of its events in stamp order.
  ///
  /// - An event stamped after the row's latest (the usual case: every local event, and pulled
  ///   events in order) is applied to the row as it is. An update of a key without a row changes
  ///   nothing, unless the key has never had an event: then its `ifMissing` decides.
  /// - An event stamped before the row's latest makes the engine read the row's events back from
  ///   the log and fold them again, with it, in stamp order, from no row: the same row, whatever
  ///   order the events came in.
  /// - A delete empties the row's list: what came before it has no effect on the row any more.
  ///
  /// Either way the outcome depends only on the row's events, not on the order they were
  /// applied in, so devices converge and a replay (which meets the events in the log's order,
  /// as the live path did) builds the same tables.
  @usableFromInline
  func fold(_ event: RecordedEvent, effect: RowEffect<Row>, writer: TableWriter<Row>) throws {
    let key: [UInt8]
    switch effect {
    case .create(let row): key = KeyBuilder.withKey({ primaryKey.write(row, &$0) }) { Array($0) }
    case .update(let rowKey, _, _), .delete(let rowKey): key = rowKey.bytes
    }
    let table = TableProjection<Row>.stampsTable
    try key.withUnsafeBytes { try TableEngine.checkKey($0, table: table, projection: projection) }
    let state = writer.state
    let stamp = Stamp(event)
    let stored = try state.value(forKey: key, in: table)
    guard let stored, stored.count >= Stamp.size else {
      // The key's first event.
      try applyInOrder(effect, writer: writer, firstEvent: true)
      try state.put(RowStamps.entry(latest: stamp, sequences: [event.sequence]), forKey: key, in: table)
      return
    }
    let latest = stored.withUnsafeBytes { Stamp(stored: $0) }
    guard stamp < latest else {
      try applyInOrder(effect, writer: writer, firstEvent: false)
      if case .delete = effect {
        try state.put(RowStamps.entry(latest: stamp, sequences: [event.sequence]), forKey: key, in: table)
      } else {
        var entry: [UInt8] = []
        entry.reserveCapacity(stored.count + 8)
        stamp.append(to: &entry)
        entry += stored[Stamp.size...]
        withUnsafeBytes(of: event.sequence.littleEndian) { entry.append(contentsOf: $0) }
        try state.put(entry, forKey: key, in: table)
      }
      return
    }
    try refold(key: key, stored: stored, latest: latest, adding: event, effect: effect, writer: writer)
  }

  /// Applies an event that comes after every other event of its row.
  private func applyInOrder(_ effect: RowEffect<Row>, writer: TableWriter<Row>, firstEvent: Bool) throws {
    switch effect {
    case .create(let row):
      try writer.put(row)
    case .update(let key, let change, let missing):
      if try !writer.update(forKey: key, change), firstEvent { try missing(projection) }
    case .delete(let key):
      try writer.delete(forKey: key)
    }
  }

  /// Folds the row under `key` again from its events, `event` (stamped before the row's latest)
  /// among them, and stores it (or deletes it) with its new list.
  private func refold(
    key: [UInt8], stored: [UInt8], latest: Stamp, adding event: RecordedEvent, effect: RowEffect<Row>,
    writer: TableWriter<Row>
  ) throws {
    guard let log = writer.state.log else {
      throw EventStoreError.invalidProjection(
        "projection '\(projection)' must fold a row again, and this fold cannot read the log")
    }
    var events: [(stamp: Stamp, sequence: UInt64, effect: RowEffect<Row>?)] = []
    for earlier in try log.events(at: stored.withUnsafeBytes(RowStamps.sequences)) {
      events.append((Stamp(earlier), earlier.sequence, try self.effect(of: earlier)))
    }
    events.append((Stamp(event), event.sequence, effect))
    events.sort { $0.stamp < $1.stamp }
    let start =
      events.lastIndex {
        if case .delete = $0.effect { true } else { false }
      } ?? 0
    // Each step goes through the stored bytes, as the in-order path's does (it reads the stored
    // row, changes it and writes it), so both give the same bytes.
    var current: (row: Row, bytes: [UInt8])?
    for step in events[start...] {
      switch step.effect {
      case .create(let row)?:
        current = (row, try RowWriter.withRow({ try row.write(to: &$0) }) { Array($0) })
      case .update(_, let change, _)?:
        guard let before = current else { continue }  // deleted, or not created yet
        var row = try before.bytes.withUnsafeBytes { try Row(storedBytes: $0) }
        try change(&row)
        let moved = KeyBuilder.withKey({ primaryKey.write(row, &$0) }) { !$0.elementsEqual(key) }
        precondition(!moved, "an update of projection '\(projection)' changed a row's primary key")
        current = (row, try RowWriter.withRow({ try row.write(to: &$0) }) { Array($0) })
      case .delete?:
        current = nil
      case nil:
        continue
      }
    }
    try writer.withParts { state, schema in
      try key.withUnsafeBytes { primaryKey in
        if let current {
          try current.bytes.withUnsafeBytes { bytes in
            try TableEngine.store(
              bytes, primaryKey: primaryKey, newKey: { schema.indexes[$0].key.write(current.row, &$1) },
              oldEntries: nil, state: Lent(state), layout: Lent(schema.layout))
          }
        } else {
          _ = try TableEngine.delete(primaryKey: primaryKey, state: Lent(state), layout: Lent(schema.layout))
        }
      }
      try state.put(
        RowStamps.entry(latest: latest, sequences: events[start...].lazy.map(\.sequence)), forKey: key,
        in: TableProjection<Row>.stampsTable)
    }
  }

  /// What a stored event of the row does, by its type's create, update or delete handler.
  private func effect(of event: RecordedEvent) throws -> RowEffect<Row>? {
    for handler in handlers where handler.eventType == event.type {
      return try handler.effect?(event)
    }
    return nil
  }
}
