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
    self.init(microseconds: event.recordedAt.microsecondsSince1970, id: event.id)
  }

  /// The stamp of an event recorded at `microseconds` with the ID `id`.
  init(microseconds: Int64, id: UUID) {
    self.microseconds = microseconds
    (high, low) = id.byteOrder
  }

  /// The event ID of a stamp stored at the start of `bytes` (at least ``size`` bytes).
  static func eventID(stored bytes: UnsafeRawBufferPointer) -> UUID {
    UUID(uuid: bytes.loadUnaligned(fromByteOffset: 8, as: uuid_t.self))
  }

  /// The stamp stored at the start of `bytes` (at least ``size`` bytes).
  init(stored bytes: UnsafeRawBufferPointer) {
    microseconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self))
    high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
  }

  /// Writes the stored form at the start of `buffer` (at least ``size`` bytes).
  func store(into buffer: UnsafeMutableRawBufferPointer) {
    buffer.storeBytes(of: microseconds.littleEndian, toByteOffset: 0, as: Int64.self)
    buffer.storeBytes(of: high.bigEndian, toByteOffset: 8, as: UInt64.self)
    buffer.storeBytes(of: low.bigEndian, toByteOffset: 16, as: UInt64.self)
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
/// 24     …    the streams the row's events are in, in the order first met: each a UInt16
///             little-endian length, then its UTF-8 bytes (one stream, for an entity that keeps
///             one stream per row)
/// ```
///
/// An event stamped after the latest rewrites the stamp in place. A key with an entry but no row
/// was deleted (a tombstone), or has had updates only.
@usableFromInline
enum RowStamps {
  /// The table's name, `.stamps` (``TableProjection/stampsTable``).
  static let table = ".stamps"

  /// The entry of a row whose latest stamp is `latest` and whose events are in `streams`.
  static func entry(latest: Stamp, streams: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Stamp.size + streams.reduce(0) { $0 + 2 + $1.count })
    latest.append(to: &bytes)
    for stream in streams {
      withUnsafeBytes(of: UInt16(stream.count).littleEndian) { bytes.append(contentsOf: $0) }
      bytes += stream
    }
    return bytes
  }

  /// The streams of a stored entry.
  static func streams(_ entry: UnsafeRawBufferPointer) -> [[UInt8]] {
    var streams: [[UInt8]] = []
    var offset = Stamp.size
    while offset + 2 <= entry.count {
      let length = Int(UInt16(littleEndian: entry.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
      guard offset + 2 + length <= entry.count else { break }
      streams.append(Array(entry[(offset + 2)..<(offset + 2 + length)]))
      offset += 2 + length
    }
    return streams
  }

  /// Whether `entry` lists exactly one stream, `stream`.
  static func lists(only stream: UnsafeRawBufferPointer, _ entry: UnsafeRawBufferPointer) -> Bool {
    entry.count == Stamp.size + 2 + stream.count
      && Int(UInt16(littleEndian: entry.loadUnaligned(fromByteOffset: Stamp.size, as: UInt16.self)))
        == stream.count
      && BinaryCodingSupport.bytesEqual(UnsafeRawBufferPointer(rebasing: entry[(Stamp.size + 2)...]), stream)
  }

  /// Stores the entry of one stream, `stream`, and the stamp `latest` under `key`: written in
  /// scratch memory, the same size as the entry it replaces in the usual case (overwritten in
  /// place in a replay's tables).
  static func store(
    latest: Stamp, stream: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer,
    in state: ProjectionWriter,
    table: String
  ) throws {
    try withUnsafeTemporaryAllocation(byteCount: Stamp.size + 2 + stream.count, alignment: 8) { buffer in
      latest.store(into: buffer)
      buffer.storeBytes(of: UInt16(stream.count).littleEndian, toByteOffset: Stamp.size, as: UInt16.self)
      UnsafeMutableRawBufferPointer(rebasing: buffer[(Stamp.size + 2)...]).copyMemory(from: stream)
      try state.put(UnsafeRawBufferPointer(buffer), forKey: key, in: table)
    }
  }

  /// Records `event` among the stamps of the row under `key` and says how it arrived.
  ///
  /// - The key's first event (no entry): stores its entry. The row's handler applies it as it
  ///   is; an update of no row then fails as its `ifMissing` says.
  /// - Stamped after the row's latest (the usual case: every local event, and pulled events in
  ///   order): rewrites the entry's stamp, in place when the event is in the entry's one stream.
  ///   The handler applies it to the row as it is (an update of no row changes nothing).
  ///   When the event names as its causation another event than the row's latest, it says so
  ///   (``RowArrival/inOrderUnseen``): it may overwrite a write it had not seen.
  /// - Stamped before it: writes nothing. The row must be folded again
  ///   (``TableSchema/refold(_:writer:)``), which stores the entry.
  /// - Throws: ``TableError/invalidKey(projection:table:length:)``, storage errors.
  @usableFromInline
  static func arrival(
    of event: RecordedEvent, key: UnsafeRawBufferPointer, state: ProjectionWriter, projection: String
  ) throws -> RowArrival {
    let table = Self.table
    try TableEngine.checkKey(key, table: table, projection: projection)
    let stamp = Stamp(event)
    // The closure below captures what it reads of the event, not the event: capturing it copied
    // the whole `RecordedEvent` (retaining its strings and payload) for every update.
    let causation = event.metadata.causationID
    var stream = event.stream.rawValue
    return try stream.withUTF8 { stream in
      let stream = UnsafeRawBufferPointer(stream)
      // One lookup: the stamp is read, and rewritten in place when the event comes after it.
      var arrival = RowArrival.first
      var otherStreams = false
      _ = try state.modifyValue(forKey: key, in: table) { entry in
        guard entry.count >= Stamp.size else { return false }  // unreadable: written anew below
        guard Stamp(stored: UnsafeRawBufferPointer(entry)) < stamp else {
          arrival = .late
          return false
        }
        // A write whose base (its causation) is not the row's latest had not seen every event
        // of the row: its conflicts are worked out again.
        if let base = causation,
          !withUnsafeBytes(
            of: base.uuid,
            {
              BinaryCodingSupport.bytesEqual(UnsafeRawBufferPointer(rebasing: entry[8..<Stamp.size]), $0)
            })
        {
          arrival = .inOrderUnseen
        } else {
          arrival = .inOrder
        }
        stamp.store(into: entry)
        otherStreams = !lists(only: stream, UnsafeRawBufferPointer(entry))
        return true
      }
      switch arrival {
      case .first:
        try store(latest: stamp, stream: stream, forKey: key, in: state, table: table)
      case .inOrder where otherStreams, .inOrderUnseen where otherStreams:
        var streams = try state.withValue(forKey: key, in: table) { Self.streams($0) } ?? []
        if !streams.contains(where: { $0.elementsEqual(stream) }) {
          streams.append(Array(stream))
          try state.put(entry(latest: stamp, streams: streams), forKey: Array(key), in: table)
        }
      case .inOrder, .inOrderUnseen, .late:
        break
      }
      return arrival
    }
  }
}

/// How an event reached its row, in a table with updates (``RowStamps/arrival(of:key:state:projection:)``).
@usableFromInline
enum RowArrival {
  /// The key's first event.
  case first
  /// Stamped after the row's latest: applied to the row as it is.
  case inOrder
  /// Stamped after the row's latest, but its base (its causation: the row's latest event when
  /// it was written) is another event: applied to the row as it is, then the row's conflicts
  /// are worked out again (``TableWriter/recordConflicts(_:)``).
  case inOrderUnseen
  /// Stamped before the row's latest: the row is folded again.
  case late
}

extension TableSchema {
  /// Folds the row `event` acts on again from its events, in stamp order, from its last delete on
  /// (what came before a delete has no effect on the row), and stores it (or deletes it) with its
  /// entry: `event` is stamped before the row's latest (``RowArrival/late``).
  ///
  /// The row's events are read back from the log: those of the streams its entry lists, stored
  /// before `event` (a replay through an earlier event, or a fold that reaches `event` before the
  /// rest of its batch, sees no later one), except those the projections skip, whose handler acts
  /// on the row. The result depends only on the row's events, not on the order they were applied
  /// in, so devices converge; and a replay, which meets the events in the log's order as the live
  /// path did, folds again where the live path did and builds the same tables.
  @usableFromInline
  func refold(_ event: RecordedEvent, writer: TableWriter<Row>) throws {
    guard let effect = try self.effect(of: event) else { return }
    guard let log = writer.state.log else {
      throw EventStoreError.invalidProjection(
        "projection '\(projection)' must fold a row again, and this fold cannot read the log")
    }
    let key = Self.key(of: effect, primaryKey: primaryKey)
    let table = RowStamps.table
    let stored = try writer.state.withValue(forKey: key, in: table) { entry in
      (latest: Stamp(stored: entry), streams: RowStamps.streams(entry))
    }
    guard let stored else { return }
    var streams = stored.streams
    let stream = Array(event.stream.rawValue.utf8)
    if !streams.contains(stream) { streams.append(stream) }
    // The row's events so far: those of its streams, up to this one, whose handler acts on it.
    let events = try rowSteps(event, effect: effect, key: key, streams: streams, log: log)
    let start =
      events.lastIndex {
        if case .delete = $0.effect { true } else { false }
      } ?? 0
    // Each step goes through the stored bytes, as the in-order path's does (it reads the stored
    // row, changes it and writes it), so both give the same bytes.
    var current: (row: Row, bytes: [UInt8])?
    for step in events[start...] {
      switch step.effect {
      case .create(let row):
        current = (row, try RowWriter.withRow({ try row.write(to: &$0) }) { Array($0) })
      case .update(_, let change):
        guard let before = current else { continue }  // deleted, or not created yet
        var row = try before.bytes.withUnsafeBytes { try Row(storedBytes: $0) }
        try change(&row)
        let moved = TableKey.KeyBuilder.withKey({ primaryKey.write(row, &$0) }) { !$0.elementsEqual(key) }
        precondition(!moved, "an update of projection '\(projection)' changed a row's primary key")
        current = (row, try RowWriter.withRow({ try row.write(to: &$0) }) { Array($0) })
      case .delete:
        current = nil
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
      try state.put(RowStamps.entry(latest: stored.latest, streams: streams), forKey: key, in: table)
      try storeConflicts(of: events, key: key, state: state)
    }
  }

  /// The primary key of the row `effect` acts on.
  static func key(of effect: RowEffect<Row>, primaryKey: TableKey.Column<Row>) -> [UInt8] {
    switch effect {
    case .create(let row): TableKey.KeyBuilder.withKey({ primaryKey.write(row, &$0) }) { Array($0) }
    case .update(let key, _), .delete(let key): key.bytes
    }
  }

  /// What a stored event does to its row, by its type's create, update or delete handler.
  func effect(of event: RecordedEvent) throws -> RowEffect<Row>? {
    for handler in handlers where handler.eventType == event.type {
      return try handler.effect?(event)
    }
    return nil
  }
}
