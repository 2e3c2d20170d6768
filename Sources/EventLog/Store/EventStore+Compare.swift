import LMDB

extension ReplayResult {
  /// What ``EventStore/compare(with:)`` found: the first difference between the live projections
  /// and a replay, which projections it compared, and which it could not compare at the head.
  public struct Comparison {
    /// The first entry where a compared projection differs from the replay, or `nil`.
    public var difference: ReplayResult.Difference?
    /// The projections compared with the replay at the head, in registration order.
    public var compared: [String]
    /// The projections not compared at the head, and why: another app's, the schema's own that
    /// the environment does not hold, and those behind the head (compared as of their checkpoint).
    public var notCompared: [VerificationReport.UncheckedProjection]

    /// Whether nothing differs and every projection was compared at the head.
    public var isCompleteMatch: Bool { difference == nil && notCompared.isEmpty }
  }
}

extension EventStore {
  /// Compares the live projections with `replay`, as far as this build can.
  ///
  /// A projection of the schema whose checkpoint is at the head is compared at the head
  /// (``firstDifference(from:)``). One behind the head (another build appended without it, and
  /// pinned its checkpoint, `Docs/OnDiskFormat.md`) is compared as of its checkpoint, with a
  /// replay through it, and named in ``ReplayResult/Comparison/notCompared``: the next writable open
  /// catches it up. Another app's projections and the schema's own that the environment does not
  /// hold are named there too (``uncheckedProjections()``).
  /// - Parameter replay: a replay of this store's projections (``replay(through:progress:)``
  ///   without a limit); events appended since are folded in first.
  /// - Returns: the first difference, and what was and was not compared.
  /// - Throws: ``EventStoreError`` for a storage failure or a damaged event.
  public func compare(with replay: ReplayResult) throws -> ReplayResult.Comparison {
    let behind = try behindProjections()
    var difference = try firstDifference(from: replay, skipping: Set(behind.keys))
    var notCompared = try uncheckedProjections()
    for (checkpoint, names) in Dictionary(grouping: behind.keys, by: { behind[$0] ?? 0 }).sorted(by: {
      $0.key < $1.key
    }) {
      for name in names.sorted() {
        let version = projections.first { $0.name == name }?.version
        notCompared.append(
          VerificationReport.UncheckedProjection(
            name: name, version: version, reason: .behind(checkpoint: checkpoint)))
      }
      guard difference == nil else { continue }
      difference = try differenceBehind(names, at: checkpoint)
    }
    let compared = projections.map(\.name).filter { projectionDatabases[$0] != nil && behind[$0] == nil }
    return ReplayResult.Comparison(difference: difference, compared: compared, notCompared: notCompared)
  }

  /// The schema's projections in the environment whose checkpoint (of the code's version) is an
  /// explicit sequence before the head, with that sequence.
  func behindProjections() throws -> [String: UInt64] {
    try storage {
      try environment.read { txn in
        let head = try WriteBatch.head(in: txn, events: schema.events)
        var behind: [String: UInt64] = [:]
        for projection in projections where projectionDatabases[projection.name] != nil {
          guard let checkpoint = try WriteBatch.checkpoint(of: projection.name, in: txn, schema: schema),
            checkpoint.version == projection.version, !checkpoint.isFollowingHead, checkpoint.sequence < head
          else { continue }
          behind[projection.name] = checkpoint.sequence
        }
        return behind
      }
    }
  }

  /// The first difference between the live tables of the projections `names`, all checkpointed at
  /// `checkpoint`, and a replay through it; `nil` also for a projection caught up meanwhile.
  private func differenceBehind(_ names: [String], at checkpoint: UInt64) throws -> ReplayResult.Difference? {
    let replay = try self.replay(through: checkpoint)
    return try storage {
      try environment.read { txn in
        for name in names.sorted() {
          guard let stored = try WriteBatch.checkpoint(of: name, in: txn, schema: schema),
            !stored.isFollowingHead, stored.sequence == checkpoint,
            let tables = replay.tables[name], let databases = projectionDatabases[name]
          else { continue }  // caught up (or rebuilt) since: the comparison at the head is for next time
          if let difference = try ProjectionEngine.firstDifference(
            projection: name, expected: tables, actual: databases, in: txn)
          {
            return difference
          }
        }
        return nil
      }
    }
  }
}
