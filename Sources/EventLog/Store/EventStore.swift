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
  /// When a commit reaches the disk.
  public enum Durability: Sendable {
    /// Flushed (`fsync`) on every commit: a returned append survives a power loss.
    case durable
    /// Not flushed: a returned append survives a crash of the process but maybe not a power loss.
    /// For tests and bulk loads.
    case noSync
  }

  /// How a store is opened.
  public struct Options: Sendable {
    /// The initial LMDB map size in bytes; it grows on demand.
    public var mapSize: Int = 64 << 20
    /// The largest the map may grow to, in bytes.
    public var maximumMapSize: Int = 1 << 40
    /// The maximum number of concurrent readers across processes.
    public var maxReaders: Int = 126
    /// Whether each commit is flushed to disk before the append returns.
    public var durability: Durability = .durable
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
  /// What the app's data is: its event types, projections, rules, replicated streams and stream
  /// names (``AppSchema``).
  public let appSchema: AppSchema
  /// The registered projections (the schema's), in registration order.
  public let projections: [any Projection]
  /// What decides whether an event that comes from elsewhere (``ingest(_:expectingHead:allOrNothing:updatingState:)``) is
  /// folded into the projections (the schema's ``AppSchema/admission``); `nil` admits every event.
  public let admission: (any EventAdmission)?
  /// The names of the schema's projections that this environment does not hold, when it is opened
  /// read-only: written by an app without them (or before they existed). Reads of them fail
  /// naming them; ``replay(through:progress:)`` rebuilds them in memory, and ``compare(with:)`` and
  /// ``verify(progress:)`` name them as not compared; a writable open builds them.
  public let absentProjections: [String]
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
  /// The latest layout revisions read or written (``LayoutRecorder``).
  let layoutCache = LayoutCache()
  /// What converts stored JSON payloads for the projections and the admission.
  let payloadForms: PayloadForms
  /// Whether the live rows hold dates as the seconds since 1970: an environment of format 3 or
  /// older opened read-only (the first writable open rebuilds them, `RowWriter.date(_:)`).
  let rowDatesSince1970: Bool

  /// Opens (creating if needed) the event store at `path` for the app `schema` describes.
  ///
  /// The store folds the schema's projections and judges events from elsewhere with its
  /// ``AppSchema/admission``; a writable open also readmits skipped events it now admits,
  /// rebuilding the projections. A read-only open of an environment that does not hold some of
  /// the schema's projections (written by another app) lists them in ``absentProjections``.
  /// - Parameters:
  ///   - path: the LMDB environment directory, created with mode 0700.
  ///   - schema: the app's event types, projections (with distinct names) and rules.
  ///   - options: map size, durability, read-only.
  /// - Throws: ``EventStoreError`` naming the path: a missing environment opened read-only, a
  ///   file that is not an event store, an unknown format, an invalid projection; a stored
  ///   layout of an event or row type that does not read into this build's type
  ///   (``EventStoreError/incompatibleLayout(path:type:field:reason:)``), or, unless read-only,
  ///   one with fields only a newer build knows (``EventStoreError/newerLayouts(path:types:)``).
  /// - Complexity: O(1) when the projections are up to date; otherwise the catch-up reads the
  ///   events the projections miss.
  public init(path: String, schema: AppSchema, options: Options = Options()) throws {
    let projections = schema.projections
    let admission = schema.storeAdmission
    self.path = path
    self.options = options
    self.appSchema = schema
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
    environmentOptions.durability =
      switch options.durability {
      case .durable: .durable
      case .noSync: .noSync
      }
    environmentOptions.readOnly = options.readOnly
    environmentOptions.preallocation = options.preallocation
    environmentOptions.onWriteLockWait = options.onWriteLockWait
    environmentOptions.writeLockNoticeDelay = options.writeLockNoticeDelay
    let environment = try storage { try Environment(path: path, options: environmentOptions) }
    self.environment = environment
    let schema = try storage { try Schema(environment: environment) }
    self.schema = schema
    payloadForms = PayloadForms(eventTypes: appSchema.eventTypes, cache: layoutCache, layouts: schema.layouts)
    // Before anything is written: a type whose stored layout does not read into it, or (writing)
    // one with fields only a newer build knows, refuses the open.
    let layoutCheck = try Self.checkLayouts(
      environment: environment, schema: schema, appSchema: appSchema, path: path)
    if !options.readOnly && !layoutCheck.newer.isEmpty {
      throw EventStoreError.newerLayouts(path: path, types: layoutCheck.newer)
    }
    for key in layoutCheck.evolving { layoutCache.noteEvolving(key) }
    var databases: [String: [String: Database]] = [:]
    var absent: [String] = []
    for projection in projections {
      guard let tables = try Self.openTables(of: projection, in: environment, schema: schema) else {
        absent.append(projection.name)
        continue
      }
      databases[projection.name] = tables
    }
    self.projectionDatabases = databases
    self.absentProjections = absent
    let upgrading = try Self.checkFormat(
      of: environment, schema: schema, path: path, readOnly: options.readOnly)
    let storedFormat = try storage { try environment.read { try Self.storedFormat(in: $0, schema: schema) } }
    rowDatesSince1970 = options.readOnly && storedFormat.map { $0 < 4 } == true
    deviceID = try storage { try Self.deviceID(of: environment, schema: schema, creating: !options.readOnly) }
    if let upgrading, upgrading < 5, let deviceID {
      try Self.chainLegacyRecords(environment: environment, schema: schema, device: deviceID)
    }
    if !options.readOnly {
      try Self.buildAuditIndexes(environment: environment, schema: schema, device: deviceID)
    }
    if !options.readOnly {
      // A skipped event the admission now reads is folded in by a rebuild; one a projection then
      // refuses stays skipped, as invalid, instead of failing every open.
      var refused: [UInt64: String] = [:]
      while true {
        var readmitted: [UInt64] = []
        do {
          try storage {
            try environment.write { txn in
              if let upgrading {
                try Self.upgrade(from: upgrading, in: txn, schema: schema, payloads: payloadForms)
              }
              if let state = schema.state {
                for (key, value) in layoutCheck.rowLayouts { try txn.put(value, forKey: key, in: state) }
              }
              // Without its checkpoint, the batch below rebuilds the table in the new layout.
              for projection in layoutCheck.rebuild {
                _ = try Array(projection.utf8).withUnsafeBytes {
                  try txn.delete(forKey: $0, in: schema.checkpoints)
                }
              }
              if let admission {
                readmitted = try Self.readmitSkipped(
                  in: txn, schema: schema, admission: admission, payloads: payloadForms,
                  projections: projections,
                  refused: refused)
              }
              var batch = try WriteBatch(store: self, transaction: txn)
              try batch.finish()
            }
          }
          break
        } catch EventStoreError.projectionFailed(let projection, let sequence, let underlying)
          where readmitted.contains(sequence) && refused[sequence] == nil
        {
          refused[sequence] = "the projection '\(projection)' refused it: \(underlying)"
        }
      }
    }
    notifier.publish(try head())
  }

  /// Opens (creating if needed) an event store with `projections` and `admission` and no event
  /// types: a schema of its own (``AppSchema``) made of them, for tests and tools that need no
  /// more.
  ///
  /// - Parameters:
  ///   - path: the LMDB environment directory, created with mode 0700.
  ///   - projections: the inline projections, with distinct names.
  ///   - admission: decides which ingested events the projections fold, whatever their type;
  ///     `nil` admits every event.
  ///   - options: map size, durability, read-only.
  /// - Throws: as ``init(path:schema:options:)``.
  public convenience init(
    path: String, projections: [any Projection] = [], admission: (any EventAdmission)? = nil,
    options: Options = Options()
  ) throws {
    try self.init(
      path: path, schema: AppSchema(projections: projections, admission: admission), options: options)
  }

  /// The databases of `projection`'s tables, or `nil` when the environment is read-only and the
  /// projection was never built there: no checkpoint, and its tables missing or empty (an app
  /// without it wrote the environment, or a first open was interrupted before it built them).
  /// Read-only, a projection stored at another version may lack some of its tables: those are
  /// left out.
  /// - Throws: the storage error when some of its tables are missing and it is not so.
  private static func openTables(
    of projection: any Projection, in environment: Environment, schema: Schema
  ) throws -> [String: Database]? {
    var tables: [String: Database] = [:]
    var firstError: LMDBError?
    for table in projection.tables {
      let name = Schema.tableDatabaseName(projection: projection.name, table: table)
      do {
        tables[table] = try environment.openDatabase(name)
      } catch let error where error.code == .notFound && environment.options.readOnly {
        firstError = firstError ?? error
      } catch {
        throw EventStoreError(storage: error)
      }
    }
    guard environment.options.readOnly else { return tables }
    let (checkpoint, empty) = try storage {
      try environment.read { txn in
        (
          try WriteBatch.checkpoint(of: projection.name, in: txn, schema: schema),
          try tables.values.allSatisfy { try txn.count(in: $0) == 0 }
        )
      }
    }
    if checkpoint == nil && empty { return nil }
    // Stored at another version (a build whose projection had other tables: a table with
    // updates before the convergent rule had no `.stamps`), its tables are read as they are; a
    // writable open rebuilds it, and `verify` says its version differs.
    if let firstError, checkpoint?.version == projection.version || checkpoint == nil {
      throw EventStoreError(storage: firstError)
    }
    return tables
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
  /// - Returns: the format of an environment whose data the open must upgrade
  ///   (``upgrade(from:in:schema:payloads:)``), or `nil`.
  private static func checkFormat(
    of environment: Environment, schema: Schema, path: String, readOnly: Bool
  ) throws -> UInt32? {
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
      return nil
    case .some(.some(let found)) where Schema.readableFormats.contains(found):
      // An older format this build reads; the first writable open upgrades it (format 1 had only
      // explicit checkpoints, which format 2 reads as they are).
      // Written by the open's first write transaction, with the upgrade, so that a crash cannot
      // leave a new format without its upgrade.
      return readOnly ? nil : found
    case .some(let found):
      throw EventStoreError.unsupportedFormat(path: path, found: found ?? 0, supported: Schema.formatVersion)
    case nil:
      guard !readOnly else { return nil }
      try writeFormat(key: key, environment: environment, schema: schema)
      return nil
    }
  }

  /// Stores this build's format version.
  private static func writeFormat(key: [UInt8], environment: Environment, schema: Schema) throws {
    try storage { try environment.write { txn in try writeFormat(in: txn, schema: schema) } }
  }

  /// Stores this build's format version in `txn`.
  static func writeFormat(in txn: WriteTransaction, schema: Schema) throws {
    var value = Schema.formatVersion.littleEndian
    try Array("format".utf8).withUnsafeBytes { k in
      try withUnsafeBytes(of: &value) { v in try txn.put(v, forKey: k, in: schema.meta) }
    }
  }

  /// The stored format version, read in `txn`.
  static func storedFormat(in txn: Transaction, schema: Schema) throws -> UInt32? {
    try Array("format".utf8).withUnsafeBytes { k in
      try txn.withValue(forKey: k, in: schema.meta) { v -> UInt32? in
        v.count == 4 ? UInt32(littleEndian: v.loadUnaligned(as: UInt32.self)) : nil
      }
    } ?? nil
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
  /// - Throws: ``EventStoreError/closed`` after ``close()``.
  public func storageInfo() throws -> StorageInfo {
    let info = try storage { try environment.info() }
    return StorageInfo(
      mapSize: info.mapSize, usedBytes: (info.lastPage + 1) * info.pageSize, readers: info.readers)
  }
}
