import Foundation
import LMDB

/// The audit indexes (format 5): the log in time order (`by_time`), each origin device's events
/// (`by_device`) and the events per type (`type_counts`), kept in the transaction that writes the
/// events, so that an auditor's question about a time window or a device reads only its answer.
extension EventStore {
  /// How many events one transaction of the index build reads.
  static let auditIndexChunk = 100_000

  /// Builds the audit indexes of a log that does not have them yet (an environment upgraded to
  /// format 5), in transactions of `chunk` events, each noting how far it got in `meta`
  /// (``Schema/auditIndexesKey``), so that a crash resumes where it stopped; a new environment
  /// notes them complete in its first transaction. The writer keeps them from then on.
  /// - Parameters:
  ///   - environment: the environment.
  ///   - schema: its databases.
  ///   - own: its device ID, whose events the device index leaves out.
  ///   - chunk: events per transaction.
  ///   - transactions: at most this many transactions (tests stop a build half-way with it).
  /// - Throws: ``EventStoreError`` for a damaged record or a storage failure; the next writable
  ///   open resumes.
  /// - Complexity: O(n log n) once, in the log's length.
  static func buildAuditIndexes(
    environment: Environment, schema: Schema, device own: UUID?, chunk: Int = auditIndexChunk,
    transactions: Int = .max
  ) throws {
    guard let byTime = schema.byTime, let byDevice = schema.byDevice, schema.typeCounts != nil else { return }
    // The common case, every open after the first: complete, which a read says.
    let complete = try storage {
      try environment.read { txn in
        try txn.value(forKey: Schema.auditIndexesKey, in: schema.meta)
          == withUnsafeBytes(
            of: UInt64.max.littleEndian, Array.init)
      }
    }
    if complete { return }
    for _ in 0..<transactions {
      let done = try storage {
        try environment.write { txn -> Bool in
          let mark: UInt64? = try txn.value(forKey: Schema.auditIndexesKey, in: schema.meta).flatMap {
            bytes in
            bytes.count == 8
              ? bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } : nil
          }
          if mark == .max { return true }
          if mark == nil {
            // Nothing of a build before this one counts: start from empty indexes.
            try txn.removeAll(in: byTime)
            try txn.removeAll(in: byDevice)
            if let typeCounts = schema.typeCounts { try txn.removeAll(in: typeCounts) }
          }
          let first = (mark ?? 0) + 1
          // The latest time indexed so far: a key at or after it is appended.
          var latest: Int64 =
            try txn.withCursor(in: byTime) { cursor in
              try cursor.move(.last) ? Schema.parseTimeKey(cursor.key).microseconds : nil
            } ?? .min
          var counts: [String: UInt64] = [:]
          var last = first - 1
          var visited = 0
          var entries: [(sequence: UInt64, micros: Int64, device: UUID?)] = []
          try txn.withCursor(in: schema.events) { cursor in
            var found = try withUnsafeBytes(of: first) { try cursor.seek($0) }
            while found && visited < chunk {
              let sequence = cursor.key.loadUnaligned(as: UInt64.self)
              let event = try RecordCodec.decode(cursor.value, sequence: sequence)
              entries.append(
                (
                  sequence, RecordCodec.microseconds(event.recordedAt),
                  Schema.deviceIndexKey(of: event.provenance, own: own)
                ))
              counts[event.type, default: 0] += 1
              last = sequence
              visited += 1
              found = try cursor.move(.next)
            }
            if !found { visited = -1 }
          }
          for entry in entries {
            try WriteBatch.indexForAudit(
              sequence: entry.sequence, microseconds: entry.micros, lastInTime: entry.micros >= latest,
              device: entry.device, in: txn, schema: schema)
            latest = max(latest, entry.micros)
          }
          try WriteBatch.addTypeCounts(counts, in: txn, schema: schema)
          let complete = visited < 0
          var value = (complete ? UInt64.max : last).littleEndian
          try Schema.auditIndexesKey.withUnsafeBytes { k in
            try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: schema.meta) }
          }
          return complete
        }
      }
      if done { return }
    }
  }

  /// Whether the audit indexes hold every event (a read-only open of an environment before
  /// format 5, or one whose first writable open has not built them, has none).
  var hasAuditIndexes: Bool {
    get throws {
      guard schema.byTime != nil, schema.byDevice != nil, schema.typeCounts != nil else { return false }
      return try storage {
        try environment.read { txn in
          try txn.value(forKey: Schema.auditIndexesKey, in: schema.meta)
            == withUnsafeBytes(
              of: UInt64.max.littleEndian, Array.init)
        }
      }
    }
  }

  /// The sequences of the events recorded from `start` through `end` (either open), ascending.
  ///
  /// Reads the time index when the environment has it, else scans the log.
  /// - Complexity: O(log n + k) with the index, for k events in the window, plus sorting them.
  public func sequences(recordedFrom start: Date?, through end: Date?) throws -> [UInt64] {
    let low = start.map(RecordCodec.microseconds) ?? .min
    let high = end.map(RecordCodec.microseconds) ?? .max
    guard low <= high else { return [] }
    guard try hasAuditIndexes, let byTime = schema.byTime else {
      var found: [UInt64] = []
      try forEachEvent { event in
        let micros = RecordCodec.microseconds(event.recordedAt)
        if micros >= low && micros <= high { found.append(event.sequence) }
        return true
      }
      return found
    }
    var sequences: [UInt64] = []
    try storage {
      try environment.read { txn in
        try txn.withCursor(in: byTime) { cursor in
          var key = Schema.timeKey(microseconds: low, sequence: 0)
          var found = try withUnsafeBytes(of: &key) { try cursor.seek($0) }
          while found {
            let (micros, sequence) = Schema.parseTimeKey(cursor.key)
            if micros > high { break }
            sequences.append(sequence)
            found = try cursor.move(.next)
          }
        }
      }
    }
    sequences.sort()
    return sequences
  }

  /// The sequences of the events that `device` first recorded (their provenance), ascending.
  ///
  /// Reads the device index when the environment has it (for this environment's own device,
  /// which the index leaves out: every sequence it does not list), else scans the log.
  /// - Complexity: O(log n + k) with the index, for k such events (O(n) in the log's length for
  ///   this environment's own device); a scan of the log without it.
  public func sequences(fromDevice device: UUID) throws -> [UInt64] {
    guard try hasAuditIndexes, let byDevice = schema.byDevice else {
      var found: [UInt64] = []
      try forEachEvent { event in
        if event.provenance?.device == device { found.append(event.sequence) }
        return true
      }
      return found
    }
    if device == deviceID {
      let (head, others) = try storage {
        try environment.read { txn in
          (try WriteBatch.head(in: txn, events: schema.events), try Self.allSequences(in: byDevice, txn: txn))
        }
      }
      var own: [UInt64] = []
      own.reserveCapacity(Int(head) - others.count)
      var next = others.startIndex
      for sequence in 1...max(1, head) where head > 0 {
        while next < others.endIndex && others[next] < sequence { next += 1 }
        if next < others.endIndex && others[next] == sequence { continue }
        own.append(sequence)
      }
      return own
    }
    var sequences: [UInt64] = []
    try storage {
      try environment.read { txn in
        try txn.withCursor(in: byDevice) { cursor in
          var found = try withUnsafeBytes(of: device.uuid) { try cursor.seek($0, exact: true) }
          while found {
            sequences.append(UInt64(bigEndian: cursor.value.loadUnaligned(as: UInt64.self)))
            found = try cursor.move(.nextDuplicate)
          }
        }
      }
    }
    return sequences
  }

  /// Every sequence the device index lists, ascending.
  private static func allSequences(in byDevice: Database, txn: Transaction) throws -> [UInt64] {
    try txn.withCursor(in: byDevice) { cursor in
      var sequences: [UInt64] = []
      var found = try cursor.move(.first)
      while found {
        sequences.append(UInt64(bigEndian: cursor.value.loadUnaligned(as: UInt64.self)))
        found = try cursor.move(.next)
      }
      return sequences.sorted()
    }
  }

  /// The devices the log's events come from, with how many events each first recorded (this
  /// environment's own device included; events of unknown origin are not counted).
  /// - Complexity: O(d) with the device index, for d devices; a scan of the log without it.
  public func originDevices() throws -> [(device: UUID, events: Int)] {
    guard try hasAuditIndexes, let byDevice = schema.byDevice else {
      var counts: [UUID: Int] = [:]
      try forEachEvent { event in
        if let device = event.provenance?.device { counts[device, default: 0] += 1 }
        return true
      }
      return counts.map { ($0.key, $0.value) }.sorted { $0.device.byteOrder < $1.device.byteOrder }
    }
    let (head, listed) = try storage {
      try environment.read { txn in
        let head = try WriteBatch.head(in: txn, events: schema.events)
        let listed = try txn.withCursor(in: byDevice) { cursor in
          var devices: [(UUID, Int)] = []
          var found = try cursor.move(.first)
          while found {
            let device = UUID(uuid: cursor.key.loadUnaligned(as: uuid_t.self))
            devices.append((device, try cursor.duplicateCount()))
            found = try cursor.move(.nextKey)
          }
          return devices
        }
        return (head, listed)
      }
    }
    var devices = listed.filter { $0.0 != RecordCodec.unknownDevice }
    let own = Int(head) - listed.reduce(0) { $0 + $1.1 }
    if let deviceID, own > 0 { devices.append((deviceID, own)) }
    return devices.sorted { $0.0.byteOrder < $1.0.byteOrder }.map { (device: $0.0, events: $0.1) }
  }

  /// How many events of each type the log holds.
  /// - Complexity: O(t) with the index, for t types; a scan of the log without it.
  public func eventCountsByType() throws -> [String: UInt64] {
    guard try hasAuditIndexes, let typeCounts = schema.typeCounts else {
      var counts: [String: UInt64] = [:]
      try forEachEvent { event in
        counts[event.type, default: 0] += 1
        return true
      }
      return counts
    }
    return try storage { try environment.read { try Self.typeCounts(in: $0, database: typeCounts) } }
  }

  /// The type counts index as `txn` sees it.
  static func typeCounts(in txn: Transaction, database: Database) throws -> [String: UInt64] {
    try txn.withCursor(in: database) { cursor in
      var counts: [String: UInt64] = [:]
      var found = try cursor.move(.first)
      while found {
        if cursor.value.count == 8 {
          counts[String(decoding: cursor.key, as: UTF8.self)] = UInt64(
            littleEndian: cursor.value.loadUnaligned(as: UInt64.self))
        }
        found = try cursor.move(.next)
      }
      return counts
    }
  }

  /// The events at `sequences` (ascending or not), read in chunks of read transactions; a
  /// sequence the log does not hold is left out.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` for a damaged record.
  public func events(at sequences: [UInt64]) throws -> [RecordedEvent] {
    var events: [RecordedEvent] = []
    events.reserveCapacity(sequences.count)
    try forEachRecord(at: sequences) { reading in
      switch reading {
      case .event(let event): events.append(event)
      case .damaged(let sequence, let reason):
        throw EventStoreError.corruptedRecord(sequence: sequence, reason: reason)
      }
      return true
    }
    return events
  }

  /// Calls `body` with the record at each of `sequences`, in their order (its event, or what is
  /// wrong with it), reading in chunks of read transactions; a sequence the log does not hold is
  /// left out. Stops when `body` returns `false`.
  /// - Returns: the number of records visited.
  /// - Throws: what `body` throws, or ``EventStoreError/storage(_:)`` when LMDB fails.
  @discardableResult
  public func forEachRecord(at sequences: [UInt64], _ body: (RecordReading) throws -> Bool) throws -> Int {
    var start = 0
    var visited = 0
    while start < sequences.count {
      let end = min(sequences.count, start + max(1, options.replayChunkSize))
      var readings: [RecordReading] = []
      try storage {
        try environment.read { txn in
          for sequence in sequences[start..<end] {
            do {
              let event = try withUnsafeBytes(of: sequence) { key in
                try txn.withValue(forKey: key, in: schema.events) {
                  try RecordCodec.decode($0, sequence: sequence)
                }
              }
              if let event { readings.append(.event(event)) }
            } catch EventStoreError.corruptedRecord(let damaged, let reason) {
              readings.append(.damaged(sequence: damaged, reason: reason))
            }
          }
        }
      }
      for reading in readings {
        visited += 1
        guard try body(reading) else { return visited }
      }
      start = end
    }
    return visited
  }
}
