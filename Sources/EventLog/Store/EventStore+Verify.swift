import Foundation
import LMDB

extension EventStore {
  /// What ``EventStore/verify(progress:)`` found.
  public struct VerificationReport: Sendable, Hashable {
    /// One problem, with the event it concerns when there is one.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
      /// The sequence number concerned; `nil` for problems of the whole log.
      public var sequence: UInt64?
      /// What is wrong.
      public var problem: String

      /// The problem, after `event 12: ` when it concerns one event.
      public var description: String {
        sequence.map { "event \($0): \(problem)" } ?? problem
      }
    }

    /// The number of events examined.
    public var events: UInt64
    /// The problems found (at most ``EventStore/maximumReportedProblems``).
    public var problems: [Problem]
    /// The events the projections skip (unreadable by this build, or breaking the domain's
    /// rules), at most ``EventStore/maximumReportedProblems``. Skipping them is not a problem: they
    /// are stored as they came and reported here.
    public var skipped: [EventStore.SkippedEvent] = []
    /// The projections this build could not check: another app's (in the environment, unknown to
    /// the store's schema) and the schema's own that the environment does not hold. Not problems.
    public var uncheckedProjections: [VerificationReport.UncheckedProjection] = []
    /// The events this build could not check against their app's rules, by type: those of types
    /// (or schema versions) its schema does not read. Not problems.
    public var uncheckedEvents: [VerificationReport.UncheckedEvents] = []
    /// The last record's value in the hash chain, when the log has one: what an anchor (the
    /// server's attested heads, an export's manifest, a signature) is compared with.
    public var chainHead: ChainHead?
    /// Records stored before environment format 5 and not yet rewritten (a read-only open before
    /// the upgrade): the chain does not cover them. Not problems.
    public var unchainedRecords: UInt64 = 0
    /// Whether nothing is wrong.
    public var isClean: Bool { problems.isEmpty }
    /// Whether everything was checked: nothing is in ``uncheckedProjections`` or ``uncheckedEvents``.
    public var isComplete: Bool { uncheckedProjections.isEmpty && uncheckedEvents.isEmpty }
  }
}

extension EventStore.VerificationReport {
  /// A record's place and value in the hash chain.
  public struct ChainHead: Sendable, Hashable, CustomStringConvertible {
    /// The record's sequence number.
    public var sequence: UInt64
    /// Its chain value.
    public var value: ChainValue

    /// Creates the entry.
    public init(sequence: UInt64, value: ChainValue) {
      self.sequence = sequence
      self.value = value
    }

    /// `event 42 7f3a…` (the value in full).
    public var description: String { "event \(sequence) \(value.hex)" }
  }
}

extension EventStore.VerificationReport {
  /// A projection that a store cannot check, and why: it is neither damage nor a match.
  public struct UncheckedProjection: Sendable, Hashable, CustomStringConvertible {
    /// Why a projection is not checked.
    public enum Reason: Sendable, Hashable {
      /// The environment holds it, but the store's schema does not know it (another app's).
      case unknownToThisBuild
      /// The store's schema has it, but the environment does not hold it (opened read-only; written
      /// by an app without it, or before it existed): the next writable open builds it.
      case notInEnvironment
      /// It has folded the log only through event `checkpoint`: another build appended without it
      /// since (and pinned its checkpoint there). It is compared as of that event; the next
      /// writable open catches it up.
      case behind(checkpoint: UInt64)
    }

    /// The projection's name.
    public var name: String
    /// Its stored version, when the environment holds it.
    public var version: UInt32?
    /// Why it is not checked.
    public var reason: Reason

    /// Creates the entry.
    public init(name: String, version: UInt32?, reason: Reason) {
      self.name = name
      self.version = version
      self.reason = reason
    }

    /// Why, in words: `this build does not know it` or `not in this environment: …`.
    public var explanation: String {
      switch reason {
      case .unknownToThisBuild: "this build does not know it"
      case .notInEnvironment: "not in this environment (written without it; a writable open builds it)"
      case .behind(let checkpoint):
        "behind the head: folded through event \(checkpoint), another build appended since (compared as of "
          + "event \(checkpoint); the next writable open catches it up)"
      }
    }

    /// `projection 'users' (version 1): this build does not know it`.
    public var description: String {
      "projection '\(name)'\(version.map { " (version \($0))" } ?? ""): \(explanation)"
    }
  }
}

extension EventStore.VerificationReport {
  /// Events of one type that a store could not check against their app's rules.
  public struct UncheckedEvents: Sendable, Hashable, CustomStringConvertible {
    /// The event type.
    public var type: String
    /// How many events of the type.
    public var count: UInt64
    /// Why, for the first of them (the admission's words): `this build does not know the event type 'UserRegistered'`.
    public var reason: String

    /// Creates the entry.
    public init(type: String, count: UInt64, reason: String) {
      self.type = type
      self.count = count
      self.reason = reason
    }

    /// `3 UserRegistered event(s): this build does not know the event type 'UserRegistered'`.
    public var description: String { "\(count) \(type) event(s): \(reason)" }
  }
}

extension EventStore {
  /// The most problems one verification reports.
  public static let maximumReportedProblems = 1_000

  /// Checks the whole log: every record's checksum and sequence, the gap-free sequence, stream
  /// versions and the stream and ID indexes, projection checkpoints, and that the projections
  /// equal a replay.
  ///
  /// Damaged records are reported and skipped, so one bad event does not hide the others. What
  /// this build cannot check is reported as such, not as a problem: another app's projections
  /// (their checkpoints are checked against the head, their tables are not read), the schema's
  /// projections the environment does not hold, and events of types the schema does not read
  /// (``EventStore/VerificationReport/uncheckedProjections``, ``EventStore/VerificationReport/uncheckedEvents``).
  /// - Complexity: O(n log n); memory O(number of streams + size of the projections).
  public func verify(progress: ((EventStore.ProgressReport) -> Void)? = nil) throws -> VerificationReport {
    let clock = ContinuousClock()
    let start = clock.now
    var problems: [VerificationReport.Problem] = []
    func report(_ sequence: UInt64?, _ problem: String) {
      if problems.count < Self.maximumReportedProblems {
        problems.append(.init(sequence: sequence, problem: problem))
      }
    }
    let head = try self.head()
    let storedFormat = try storage { try environment.read { try Self.storedFormat(in: $0, schema: schema) } }
    let skipped = try skippedEvents(limit: Self.maximumReportedProblems)
    let skippedSequences = try storage {
      try environment.read { txn in try schema.skippedSequences(from: 1, through: head, in: txn) }
    }
    var unchecked: [String: VerificationReport.UncheckedEvents] = [:]
    func noteUnchecked(_ type: String, _ reason: String) {
      unchecked[type, default: VerificationReport.UncheckedEvents(type: type, count: 0, reason: reason)]
        .count += 1
    }
    var streamVersions: [String: UInt64] = [:]
    var expected: UInt64 = 1
    var damaged = false
    var count: UInt64 = 0
    // The chain: each record's value must follow from the stored value of the record before it
    // (so one altered record is reported once, where the chain breaks).
    var previousChain = ChainValue.zero
    var chainHead: VerificationReport.ChainHead?
    var unchained: UInt64 = 0
    // What the audit indexes must hold.
    var typeTotals: [String: UInt64] = [:]
    var withProvenance = 0
    let chunk = max(1, options.replayChunkSize)
    var done = false
    while !done {
      try storage {
        try environment.read { txn in
          try txn.withCursor(in: schema.events) { cursor in
            var found = try withUnsafeBytes(of: expected) { try cursor.seek($0) }
            var visited = 0
            while found && visited < chunk {
              let sequence = cursor.key.loadUnaligned(as: UInt64.self)
              // Events appended since the verification began are not part of what it checks.
              if sequence > head {
                found = false
                break
              }
              if sequence != expected {
                report(expected, "missing: the sequence jumps from \(expected - 1) to \(sequence)")
              }
              count += 1
              visited += 1
              expected = sequence + 1
              let record = cursor.value
              if let stored = RecordCodec.storedChain(of: record) {
                let computed = RecordCodec.chainValue(
                  of: RecordCodec.chainedBody(of: record), after: previousChain)
                if computed != stored {
                  report(
                    sequence,
                    "the hash chain breaks here: the record's chain value \(stored.hex.prefix(16))… does not follow "
                      + "from its bytes and the value before it (computed \(computed.hex.prefix(16))…): the record was "
                      + "changed, or one before it removed or replaced")
                }
                previousChain = stored
                chainHead = VerificationReport.ChainHead(sequence: sequence, value: stored)
              } else if RecordCodec.format(of: record) == 1 {
                unchained += 1
                if storedFormat == Schema.formatVersion {
                  report(
                    sequence, "a record of format 1, without a chain value, in an environment of format 5")
                }
              }
              do {
                let event = try RecordCodec.decode(cursor.value, sequence: sequence)
                typeTotals[event.type, default: 0] += 1
                if Schema.deviceIndexKey(of: event.provenance, own: deviceID) != nil { withProvenance += 1 }
                let previous = streamVersions[event.stream.rawValue] ?? 0
                if event.version != previous + 1 && !damaged {
                  report(
                    sequence, "stream '\(event.stream)' goes from version \(previous) to \(event.version)")
                }
                streamVersions[event.stream.rawValue] = event.version
                let indexed = try withUnsafeBytes(of: event.id.uuid) { k in
                  try txn.withValue(forKey: k, in: schema.eventIDs) {
                    UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
                  }
                }
                if indexed != sequence {
                  report(
                    sequence,
                    "the ID index maps event \(event.id.lowercasedString) to \(indexed.map(String.init) ?? "nothing")"
                  )
                }
                // An event the projections folded must keep the domain's rules (a log written
                // before they were checked, or edited by hand, may hold one that does not). One
                // this build cannot read is not checked: its app's rules are not here. A JSON
                // payload is judged in binary (`PayloadForms`).
                if let admission {
                  switch payloadForms.verdict(on: event, admission: admission, in: txn).verdict {
                  case .admitted: break
                  case .unreadable(let reason): noteUnchecked(event.type, reason)
                  case .invalid(let reason):
                    if !skippedSequences.contains(sequence) {
                      report(
                        sequence, "the projections fold an event that breaks the domain's rules: \(reason)")
                    }
                  }
                }
              } catch let error as EventStoreError {
                damaged = true
                if case .corruptedRecord(_, let reason) = error {
                  report(sequence, "damaged record: \(reason)")
                } else {
                  report(sequence, "\(error)")
                }
              }
              found = try cursor.move(.next)
            }
            if !found { done = true }
          }
        }
      }
      progress?(
        EventStore.ProgressReport(completed: min(count, head), total: head, elapsed: clock.now - start))
    }
    if count != head && !problems.contains(where: { $0.problem.hasPrefix("missing") }) {
      report(nil, "the log holds \(count) events but its head is \(head)")
    }
    try verifyIndexes(head: head, streamVersions: streamVersions, damaged: damaged, report: report)
    if !damaged && count == head {
      try verifyAuditIndexes(
        head: head, typeTotals: typeTotals, withProvenance: withProvenance, report: report)
    }
    let uncheckedProjections = try verifyProjections(damaged: damaged, report: report)
    return VerificationReport(
      events: count, problems: problems, skipped: skipped, uncheckedProjections: uncheckedProjections,
      uncheckedEvents: unchecked.values.sorted { $0.type < $1.type }, chainHead: chainHead,
      unchainedRecords: unchained)
  }

  /// The projections this store cannot check: those the environment holds that its schema does
  /// not know (with their stored versions), then the schema's own that the environment does not
  /// hold (``absentProjections``).
  public func uncheckedProjections() throws -> [VerificationReport.UncheckedProjection] {
    try storage { try environment.read { txn in try uncheckedProjections(in: txn).map(\.projection) } }
  }

  /// ``uncheckedProjections()`` in `txn`, each with its stored checkpoint (`nil` when absent or
  /// not readable).
  private func uncheckedProjections(
    in txn: Transaction
  ) throws -> [(projection: VerificationReport.UncheckedProjection, checkpoint: Schema.Checkpoint?)] {
    let known = Set(projections.map(\.name))
    var found: [(VerificationReport.UncheckedProjection, Schema.Checkpoint?)] = []
    try txn.withCursor(in: schema.checkpoints) { cursor in
      var more = try cursor.move(.first)
      while more {
        let name = String(decoding: cursor.key, as: UTF8.self)
        if !known.contains(name) {
          let checkpoint = Schema.decodeCheckpoint(cursor.value)
          found.append(
            (
              VerificationReport.UncheckedProjection(
                name: name, version: checkpoint?.version, reason: .unknownToThisBuild),
              checkpoint
            ))
        }
        more = try cursor.move(.next)
      }
    }
    for name in absentProjections {
      found.append(
        (VerificationReport.UncheckedProjection(name: name, version: nil, reason: .notInEnvironment), nil))
    }
    return found
  }

  /// Checks the ID and stream indexes against the head of their own read transaction (events may
  /// have been appended since the log was read), and each stream's indexed version as of `head`
  /// against the versions the log showed up to `head`.
  private func verifyIndexes(
    head: UInt64, streamVersions: [String: UInt64], damaged: Bool, report: (UInt64?, String) -> Void
  ) throws {
    try storage {
      try environment.read { txn in
        let current = try WriteBatch.head(in: txn, events: schema.events)
        let idCount = try txn.count(in: schema.eventIDs)
        if idCount != Int(current) {
          report(nil, "the ID index has \(idCount) entries for \(current) events")
        }
        var indexed = 0
        try txn.withCursor(in: schema.streamEvents) { cursor in
          var found = try cursor.move(.first)
          var currentStream: [UInt8] = []
          var expectedVersion: UInt64 = 1
          /// The stream's last indexed version among events up to `head`.
          var versionAtHead: UInt64 = 0
          func finishStream() {
            guard !currentStream.isEmpty, !damaged else { return }
            let name = String(decoding: currentStream, as: UTF8.self)
            if let version = streamVersions[name], version != versionAtHead {
              report(
                nil,
                "stream '\(name)' is indexed up to version \(versionAtHead) but its events reach \(version)")
            }
          }
          while found {
            let stream = [UInt8](cursor.key)
            if stream != currentStream {
              finishStream()
              currentStream = stream
              expectedVersion = 1
              versionAtHead = 0
            }
            let entry = Schema.parseStreamEntry(cursor.value)
            if entry.version != expectedVersion {
              report(
                entry.sequence,
                "stream '\(String(decoding: stream, as: UTF8.self))' index skips from version \(expectedVersion - 1) to \(entry.version)"
              )
            }
            if entry.sequence > current {
              report(entry.sequence, "the stream index points past the head \(current)")
            }
            if entry.sequence <= head { versionAtHead = entry.version }
            expectedVersion = entry.version + 1
            indexed += 1
            found = try cursor.move(.next)
          }
          finishStream()
        }
        if indexed != Int(current) {
          report(nil, "the stream index has \(indexed) entries for \(current) events")
        }
      }
    }
  }

  /// Checks the audit indexes against the log through `head`: every time-index entry names an
  /// event recorded at its time, every device-index entry an event of that origin, one entry of
  /// each per event (of known origin), and the counts per type (appends may go on meanwhile:
  /// entries past `head` are not counted).
  private func verifyAuditIndexes(
    head: UInt64, typeTotals: [String: UInt64], withProvenance: Int, report: (UInt64?, String) -> Void
  ) throws {
    guard try hasAuditIndexes, let byTime = schema.byTime, let byDevice = schema.byDevice else { return }
    try storage {
      try environment.read { txn in
        func record(_ sequence: UInt64) throws -> RecordedEvent? {
          try withUnsafeBytes(of: sequence) { key in
            try txn.withValue(forKey: key, in: schema.events) {
              try RecordCodec.decode($0, sequence: sequence)
            }
          }
        }
        var timed = 0
        try txn.withCursor(in: byTime) { cursor in
          var found = try cursor.move(.first)
          while found {
            let (micros, sequence) = Schema.parseTimeKey(cursor.key)
            if sequence <= head {
              timed += 1
              let event = try record(sequence)
              if event.map({ RecordCodec.microseconds($0.recordedAt) }) != micros {
                report(
                  sequence,
                  "the time index lists it at \(ISO8601.string(from: RecordCodec.date(microseconds: micros))), "
                    + (event.map { "but it was recorded at \(ISO8601.string(from: $0.recordedAt))" }
                      ?? "but the log does not hold it"))
              }
            }
            found = try cursor.move(.next)
          }
        }
        if timed != Int(head) { report(nil, "the time index has \(timed) entries for \(head) events") }
        var devices = 0
        try txn.withCursor(in: byDevice) { cursor in
          var found = try cursor.move(.first)
          while found {
            let device = UUID(uuid: cursor.key.loadUnaligned(as: uuid_t.self))
            let sequence = UInt64(bigEndian: cursor.value.loadUnaligned(as: UInt64.self))
            if sequence <= head {
              devices += 1
              if let event = try record(sequence),
                Schema.deviceIndexKey(of: event.provenance, own: deviceID) != device
              {
                report(
                  sequence,
                  "the device index lists it as device \(device.lowercasedString)'s, which its record does not say"
                )
              }
            }
            found = try cursor.move(.next)
          }
        }
        if devices != withProvenance {
          report(
            nil,
            "the device index has \(devices) entries for \(withProvenance) events of other devices (or of unknown origin)"
          )
        }
      }
    }
    // Appends since the pass began count too: compare only when the log did not grow, with the
    // head and the counts read in one transaction (an append between two reads moved them apart).
    guard let typeCountsDatabase = schema.typeCounts else { return }
    let snapshot = try storage {
      try environment.read { txn in
        (
          head: try WriteBatch.head(in: txn, events: schema.events),
          counts: try Self.typeCounts(in: txn, database: typeCountsDatabase)
        )
      }
    }
    guard snapshot.head == head else { return }
    let counted = snapshot.counts
    for (type, total) in typeTotals where counted[type] != total {
      report(nil, "the type counts say \(counted[type] ?? 0) '\(type)' events; the log holds \(total)")
    }
    for (type, stored) in counted where typeTotals[type] == nil && stored > 0 {
      report(nil, "the type counts say \(stored) '\(type)' events; the log holds none")
    }
  }

  /// Checks each projection's checkpoint against the head of the same read transaction, then the
  /// projections against a replay (``compare(with:)``).
  /// - Returns: the projections it could not check at the head (``EventStore/ReplayResult/Comparison/notCompared``).
  private func verifyProjections(
    damaged: Bool, report: (UInt64?, String) -> Void
  ) throws -> [VerificationReport.UncheckedProjection] {
    let unchecked = try storage {
      try environment.read { txn in
        let head = try WriteBatch.head(in: txn, events: schema.events)
        let unchecked = try uncheckedProjections(in: txn)
        // Another app's projection: its checkpoint must be readable and not past the head; it may
        // be behind (this build's writers pin it to the head they find, `Docs/OnDiskFormat.md`).
        for (projection, checkpoint) in unchecked where projection.reason == .unknownToThisBuild {
          guard let checkpoint else {
            report(nil, "projection '\(projection.name)' has a checkpoint that is not 12 bytes")
            continue
          }
          if !checkpoint.isFollowingHead && checkpoint.sequence > head {
            report(
              checkpoint.sequence,
              "projection '\(projection.name)' checkpoint \(checkpoint.sequence) is past the head \(head)")
          }
        }
        for projection in projections where !absentProjections.contains(projection.name) {
          guard let stored = try WriteBatch.checkpoint(of: projection.name, in: txn, schema: schema) else {
            // A log that holds no event yet (created, then stopped before its first commit
            // finished) needs no checkpoint: its projections are empty, as the comparison below
            // checks.
            if head > 0 { report(nil, "projection '\(projection.name)' has no checkpoint") }
            continue
          }
          // One behind the head is not damage: another build appended without it and pinned its
          // checkpoint; the comparison below checks it as of that checkpoint.
          let checkpoint = stored.resolved(atHead: head)
          if checkpoint.sequence > head {
            report(
              checkpoint.sequence,
              "projection '\(projection.name)' checkpoint \(checkpoint.sequence) is past the head \(head)")
          }
          if checkpoint.version != projection.version {
            report(
              nil,
              "projection '\(projection.name)' is stored at version \(checkpoint.version), code is at \(projection.version)"
            )
          }
        }
        return unchecked.map(\.projection)
      }
    }
    guard !damaged, projections.count > absentProjections.count else { return unchecked }
    do {
      let comparison = try compare(with: try self.replay())
      if let difference = comparison.difference {
        // A replay writes format 4's rows; rows of an older format not rebuilt yet (a read-only
        // open) may hold dates as the seconds since 1970, until the first writable open.
        let format =
          rowDatesSince1970
          ? " (the rows are of format 3 or older, whose dates were the seconds since 1970: the first writable open rebuilds them)"
          : ""
        report(nil, "the projections differ from a replay: \(difference)\(format)")
      }
      return comparison.notCompared
    } catch let error as EventStoreError {
      if case .projectionFailed(_, let sequence, _) = error {
        report(sequence, "replay failed: \(error)")
      } else {
        report(nil, "replay failed: \(error)")
      }
    }
    return unchecked
  }
}
