import Foundation
import LMDB

extension EventStore {
  /// The direction of a range read.
  public enum ReadDirection: Sendable {
    /// Ascending sequence numbers.
    case forward
    /// Descending sequence numbers.
    case backward
  }

  /// The sequence number of the last event; 0 for an empty log.
  /// - Complexity: O(log n).
  public func head() throws -> UInt64 {
    try storage { try environment.read { try WriteBatch.head(in: $0, events: schema.events) } }
  }

  /// The event at `sequence`, or `nil` when there is none.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` when its record is damaged.
  /// - Complexity: O(log n).
  public func event(at sequence: UInt64) throws -> RecordedEvent? {
    try storage {
      try environment.read { txn in
        try withUnsafeBytes(of: sequence) { key in
          try txn.withValue(forKey: key, in: schema.events) { try RecordCodec.decode($0, sequence: sequence) }
        }
      }
    }
  }

  /// Events by sequence range.
  ///
  /// - Parameters:
  ///   - first: the lowest sequence number to return.
  ///   - last: the highest; `nil` for the head.
  ///   - limit: at most this many events.
  ///   - direction: `.backward` returns the highest first (from `last` down).
  /// - Returns: the events in the range, in `direction`'s order, at most `limit` of them.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` for a damaged record, or
  ///   ``EventStoreError/storage(_:)`` when LMDB fails.
  /// - Complexity: O(log n + k); one read transaction.
  public func events(
    from first: UInt64 = 1, through last: UInt64? = nil, limit: Int = .max,
    direction: ReadDirection = .forward
  ) throws -> [RecordedEvent] {
    guard limit > 0 else { return [] }
    let last = last ?? .max
    guard first <= last else { return [] }
    return try storage {
      try environment.read { txn in
        try txn.withCursor(in: schema.events) { cursor in
          var result: [RecordedEvent] = []
          var found: Bool
          switch direction {
          case .forward:
            found = try withUnsafeBytes(of: first) { try cursor.seek($0) }
          case .backward:
            found = try withUnsafeBytes(of: last) { try cursor.seek($0) }
            if found, cursor.key.loadUnaligned(as: UInt64.self) > last {
              found = try cursor.move(.previous)
            } else if !found {
              found = try cursor.move(.last)
            }
          }
          while found && result.count < limit {
            let sequence = cursor.key.loadUnaligned(as: UInt64.self)
            guard sequence >= first && sequence <= last else { break }
            result.append(try RecordCodec.decode(cursor.value, sequence: sequence))
            found = try cursor.move(direction == .forward ? .next : .previous)
          }
          return result
        }
      }
    }
  }

  /// Calls `body` with every event from `first` through `last` (the head when `nil`), in order,
  /// reading in chunks that each use a fresh read transaction, so that a long walk neither holds
  /// old pages nor loads the log whole. Stops when `body` returns `false`.
  /// - Returns: the number of events visited.
  @discardableResult
  public func forEachEvent(
    from first: UInt64 = 1, through last: UInt64? = nil, _ body: (RecordedEvent) throws -> Bool
  ) throws -> Int {
    var next = first
    var visited = 0
    let chunk = max(1, options.replayChunkSize)
    while true {
      let events = try self.events(from: next, through: last, limit: chunk)
      for event in events {
        visited += 1
        guard try body(event) else { return visited }
      }
      guard events.count == chunk, let lastEvent = events.last else { return visited }
      next = lastEvent.sequence + 1
    }
  }

  /// A record as a walk that goes on past damage reads it: its event, or why it cannot be read.
  public enum RecordReading: Sendable {
    /// The record's event.
    case event(RecordedEvent)
    /// A record that does not decode (``EventStoreError/corruptedRecord(sequence:reason:)``):
    /// its sequence and the reason.
    case damaged(sequence: UInt64, reason: String)

    /// The record's sequence.
    public var sequence: UInt64 {
      switch self {
      case .event(let event): event.sequence
      case .damaged(let sequence, _): sequence
      }
    }
  }

  /// Calls `body` with every record from `first` through `last` (the head when `nil`) in
  /// `direction`'s order, its event or, for a damaged record, its sequence and what is wrong
  /// with it, so that one bad record does not hide the others (`log`, `show`, `export
  /// --salvage`). Reads in chunks that each use a fresh read transaction. Stops when `body`
  /// returns `false`.
  /// - Returns: the number of records visited.
  /// - Throws: what `body` throws, or ``EventStoreError/storage(_:)`` when LMDB fails.
  @discardableResult
  public func forEachRecord(
    from first: UInt64 = 1, through last: UInt64? = nil, direction: ReadDirection = .forward,
    _ body: (RecordReading) throws -> Bool
  ) throws -> Int {
    let last = last ?? .max
    guard first <= last else { return 0 }
    let chunk = max(1, options.replayChunkSize)
    var visited = 0
    // The next sequence to read from (forward: the lowest; backward: the highest).
    var next: UInt64 = direction == .forward ? first : last
    while true {
      var readings: [RecordReading] = []
      try storage {
        try environment.read { txn in
          try txn.withCursor(in: schema.events) { cursor in
            var found: Bool
            switch direction {
            case .forward:
              found = try withUnsafeBytes(of: next) { try cursor.seek($0) }
            case .backward:
              found = try withUnsafeBytes(of: next) { try cursor.seek($0) }
              if found, cursor.key.loadUnaligned(as: UInt64.self) > next {
                found = try cursor.move(.previous)
              } else if !found {
                found = try cursor.move(.last)
              }
            }
            while found && readings.count < chunk {
              let sequence = cursor.key.loadUnaligned(as: UInt64.self)
              guard sequence >= first && sequence <= last else { break }
              do {
                readings.append(.event(try RecordCodec.decode(cursor.value, sequence: sequence)))
              } catch EventStoreError.corruptedRecord(let damaged, let reason) {
                readings.append(.damaged(sequence: damaged, reason: reason))
              }
              found = try cursor.move(direction == .forward ? .next : .previous)
            }
          }
        }
      }
      for reading in readings {
        visited += 1
        guard try body(reading) else { return visited }
      }
      guard readings.count == chunk, let end = readings.last?.sequence else { return visited }
      switch direction {
      case .forward:
        guard end < last else { return visited }
        next = end + 1
      case .backward:
        guard end > first else { return visited }
        next = end - 1
      }
    }
  }

  /// The chain value the record at `sequence` carries, read from its stored bytes without
  /// verifying the record (so a damaged record's still reads, unless the damage is in it); `nil`
  /// when there is no such record or it carries none (format 1).
  /// - Complexity: O(log n).
  public func storedChainValue(at sequence: UInt64) throws -> ChainValue? {
    try storage {
      try environment.read { txn in
        try withUnsafeBytes(of: sequence) { key in
          try txn.withValue(forKey: key, in: schema.events) { RecordCodec.storedChain(of: $0) }
        }
      }
    } ?? nil
  }

  /// The sequence of the event with ID `id`, or `nil` when the log holds none.
  /// - Complexity: O(log n).
  public func sequence(ofEventID id: UUID) throws -> UInt64? {
    try storage {
      try environment.read { txn in
        try withUnsafeBytes(of: id.uuid) { key in
          try txn.withValue(forKey: key, in: schema.eventIDs) {
            UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
          }
        }
      }
    }
  }

  /// The streams whose name satisfies `condition`, at most `limit` of them, in name order.
  /// - Complexity: O(s) in the number of streams.
  public func streams(limit: Int = .max, where condition: (StreamID) -> Bool) throws -> [StreamID] {
    try storage {
      try environment.read { txn in
        try txn.withCursor(in: schema.streamEvents) { cursor in
          var found = try cursor.move(.first)
          var streams: [StreamID] = []
          while found && streams.count < limit {
            let stream = StreamID(String(decoding: cursor.key, as: UTF8.self))
            if condition(stream) { streams.append(stream) }
            found = try cursor.move(.nextKey)
          }
          return streams
        }
      }
    }
  }

  /// The current version of `stream` (its number of events); 0 when it does not exist.
  /// - Complexity: O(log n).
  public func version(of stream: StreamID) throws -> UInt64 {
    try storage {
      try environment.read { txn in
        try WriteBatch.streamVersion(of: Array(stream.rawValue.utf8), in: txn, schema: schema)
      }
    }
  }

  /// The events of `stream` from version `first` on, in order.
  /// - Complexity: O(log n + k log n).
  public func events(
    in stream: StreamID, fromVersion first: UInt64 = 1, limit: Int = .max
  ) throws -> [RecordedEvent] {
    guard limit > 0 else { return [] }
    return try storage {
      try environment.read { txn in
        var sequences: [UInt64] = []
        let key = Array(stream.rawValue.utf8)
        try txn.withCursor(in: schema.streamEvents) { cursor in
          guard try key.withUnsafeBytes({ try cursor.seek($0, exact: true) }) else { return }
          var found = true
          while found && sequences.count < limit {
            let entry = Schema.parseStreamEntry(cursor.value)
            if entry.version >= first { sequences.append(entry.sequence) }
            found = try cursor.move(.nextDuplicate)
          }
        }
        return try sequences.map { sequence in
          let event = try withUnsafeBytes(of: sequence) { k in
            try txn.withValue(forKey: k, in: schema.events) { try RecordCodec.decode($0, sequence: sequence) }
          }
          guard let event else {
            throw EventStoreError.corruptedRecord(
              sequence: sequence, reason: "indexed by stream '\(stream)' but not stored")
          }
          return event
        }
      }
    }
  }

  /// Runs `body` on a consistent snapshot of the projections (one read transaction).
  ///
  /// Copy what you need out of the views before returning; they end with the closure.
  public func read<R>(_ body: (StoreSnapshot) throws -> R) throws -> R {
    try storage {
      try environment.read { txn in
        let snapshot = StoreSnapshot(store: self, transaction: txn)
        return try body(snapshot)
      }
    }
  }
}

extension EventStore {
  /// A consistent view of the log's head and every projection, inside one read transaction.
  public final class StoreSnapshot {
    let store: EventStore
    let transaction: Transaction

    init(store: EventStore, transaction: Transaction) {
      self.store = store
      self.transaction = transaction
    }

    /// The sequence number of the last event in this snapshot.
    public func head() throws -> UInt64 {
      try storage { try WriteBatch.head(in: transaction, events: store.schema.events) }
    }

    /// The current version of `stream` in this snapshot (its number of events, skipped ones
    /// included); 0 when it does not exist. An append that expects it fails if the stream moved
    /// after the snapshot.
    /// - Complexity: O(log n).
    public func version(of stream: StreamID) throws -> UInt64 {
      try storage {
        try WriteBatch.streamVersion(of: Array(stream.rawValue.utf8), in: transaction, schema: store.schema)
      }
    }

    /// The tables of the projection named `name`.
    /// - Throws: ``EventStoreError/invalidProjection(_:)`` when no such projection is registered.
    public func projection(_ name: String) throws -> ProjectionReader {
      guard let databases = store.projectionDatabases[name] else {
        if store.absentProjections.contains(name) {
          throw EventStoreError.invalidProjection(
            "the environment holds no projection '\(name)' (written by an app without it; a writable open builds it)"
          )
        }
        throw EventStoreError.invalidProjection("no projection named '\(name)' is registered")
      }
      return ProjectionReader(
        projection: name, backend: .lmdb(transaction, databases), rowDatesSince1970: store.rowDatesSince1970)
    }

    /// The sequence number the projection named `name` is up to date with; 0 when never run.
    public func checkpoint(of name: String) throws -> UInt64 {
      try storage {
        guard let checkpoint = try WriteBatch.checkpoint(of: name, in: transaction, schema: store.schema)
        else {
          return 0
        }
        return checkpoint.isFollowingHead
          ? try WriteBatch.head(in: transaction, events: store.schema.events) : checkpoint.sequence
      }
    }
  }
}

@available(*, unavailable)
extension EventStore.StoreSnapshot: Sendable {}
