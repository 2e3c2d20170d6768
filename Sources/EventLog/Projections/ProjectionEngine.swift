import Foundation
import LMDB

/// The shared machinery of the inline path, catch-up, rebuild and replay: folding stored events
/// into projection states, writing in-memory tables to LMDB, and comparing the two.
enum ProjectionEngine {
  /// A projection and the state it folds into. A class, so that handing one to ``apply(_:to:)``
  /// for every event is a reference, not a copy of the existential and the state.
  final class Target {
    let projection: any Projection
    let state: ProjectionWriter

    init(projection: any Projection, state: ProjectionWriter) {
      self.projection = projection
      self.state = state
    }

    /// Folds `events` in order, stopping at the first that fails.
    /// - Returns: that event's sequence and the error (as ``ProjectionEngine/apply(_:to:)``
    ///   throws it), or `nil`.
    func fold(_ events: UnsafeMutableBufferPointer<RecordedEvent>) -> (sequence: UInt64, error: any Error)? {
      // Opens the existential once for the chunk instead of once per event.
      Self.fold(events, into: projection, state: state)
    }

    private static func fold<P: Projection>(
      _ events: UnsafeMutableBufferPointer<RecordedEvent>, into projection: P, state: ProjectionWriter
    ) -> (sequence: UInt64, error: any Error)? {
      guard let base = events.baseAddress else { return nil }
      for index in events.indices {
        // Moved out for the call and back: passing the element in place would copy it (retaining
        // its strings and payload through value witnesses), since the callee could otherwise see
        // the memory change under it.
        let event = (base + index).move()
        do {
          try projection.apply(event, to: state)
        } catch {
          let sequence = event.sequence
          (base + index).initialize(to: consume event)
          return (sequence, ProjectionEngine.failure(error, projection: projection.name, sequence: sequence))
        }
        (base + index).initialize(to: consume event)
      }
      return nil
    }
  }

  /// The error to throw for `error`, thrown by `projection` on event `sequence`.
  static func failure(_ error: any Error, projection: String, sequence: UInt64) -> any Error {
    // LMDB's errors go through unchanged: the environment must see map-full to grow.
    if error is LMDBError { return error }
    return EventStoreError.projectionFailed(projection: projection, sequence: sequence, underlying: error)
  }

  /// Folds a chunk of events into every target, one target at a time (each projection has its
  /// own tables, so the order across projections does not matter), opening each projection's
  /// existential once per chunk. A failure is reported as ``apply(_:to:)`` would have: the
  /// earliest failing event, and for that event the first target in order.
  static func apply(_ events: UnsafeMutableBufferPointer<RecordedEvent>, to targets: [Target]) throws {
    var first: (sequence: UInt64, error: any Error)?
    for target in targets {
      guard let failure = target.fold(events) else { continue }
      if let earlier = first, earlier.sequence <= failure.sequence { continue }
      first = failure
    }
    if let first { throw first.error }
  }

  /// Applies one event to every target, naming the projection and event on failure.
  @inline(__always)
  static func apply(_ event: RecordedEvent, to targets: [Target]) throws {
    try targets.withUnsafeBufferPointer { targets in
      for index in targets.indices {
        do {
          try targets[index].projection.apply(event, to: targets[index].state)
        } catch {
          throw failure(error, projection: targets[index].projection.name, sequence: event.sequence)
        }
      }
    }
  }

  /// Reads events `first...last` in `txn`, verifying each record and that none is missing, and
  /// hands each to `body` in order, except the events the projections skip (``EventStore/SkippedEvent``).
  /// A JSON payload is handed over in binary (``PayloadForms/binaryForm(of:in:)``), and an event
  /// whose JSON payload nothing here converts is not handed over.
  static func walk(
    from first: UInt64, through last: UInt64, in txn: Transaction, schema: Schema, payloads: PayloadForms,
    _ body: (consuming RecordedEvent) throws -> Void
  ) throws {
    guard first <= last else { return }
    var expected = first
    let skipped = try schema.skippedSequences(from: first, through: last, in: txn)
    try txn.withCursor(in: schema.events) { cursor in
      var found = try withUnsafeBytes(of: first) { try cursor.seek($0) }
      while found {
        let sequence = cursor.key.loadUnaligned(as: UInt64.self)
        if sequence > last { break }
        guard sequence == expected else {
          throw EventStoreError.corruptedRecord(
            sequence: expected, reason: "the event is missing (the next stored is \(sequence))")
        }
        if skipped.isEmpty || !skipped.contains(sequence) {
          let event = try RecordCodec.decode(cursor.value, sequence: sequence)
          if event.payloadEncoding == .binary {
            try body(consume event)  // handed over, not copied (no retain of its strings and payload)
          } else if let converted = payloads.binaryForm(of: event, in: txn).event {
            try body(converted)
          }
        }
        expected += 1
        found = try cursor.move(.next)
      }
    }
    guard expected == last + 1 else {
      throw EventStoreError.corruptedRecord(sequence: expected, reason: "the event is missing")
    }
  }

  /// Reads events `first...last` in `txn` (see ``walk(from:through:in:schema:payloads:_:)``) and applies
  /// them to `targets`.
  /// - Returns: the number of events read (folded or skipped).
  @discardableResult
  static func fold(
    from first: UInt64, through last: UInt64, in txn: Transaction, schema: Schema, payloads: PayloadForms,
    into targets: [Target]
  ) throws -> Int {
    try walk(from: first, through: last, in: txn, schema: schema, payloads: payloads) {
      try apply($0, to: targets)
    }
    return first <= last ? Int(last - first + 1) : 0
  }

  /// Reads events `first...last` in `txn` (see ``walk(from:through:in:schema:payloads:_:)``) into an array.
  static func decode(
    from first: UInt64, through last: UInt64, in txn: Transaction, schema: Schema, payloads: PayloadForms
  ) throws -> [RecordedEvent] {
    var result: [RecordedEvent] = []
    if first <= last { result.reserveCapacity(Int(last - first + 1)) }
    try walk(from: first, through: last, in: txn, schema: schema, payloads: payloads) { result.append($0) }
    return result
  }

  /// Fresh in-memory tables for `projection` and a state over them, reading the log through `log`.
  static func memoryTarget(for projection: any Projection, log: LogReader) -> (Target, [String: MemoryTable])
  {
    var tables: [String: MemoryTable] = [:]
    for table in projection.tables { tables[table] = MemoryTable(name: table) }
    let state = ProjectionWriter(projection: projection.name, backend: .memory(tables), log: log)
    return (Target(projection: projection, state: state), tables)
  }

  /// Replaces the contents of the LMDB tables with the in-memory ones, in key order.
  static func write(
    _ tables: [String: MemoryTable], to databases: [String: Database], in txn: WriteTransaction
  ) throws {
    for (name, table) in tables {
      guard let database = databases[name] else { continue }
      try txn.removeAll(in: database)
      for entry in table.sortedEntries() {
        try entry.key.withUnsafeBytes { k in
          try entry.value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: database, flags: .append) }
        }
      }
    }
  }

  /// The first entry where the in-memory tables and the LMDB tables differ, in table then key order.
  static func firstDifference(
    projection: String, expected tables: [String: MemoryTable], actual databases: [String: Database],
    in txn: Transaction
  ) throws -> EventStore.ReplayResult.Difference? {
    for name in tables.keys.sorted() {
      guard let table = tables[name], let database = databases[name] else { continue }
      let expected = table.sortedEntries()
      var index = 0
      var difference: EventStore.ReplayResult.Difference?
      try txn.withCursor(in: database) { cursor in
        var found = try cursor.move(.first)
        while found || index < expected.count {
          let liveKey = found ? [UInt8](cursor.key) : nil
          let replayEntry = index < expected.count ? expected[index] : nil
          switch (liveKey, replayEntry) {
          case (let live?, let replay?) where live == replay.key:
            let liveValue = [UInt8](cursor.value)
            if liveValue != replay.value {
              difference = EventStore.ReplayResult.Difference(
                projection: projection, table: name, key: live, replayed: replay.value, live: liveValue)
              return
            }
            index += 1
            found = try cursor.move(.next)
          case (let live?, let replay?):
            if live.lexicographicallyPrecedes(replay.key) {
              difference = EventStore.ReplayResult.Difference(
                projection: projection, table: name, key: live, replayed: nil, live: [UInt8](cursor.value))
            } else {
              difference = EventStore.ReplayResult.Difference(
                projection: projection, table: name, key: replay.key, replayed: replay.value, live: nil)
            }
            return
          case (let live?, nil):
            difference = EventStore.ReplayResult.Difference(
              projection: projection, table: name, key: live, replayed: nil, live: [UInt8](cursor.value))
            return
          case (nil, let replay?):
            difference = EventStore.ReplayResult.Difference(
              projection: projection, table: name, key: replay.key, replayed: replay.value, live: nil)
            return
          case (nil, nil):
            return
          }
        }
      }
      if let difference { return difference }
    }
    return nil
  }
}

extension EventStore.ReplayResult {
  /// Where a replayed projection and the live one differ: the first differing entry.
  public struct Difference: Sendable, Hashable, CustomStringConvertible {
    /// The projection.
    public var projection: String
    /// The table.
    public var table: String
    /// The key of the entry.
    public var key: [UInt8]
    /// The replay's value; `nil` when the replay has no such entry.
    public var replayed: [UInt8]?
    /// The live value; `nil` when the live projection has no such entry.
    public var live: [UInt8]?

    /// The projection, table and key in hex, and which side lacks the entry or that the values differ.
    public var description: String {
      let keyText = Hex.string(key)
      let what: String
      switch (replayed, live) {
      case (nil, _): what = "present live but absent from the replay"
      case (_, nil): what = "present in the replay but absent live"
      default:
        what = "different values (replay \(replayed?.count ?? 0) bytes, live \(live?.count ?? 0) bytes)"
      }
      return "projection '\(projection)' table '\(table)' key 0x\(keyText): \(what)"
    }
  }
}
