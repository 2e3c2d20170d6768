import Foundation
import LMDB

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
  public var skipped: [SkippedEvent] = []
  /// Whether nothing is wrong.
  public var ok: Bool { problems.isEmpty }
}

extension EventStore {
  /// The most problems one verification reports.
  public static let maximumReportedProblems = 1_000

  /// Checks the whole log: every record's checksum and sequence, the gap-free sequence, stream
  /// versions and the stream and ID indexes, projection checkpoints, and that the projections
  /// equal a replay.
  ///
  /// Damaged records are reported and skipped, so one bad event does not hide the others.
  /// - Complexity: O(n log n); memory O(number of streams + size of the projections).
  public func verify(progress: ((ProgressReport) -> Void)? = nil) throws -> VerificationReport {
    let clock = ContinuousClock()
    let start = clock.now
    var problems: [VerificationReport.Problem] = []
    func report(_ sequence: UInt64?, _ problem: String) {
      if problems.count < Self.maximumReportedProblems {
        problems.append(.init(sequence: sequence, problem: problem))
      }
    }
    let head = try self.head()
    let skipped = try skippedEvents(limit: Self.maximumReportedProblems)
    let skippedSequences = try storage {
      try environment.read { txn in try schema.skippedSequences(from: 1, through: head, in: txn) }
    }
    var streamVersions: [String: UInt64] = [:]
    var expected: UInt64 = 1
    var damaged = false
    var count: UInt64 = 0
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
              do {
                let event = try RecordCodec.decode(cursor.value, sequence: sequence)
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
                // before they were checked, or edited by hand, may hold one that does not).
                if let admission, !skippedSequences.contains(sequence),
                  let reason = payloadForms.verdict(on: event, admission: admission, in: txn).verdict.reason
                {
                  report(sequence, "the projections fold an event that breaks the domain's rules: \(reason)")
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
      progress?(ProgressReport(completed: min(count, head), total: head, elapsed: clock.now - start))
    }
    if count != head && !problems.contains(where: { $0.problem.hasPrefix("missing") }) {
      report(nil, "the log holds \(count) events but its head is \(head)")
    }
    try verifyIndexes(head: head, streamVersions: streamVersions, damaged: damaged, report: report)
    try verifyProjections(damaged: damaged, report: report)
    return VerificationReport(events: count, problems: problems, skipped: skipped)
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

  /// Checks each projection's checkpoint against the head of the same read transaction, then the
  /// projections against a replay.
  private func verifyProjections(damaged: Bool, report: (UInt64?, String) -> Void) throws {
    try storage {
      try environment.read { txn in
        let head = try WriteBatch.head(in: txn, events: schema.events)
        for projection in projections {
          guard let stored = try WriteBatch.checkpoint(of: projection.name, in: txn, schema: schema) else {
            // A log that holds no event yet (created, then stopped before its first commit
            // finished) needs no checkpoint: its projections are empty, as the comparison below
            // checks.
            if head > 0 { report(nil, "projection '\(projection.name)' has no checkpoint") }
            continue
          }
          let checkpoint = stored.resolved(atHead: head)
          if checkpoint.sequence > head {
            report(
              checkpoint.sequence,
              "projection '\(projection.name)' checkpoint \(checkpoint.sequence) is past the head \(head)")
          } else if checkpoint.sequence < head {
            report(
              checkpoint.sequence,
              "projection '\(projection.name)' is behind: checkpoint \(checkpoint.sequence), head \(head)")
          }
          if checkpoint.version != projection.version {
            report(
              nil,
              "projection '\(projection.name)' is stored at version \(checkpoint.version), code is at \(projection.version)"
            )
          }
        }
      }
    }
    guard !damaged, !projections.isEmpty else { return }
    do {
      let replay = try self.replay()
      if let difference = try firstDifference(from: replay) {
        // A replay writes format 4's rows; rows of an older format not rebuilt yet (a read-only
        // open) may hold dates as the seconds since 1970, until the first writable open.
        let format =
          rowDatesSince1970
          ? " (the rows are of format 3 or older, whose dates were the seconds since 1970: the first writable open rebuilds them)"
          : ""
        report(nil, "the projections differ from a replay: \(difference)\(format)")
      }
    } catch let error as EventStoreError {
      if case .projectionFailed(_, let sequence, _) = error {
        report(sequence, "replay failed: \(error)")
      } else {
        report(nil, "replay failed: \(error)")
      }
    }
  }
}
