import Dispatch
import Foundation
import LMDB
import Synchronization

extension EventStore {
  /// How far a replay or a verification has come.
  public struct ProgressReport: Sendable {
    /// Events processed so far.
    public var completed: UInt64
    /// Events to process in all.
    public var total: UInt64
    /// Time since the start.
    public var elapsed: Duration

    /// Events per second so far.
    public var rate: Double {
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      return seconds > 0 ? Double(completed) / seconds : 0
    }
  }
}

extension EventStore {
  /// Projections rebuilt from the log into memory, away from the live ones.
  ///
  /// Read them with ``projection(_:)`` (the same ``ProjectionReader`` the live projections give),
  /// compare them with the live ones (``EventStore/firstDifference(from:)``) or swap them in
  /// (``EventStore/rebuildProjections(progress:)``). Memory is bounded by the projections' state,
  /// not by the log's length.
  public final class ReplayResult {
    /// The last event folded in.
    public private(set) var throughSequence: UInt64
    /// How many events were folded.
    public private(set) var eventCount: Int
    /// How long the fold took.
    public let duration: Duration
    let targets: [ProjectionEngine.Target]
    let tables: [String: [String: MemoryTable]]
    /// The log the targets read events back from: the environment, or the transaction of an
    /// ``advance(through:in:schema:)``.
    let log: LogReader
    /// The subjects' keys and erasures as they were when the replay ended: to open the personal
    /// values of its rows with.
    public internal(set) var keyring = SubjectKeyring()

    init(
      throughSequence: UInt64, eventCount: Int, duration: Duration, targets: [ProjectionEngine.Target],
      tables: [String: [String: MemoryTable]], log: LogReader
    ) {
      self.throughSequence = throughSequence
      self.eventCount = eventCount
      self.duration = duration
      self.targets = targets
      self.tables = tables
      self.log = log
    }

    /// The replayed tables of the projection named `name`.
    public func projection(_ name: String) throws -> ProjectionReader {
      guard let tables = tables[name] else {
        throw EventStoreError.invalidProjection("no projection named '\(name)' is registered")
      }
      return ProjectionReader(projection: name, backend: .memory(tables))
    }

    /// Folds events `throughSequence + 1 ... last` from `txn` in.
    func advance(through last: UInt64, in txn: Transaction, schema: Schema, payloads: PayloadForms) throws {
      guard last > throughSequence else { return }
      // The fold reads the log in `txn`: a transaction of its own would be one inside another.
      let outside = log.source
      log.source = .transaction(txn)
      defer { log.source = outside }
      eventCount += try ProjectionEngine.fold(
        from: throughSequence + 1, through: last, in: txn, schema: schema, payloads: payloads, into: targets)
      throughSequence = last
    }
  }
}

@available(*, unavailable)
extension EventStore.ReplayResult: Sendable {}

extension EventStore {
  /// Rebuilds every projection from the log into memory, up to `sequence` (the head when `nil`).
  ///
  /// Reads in chunks of ``Options/replayChunkSize`` events, each in a fresh read transaction.
  /// `replay(through: n)` is the state as of the n-th event: time travel.
  /// - Parameters:
  ///   - sequence: the last event to fold; the head when `nil` (or past the head).
  ///   - progress: called after each chunk.
  /// - Returns: the rebuilt projections, read with ``EventStore/ReplayResult/projection(_:)``.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` for a damaged or missing
  ///   event, ``EventStoreError/projectionFailed(projection:sequence:underlying:)``.
  /// - Complexity: O(n) reads; memory O(size of the projections).
  public func replay(
    through sequence: UInt64? = nil, progress: ((ProgressReport) -> Void)? = nil
  ) throws -> ReplayResult {
    let clock = ContinuousClock()
    let start = clock.now
    let head = try self.head()
    let last = min(sequence ?? head, head)
    var targets: [ProjectionEngine.Target] = []
    var tables: [String: [String: MemoryTable]] = [:]
    // The fold runs on this thread, outside any transaction: it reads the log in its own.
    let log = LogReader(.environment(environment), schema: schema, payloads: payloadForms)
    for projection in projections {
      let (target, memory) = ProjectionEngine.memoryTarget(for: projection, log: log)
      targets.append(target)
      tables[projection.name] = memory
    }
    // Size the tables for the live projections' entry counts: growing a table moves every entry.
    try storage {
      try environment.read { txn in
        for (projection, memory) in tables {
          for (name, table) in memory {
            guard let database = projectionDatabases[projection]?[name] else { continue }
            table.reserveCapacity(try txn.count(in: database))
          }
        }
      }
    }
    // Two stages on two threads: a reader verifies and decodes records chunk by chunk (each chunk
    // in its own read transaction) while this thread folds the previous chunk into the projections.
    let chunk = UInt64(max(1, options.replayChunkSize))
    let pipeline = ReplayPipeline(depth: 2)
    let readerEnvironment = environment
    let schema = self.schema
    let payloads = payloadForms
    Thread.detachNewThread {
      var next: UInt64 = 1
      while next <= last && !pipeline.isCancelled {
        // Folded chunks come back to be freed here, where they were allocated: the folding thread
        // (the slower stage) is spared the releases and the frees.
        pipeline.freeSpentChunks()
        let end = min(last, next + chunk - 1)
        let from = next
        let decoded = Result {
          try storage {
            try readerEnvironment.read { txn in
              ReplayChunk(
                events: try ProjectionEngine.decode(
                  from: from, through: end, in: txn, schema: schema, payloads: payloads),
                last: end)
            }
          }
        }
        var failed = false
        if case .failure = decoded { failed = true }
        // Handed over, not copied: a reference kept here until the end of the iteration would
        // make the folding thread's chunk shared when it takes it at once, and unwrapping it
        // for the fold would then copy all of its events (`perf`: `consumeAndCreateNew`).
        pipeline.put(consume decoded)
        if failed { return }
        next = end + 1
      }
      pipeline.put(.success(ReplayChunk(events: [], last: 0)))
    }
    var folded: UInt64 = 0
    do {
      while folded < last {
        var chunk = try pipeline.take().get()
        guard chunk.last > 0 else { break }
        try chunk.events.withUnsafeMutableBufferPointer { try ProjectionEngine.apply($0, to: targets) }
        // Skipped events are read but not folded: the chunk's end says how far the fold is.
        folded = chunk.last
        // The array goes back whole to the reader thread, which frees it.
        pipeline.recycle(chunk.events)
        progress?(ProgressReport(completed: folded, total: last, elapsed: clock.now - start))
      }
    } catch {
      pipeline.cancel()
      throw error
    }
    guard folded == last else {
      throw EventStoreError.corruptedRecord(sequence: folded + 1, reason: "the event is missing")
    }
    let result = ReplayResult(
      throughSequence: last, eventCount: Int(last), duration: clock.now - start, targets: targets,
      tables: tables, log: log)
    result.keyring = try keyring()
    return result
  }

  /// The first entry where `replay` and the live projections differ, or `nil` when they are equal.
  ///
  /// If events were appended since the replay, they are folded into `replay` first (in the same
  /// read transaction as the comparison), so the two are compared at the same point. Only the
  /// projections the environment holds are compared: ``uncheckedProjections()`` names the others
  /// (another app's, and ``absentProjections``).
  public func firstDifference(from replay: ReplayResult) throws -> ReplayResult.Difference? {
    try firstDifference(from: replay, skipping: [])
  }

  /// ``firstDifference(from:)`` of the projections not named in `skipped`.
  func firstDifference(
    from replay: ReplayResult, skipping skipped: Set<String>
  ) throws -> ReplayResult.Difference? {
    try storage {
      try environment.read { txn in
        let head = try WriteBatch.head(in: txn, events: schema.events)
        try replay.advance(through: head, in: txn, schema: schema, payloads: payloadForms)
        for projection in projections
        where projectionDatabases[projection.name] != nil && !skipped.contains(projection.name) {
          let stored = try WriteBatch.checkpoint(of: projection.name, in: txn, schema: schema)
          let checkpoint = stored?.resolved(atHead: head)
          // An empty log without checkpoints (created, then stopped before its first commit
          // finished) is compared by its tables alone.
          let emptyWithoutCheckpoint = stored == nil && head == 0
          if !emptyWithoutCheckpoint
            && (checkpoint?.sequence != head || checkpoint?.version != projection.version)
          {
            return ReplayResult.Difference(
              projection: projection.name, table: "(checkpoint)", key: Array(projection.name.utf8),
              replayed: Schema.encode(.init(version: projection.version, sequence: head)),
              live: stored.map(Schema.encode))
          }
          guard let tables = replay.tables[projection.name],
            let databases = projectionDatabases[projection.name]
          else { continue }
          if let difference = try ProjectionEngine.firstDifference(
            projection: projection.name, expected: tables, actual: databases, in: txn)
          {
            return difference
          }
        }
        return nil
      }
    }
  }

  /// Rebuilds every projection from the log and swaps the result in atomically.
  ///
  /// The fold runs outside the writer; then, on the writer, the events appended meanwhile are
  /// folded in and one write transaction replaces every projection's tables and checkpoint. A
  /// reader sees either the old projections or the new ones, never a mix.
  /// - Returns: the replay that was swapped in.
  @discardableResult
  public func rebuildProjections(
    progress: (@Sendable (ProgressReport) -> Void)? = nil
  ) async throws -> ReplayResult {
    let replay = try self.replay(progress: progress)
    let box = ReplayBox(replay)
    try await exclusive { [self] in
      try storage {
        try environment.write { txn in
          let head = try WriteBatch.head(in: txn, events: schema.events)
          // A retried transaction (the map grew) finds the tail already folded: advance is idempotent.
          try box.replay.advance(through: head, in: txn, schema: schema, payloads: payloadForms)
          for projection in projections {
            guard let tables = box.replay.tables[projection.name],
              let databases = projectionDatabases[projection.name]
            else { continue }
            try ProjectionEngine.write(tables, to: databases, in: txn)
            // Up to the head and applied by this store's writers from now on: it follows the head.
            try WriteBatch.store(
              .following(version: projection.version), ofProjection: Array(projection.name.utf8), in: txn,
              schema: schema)
          }
        }
      }
    }
    return replay
  }
}

/// Carries a replay to the writer's queue and back.
private final class ReplayBox: @unchecked Sendable {
  // @unchecked Sendable: the replay is handed to the writer and used only there until the
  // awaiting caller resumes; the two never touch it at the same time.
  let replay: EventStore.ReplayResult
  init(_ replay: EventStore.ReplayResult) { self.replay = replay }
}

/// The decoded events of `…last` (without the events the projections skip); `last` 0 ends the
/// replay.
private struct ReplayChunk: Sendable {
  var events: [RecordedEvent]
  var last: UInt64
}

/// A bounded hand-over of decoded chunks from replay's reader thread to the folding thread.
private final class ReplayPipeline: Sendable {
  private let items = Mutex<(queue: [Result<ReplayChunk, any Error>], cancelled: Bool)>(([], false))
  private let spent = Mutex<[[RecordedEvent]]>([])
  private let filled = DispatchSemaphore(value: 0)
  private let free: DispatchSemaphore

  /// - Parameter depth: how many decoded chunks may wait (memory: depth × chunk size events).
  init(depth: Int) {
    // Created at 0 and raised: libdispatch traps when a semaphore is freed below its initial value.
    free = DispatchSemaphore(value: 0)
    for _ in 0..<depth { free.signal() }
  }

  var isCancelled: Bool { items.withLock { $0.cancelled } }

  /// Hands over a chunk, waiting while `depth` chunks wait already (unless cancelled).
  func put(_ chunk: consuming Result<ReplayChunk, any Error>) {
    if isCancelled { return }
    free.wait()
    // Moved into the queue before the signal, so that the taker holds the only reference.
    var pending = Optional(chunk)
    items.withLock { items in
      if let chunk = pending.take() { items.queue.append(chunk) }
    }
    filled.signal()
  }

  /// The next chunk, in order.
  func take() -> Result<ReplayChunk, any Error> {
    filled.wait()
    let chunk = items.withLock { $0.queue.removeFirst() }
    free.signal()
    return chunk
  }

  /// Hands a folded chunk back, to be freed by the reader.
  func recycle(_ chunk: [RecordedEvent]) {
    spent.withLock { $0.append(chunk) }
  }

  /// Frees the chunks handed back, on the calling thread.
  func freeSpentChunks() {
    let chunks = spent.withLock { spent in
      let taken = spent
      spent = []
      return taken
    }
    _ = consume chunks
  }

  /// Stops the reader: it ends at its next chunk, and a waiting hand-over is released.
  func cancel() {
    items.withLock { $0.cancelled = true }
    free.signal()
  }
}
