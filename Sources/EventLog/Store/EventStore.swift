import Dispatch
import Foundation
import LMDB
import Synchronization

/// An append-only event log in one LMDB environment, with inline projections.
///
/// - Appends go through one writer: appends that wait while a commit is in progress are committed
///   together in one write transaction (group commit), each caller getting its own result or error.
///   One transaction writes the events, the indexes, every projection's changes and checkpoints.
/// - Reads use short read transactions from any thread and copy bytes out before they end.
/// - On open, each projection that is new, behind, or of another version is caught up before the
///   store is returned.
/// - Recorded-at times form a hybrid logical clock: an appended event is recorded at the later of
///   the wall clock and 1 µs after the largest recorded-at the log has seen (appended, pulled or
///   imported, by any process), so a clock that steps back, or another device's clock running
///   ahead, never stamps a new event before one the log already holds. Ingested events keep
///   their recorded-at. (recorded-at, event ID) is an event's stamp: the order in which a
///   ``TableProjection`` with updates folds a row's events.
///
/// Every process that writes to an environment should register the same projections; a process
/// that registers a projection catches it up (on open and before its next append) if another
/// process appended without it.
public final class EventStore: Sendable {
  /// How a store is opened.
  public struct Options: Sendable {
    /// The initial LMDB map size in bytes; it grows on demand.
    public var mapSize: Int = 64 << 20
    /// The largest the map may grow to, in bytes.
    public var maximumMapSize: Int = 1 << 40
    /// The maximum number of concurrent readers across processes.
    public var maxReaders: Int = 126
    /// Whether each commit is flushed to disk before the append returns.
    public var durability: Environment.Durability = .durable
    /// Open an existing environment read-only: appends fail, projections are not caught up.
    public var readOnly = false
    /// How far past its used pages the data file is kept written with zeros, in bytes, when
    /// commits are durable (0: LMDB extends the file as commits need). A commit that extends the
    /// file must also write its inode before it returns; see
    /// `LMDB.Environment.Options.preallocation`.
    public var preallocation = 1 << 20
    /// How often a live subscription looks for events appended by other processes.
    public var subscriptionPollInterval: Duration = .milliseconds(250)
    /// Events per read transaction when replaying, verifying or walking the log. Replay keeps at
    /// most four chunks of decoded events in memory (two waiting, one being decoded, one being
    /// folded), so this bounds its memory beyond the projections' own state.
    public var replayChunkSize = 2_048

    /// Called (once per wait, on another thread) when an append, or the catch-up on open, has
    /// waited ``writeLockNoticeDelay`` for the write lock that another process holds; the
    /// append keeps waiting. `nil` (the default): wait silently.
    public var onWriteLockWait: (@Sendable () -> Void)?
    /// How long a write waits for the lock before ``onWriteLockWait`` is called.
    public var writeLockNoticeDelay: Duration = .seconds(1)

    /// The wall clock the writer stamps new events with (through the hybrid logical clock:
    /// ``EventStore``'s recorded-at rule). Tests set one that steps back or runs ahead.
    package var wallClock: @Sendable () -> Date = { Date() }

    /// Creates the default options.
    public init() {}
  }

  /// The environment directory.
  public let path: String
  /// The options the store was opened with.
  public let options: Options
  /// The registered projections, in registration order.
  public let projections: [any Projection]
  /// What decides whether an event that comes from elsewhere (``ingest(_:expectingHead:allOrNothing:updatingState:)``) is
  /// folded into the projections; `nil` admits every event.
  public let admission: (any EventAdmission)?
  /// The environment's own ID, created with it: the device in replication, and the origin this
  /// log's events carry to other devices. `nil` only for an environment written by an older
  /// build and opened read-only.
  public let deviceID: UUID?

  let environment: Environment
  let schema: Schema
  /// The LMDB databases of each projection's tables, by projection name then table name.
  let projectionDatabases: [String: [String: Database]]
  let writer = Writer()
  let notifier = HeadNotifier()

  /// Opens (creating if needed) the event store at `path`.
  ///
  /// - Parameters:
  ///   - path: the LMDB environment directory, created with mode 0700.
  ///   - projections: the inline projections, with distinct names.
  ///   - admission: decides which ingested events the projections fold (``EventAdmission``); a
  ///     writable open also readmits skipped events it now admits, rebuilding the projections.
  ///   - options: map size, durability, read-only.
  /// - Throws: ``EventStoreError`` naming the path: a missing environment opened read-only, a
  ///   file that is not an event store, an unknown format, an invalid projection.
  /// - Complexity: O(1) when the projections are up to date; otherwise the catch-up reads the
  ///   events the projections miss.
  public init(
    path: String, projections: [any Projection] = [], admission: (any EventAdmission)? = nil,
    options: Options = Options()
  ) throws {
    self.path = path
    self.options = options
    self.projections = projections
    self.admission = admission
    var names = Set<String>()
    for projection in projections {
      try projection.validate()
      guard names.insert(projection.name).inserted else {
        throw EventStoreError.invalidProjection("two projections are named '\(projection.name)'")
      }
    }
    var environmentOptions = Environment.Options()
    environmentOptions.mapSize = options.mapSize
    environmentOptions.maximumMapSize = max(options.maximumMapSize, options.mapSize)
    environmentOptions.maxReaders = options.maxReaders
    environmentOptions.maxDatabases = 16 + projections.reduce(0) { $0 + $1.tables.count }
    environmentOptions.durability = options.durability
    environmentOptions.readOnly = options.readOnly
    environmentOptions.preallocation = options.preallocation
    environmentOptions.onWriteLockWait = options.onWriteLockWait
    environmentOptions.writeLockNoticeDelay = options.writeLockNoticeDelay
    let environment = try storage { try Environment(path: path, options: environmentOptions) }
    self.environment = environment
    let schema = try storage { try Schema(environment: environment) }
    self.schema = schema
    var databases: [String: [String: Database]] = [:]
    for projection in projections {
      var tables: [String: Database] = [:]
      for table in projection.tables {
        let name = Schema.tableDatabaseName(projection: projection.name, table: table)
        tables[table] = try storage { try environment.openDatabase(name) }
      }
      databases[projection.name] = tables
    }
    self.projectionDatabases = databases
    try Self.checkFormat(of: environment, schema: schema, path: path, readOnly: options.readOnly)
    deviceID = try storage { try Self.deviceID(of: environment, schema: schema, creating: !options.readOnly) }
    if !options.readOnly {
      try storage {
        try environment.write { txn in
          if let admission {
            _ = try Self.readmitSkipped(
              in: txn, schema: schema, admission: admission, projections: projections)
          }
          var batch = try WriteBatch(store: self, transaction: txn)
          try batch.finish()
        }
      }
    }
    notifier.publish(try head())
  }

  /// The device ID stored in `meta`, created (a new random UUID) when `creating` and there is none.
  private static func deviceID(of environment: Environment, schema: Schema, creating: Bool) throws -> UUID? {
    func stored(_ txn: Transaction) throws -> UUID? {
      try txn.value(forKey: Schema.deviceKey, in: schema.meta).flatMap { bytes in
        bytes.count == 16 ? bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) } : nil
      }
    }
    if let id = try environment.read(stored) { return id }
    guard creating else { return nil }
    return try environment.write { txn in
      if let id = try stored(txn) { return id }  // another process created it meanwhile
      let id = UUID()
      try Schema.deviceKey.withUnsafeBytes { k in
        try withUnsafeBytes(of: id.uuid) { v in try txn.put(v, forKey: k, in: schema.meta) }
      }
      return id
    }
  }

  /// Checks the on-disk format version; writes it on a new environment and upgrades an older
  /// readable one (unless read-only).
  private static func checkFormat(
    of environment: Environment, schema: Schema, path: String, readOnly: Bool
  ) throws {
    let key = Array("format".utf8)
    let stored = try storage {
      try environment.read { txn in
        try key.withUnsafeBytes { k in
          try txn.withValue(forKey: k, in: schema.meta) { v -> UInt32? in
            v.count == 4 ? UInt32(littleEndian: v.loadUnaligned(as: UInt32.self)) : nil
          }
        }
      }
    }
    switch stored {
    case .some(.some(Schema.formatVersion)):
      return
    case .some(.some(let found)) where Schema.readableFormats.contains(found):
      // An older format this build reads; the first writable open upgrades it (format 1 had only
      // explicit checkpoints, which format 2 reads as they are).
      guard !readOnly else { return }
      try writeFormat(key: key, environment: environment, schema: schema)
    case .some(let found):
      throw EventStoreError.unsupportedFormat(path: path, found: found ?? 0, supported: Schema.formatVersion)
    case nil:
      guard !readOnly else { return }
      try writeFormat(key: key, environment: environment, schema: schema)
    }
  }

  /// Stores this build's format version.
  private static func writeFormat(key: [UInt8], environment: Environment, schema: Schema) throws {
    try storage {
      try environment.write { txn in
        var value = Schema.formatVersion.littleEndian
        try key.withUnsafeBytes { k in
          try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: schema.meta) }
        }
      }
    }
  }

  /// Facts about the environment's storage.
  public struct StorageInfo: Sendable {
    /// The current map size in bytes.
    public var mapSize: Int
    /// Bytes of the data file in use.
    public var usedBytes: Int
    /// The most reader slots ever in use at once (LMDB's `me_numreaders`; it does not go down).
    public var readers: Int
  }

  /// The map size, the bytes in use and the reader slots.
  public func storageInfo() -> StorageInfo {
    let info = environment.info()
    return StorageInfo(
      mapSize: info.mapSize, usedBytes: (info.lastPage + 1) * info.pageSize, readers: info.readers)
  }
}
