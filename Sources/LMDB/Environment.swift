import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An LMDB environment: one directory holding `data.mdb` and `lock.mdb`, memory-mapped.
///
/// The environment is opened with `MDB_NOTLS`, so read transactions are not bound to threads and
/// any thread may run them. Write transactions are scoped to a synchronous closure (see
/// ``write(_:)``), so they begin and end on one thread and can never span an `await`.
///
/// The directory is created with mode 0700 and the files with 0600, whatever the umask. An
/// existing directory that group or others can write to, and a `data.mdb` or `lock.mdb` that is
/// a symbolic link, not a regular file or hard-linked elsewhere, are refused before LMDB opens
/// them. Stale reader slots left by dead processes are cleared on open (`mdb_reader_check`).
public final class Environment: @unchecked Sendable {
  // @unchecked Sendable: LMDB environments are thread-safe with MDB_NOTLS; the mutable Swift state
  // (database cache, map size, the data file's known end) is behind Mutexes, an Atomic and
  // `resizeLock`, and the map is resized only while `resizeLock` is held exclusively, i.e. while
  // no transaction of this process is active, as LMDB requires.
  let handle: OpaquePointer
  let resizeLock = ResizeLock()
  private let databases = Mutex<[String: Database]>([:])
  /// When stale reader slots were last cleared; writers clear them again every second, so that a
  /// reader process that died cannot pin old pages (and grow the file) for a long-lived writer.
  private let lastReaderCheck = Mutex<ContinuousClock.Instant>(ContinuousClock.now)
  private let mapSizeState: Mutex<Int>
  /// The size of `data.mdb` as last seen by ``preallocate()``: changed only under LMDB's writer
  /// lock, and never larger than the file (another process may have extended it since).
  private let fileEnd = Atomic<Int>(0)
  /// The page size in bytes.
  private let pageSize: Int
  /// Whether ``close()`` closed the handle. Written only while `resizeLock` is held exclusively
  /// and read while it is held (shared or exclusively), so no transaction of this process can
  /// begin on a closed handle.
  private let closed = Atomic<Bool>(false)
  /// A descriptor of `lock.mdb` for ``otherProcessID()`` and ``compact(using:)``, opened on first
  /// use and closed only after `mdb_env_close`: closing any descriptor of the lock file would
  /// drop every `fcntl` lock this process holds on it, LMDB's own shared lock included. -1 until
  /// opened.
  let lockProbe = Mutex<Int32>(-1)

  /// The directory of the environment.
  public let path: String
  /// The options it was opened with.
  public let options: Options

  /// How an environment is opened.
  public struct Options: Sendable {
    /// The initial map size in bytes. The map grows on `MDB_MAP_FULL` up to ``maximumMapSize``.
    public var mapSize: Int = 64 << 20
    /// The largest map size growth may reach, in bytes.
    public var maximumMapSize: Int = 1 << 40
    /// The maximum number of named databases.
    public var maxDatabases: Int = 64
    /// The maximum number of concurrent read transactions, across all processes.
    public var maxReaders: Int = 126
    /// Whether commits are flushed to disk before they return.
    public var durability: Durability = .durable
    /// Open read-only: the environment must exist, and write transactions fail.
    public var readOnly: Bool = false
    /// How far past its used pages `data.mdb` is kept written with zeros, in bytes; 0 (the
    /// default) leaves the file to LMDB, which extends it as commits write new pages. Durable
    /// environments only.
    ///
    /// A commit that extends the file changes its size and allocates blocks, so its flush must
    /// also write the file's inode (on ext4: one more synchronous disk write, waited for). With
    /// zeros written ahead, commits write inside the file, and its size changes about once per
    /// half of this many bytes of growth. The zeros are written at the start of a write
    /// transaction, under LMDB's writer lock, only past the file's end, and never read: LMDB
    /// reads no page past its last used one. Best effort: an extension that fails (a full disk)
    /// is left, and LMDB's own write reports the error.
    public var preallocation: Int = 0
    /// Called (once per wait, on another thread) when a write transaction has waited
    /// ``writeLockNoticeDelay`` for LMDB's writer lock, which another process holds: a long
    /// commit, or a process stopped or hung while writing. The transaction keeps waiting.
    public var onWriteLockWait: (@Sendable () -> Void)?
    /// How long a write transaction waits for the writer lock before ``onWriteLockWait`` is called.
    public var writeLockNoticeDelay: Duration = .seconds(1)

    /// Creates options with the defaults above.
    public init() {}
  }

  /// What a commit guarantees when it returns.
  public enum Durability: Sendable {
    /// `fsync` on every commit: a returned commit survives a power loss.
    case durable
    /// No flush (`MDB_NOSYNC`): a returned commit survives a process crash but maybe not a power
    /// loss. For tests and bulk loads.
    case noSync
  }

  /// Opens (and if needed creates) the environment at `path`.
  ///
  /// - Parameters:
  ///   - path: the environment directory; created with mode 0700 unless ``Options/readOnly``.
  ///   - options: map size, limits and durability.
  /// - Throws: ``LMDBError`` naming the path: `noSuchFile` for a missing read-only environment,
  ///   `invalid` or `versionMismatch` for a file that is not an LMDB environment;
  ///   `unsafePermissions`, `symbolicLink`, `tooManyLinks` or `wrongFileType` for a directory or
  ///   file refused by the checks above.
  public init(path: String, options: Options = Options()) throws(LMDBError) {
    self.path = path
    self.options = options
    precondition(options.mapSize > 0 && options.maximumMapSize >= options.mapSize, "bad map sizes")
    if !options.readOnly {
      if mkdir(path, 0o700) == 0 {
        chmod(path, 0o700)  // mkdir applies the umask; the directory must be private whatever it is.
      } else if errno != EEXIST {
        throw LMDBError(code: .init(rawValue: errno), operation: "mkdir", context: path)
      }
    }
    try Self.checkFiles(at: path)
    try Self.checkSpaceForLockFile(at: path)
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "mdb_env_create", context: path)
    guard let env else { throw LMDBError(code: .invalid, operation: "mdb_env_create", context: path) }
    do {
      try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize", context: path)
      try check(mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases)), "mdb_env_set_maxdbs", context: path)
      try check(
        mdb_env_set_maxreaders(env, UInt32(options.maxReaders)), "mdb_env_set_maxreaders", context: path)
      var flags = UInt32(MDB_NOTLS)
      if options.durability == .noSync { flags |= UInt32(MDB_NOSYNC) }
      if options.readOnly { flags |= UInt32(MDB_RDONLY) }
      try check(mdb_env_open(env, path, flags, 0o600), "mdb_env_open", context: path)
      try Self.checkOpenDataFile(env, path: path)
      try Self.checkFileLength(env, path: path)
    } catch {
      mdb_env_close(env)
      throw error
    }
    handle = env
    var info = MDB_envinfo()
    var stat = MDB_stat()
    mdb_env_info(env, &info)
    mdb_env_stat(env, &stat)
    mapSizeState = Mutex(info.me_mapsize)
    pageSize = Int(stat.ms_psize)
    var dead: Int32 = 0
    try check(mdb_reader_check(env, &dead), "mdb_reader_check", context: path)
  }

  deinit {
    if !closed.load(ordering: .relaxed) { mdb_env_close(handle) }
    closeLockProbe()
  }

  /// Closes the environment (`mdb_env_close`), once no transaction of this process is active;
  /// the same path may then be opened again in this process. Later transactions, and the other
  /// calls that need the handle, throw ``LMDBError/Code/closed``. Calling it again does nothing.
  ///
  /// It waits for the transactions running on other threads to end, and for the writer-preferring
  /// lock every transaction holds: never call it inside a transaction's closure (it would wait for
  /// itself).
  public func close() {
    resizeLock.withExclusive { closeHoldingResizeLock() }
  }

  /// ``close()``'s work, for a caller that holds `resizeLock` exclusively already.
  func closeHoldingResizeLock() {
    guard !closed.load(ordering: .relaxed) else { return }
    closed.store(true, ordering: .relaxed)
    mdb_env_close(handle)
    closeLockProbe()
  }

  /// Whether ``close()`` was called.
  public var isClosed: Bool { closed.load(ordering: .relaxed) }

  /// Throws ``LMDBError/Code/closed`` when the environment is closed. Call it with `resizeLock`
  /// held (shared or exclusively), which keeps ``close()`` from running until the caller is done
  /// with the handle.
  func checkOpen(_ operation: StaticString) throws(LMDBError) {
    if _slowPath(closed.load(ordering: .relaxed)) {
      throw LMDBError(
        code: .closed, operation: "\(operation)", context: path,
        explanation: "the environment at '\(path)' is closed")
    }
  }

  /// Refuses a data file shorter than its own meta page says: LMDB would map it and crash with
  /// SIGBUS on the first read past its end (a truncated copy, a full disk during a copy).
  private static func checkFileLength(_ env: OpaquePointer, path: String) throws(LMDBError) {
    guard let size = dataFileSize(env) else { return }
    var info = MDB_envinfo()
    var pages = MDB_stat()
    mdb_env_info(env, &info)
    mdb_env_stat(env, &pages)
    let needed = (info.me_last_pgno + 1) * Int(pages.ms_psize)
    if size == 0 {
      throw LMDBError(code: .invalid, operation: "mdb_env_open", context: "\(path)/data.mdb is empty")
    }
    if size < needed {
      throw LMDBError(
        code: .corrupted, operation: "mdb_env_open",
        context: "\(path)/data.mdb is \(size) bytes but its pages reach \(needed): the file is truncated")
    }
  }

  /// The size of the data file of `env` in bytes (`fstat` of LMDB's descriptor), or `nil`.
  private static func dataFileSize(_ env: OpaquePointer) -> Int? {
    var descriptor: mdb_filehandle_t = -1
    var status = stat()
    guard mdb_env_get_fd(env, &descriptor) == 0, fstat(descriptor, &status) == 0 else { return nil }
    return Int(status.st_size)
  }

  /// Opens a named database, creating it with `flags` if ``Database/Flags/create`` is given.
  ///
  /// Handles are cached: opening the same name again returns the same handle. Open databases at
  /// start-up, before transactions run on other threads (LMDB's rule for `mdb_dbi_open`).
  /// - Throws: ``LMDBError`` naming the database; `notFound` when it does not exist and
  ///   `create` was not given.
  public func openDatabase(_ name: String?, flags: Database.Flags = [.create]) throws(LMDBError) -> Database {
    let key = name ?? ""
    if let cached = databases.withLock({ $0[key] }) { return cached }
    let create = flags.contains(.create) && !options.readOnly
    let body: (Transaction) throws(LMDBError) -> Database = { txn throws(LMDBError) in
      var dbi = MDB_dbi()
      let openFlags = create ? flags.rawValue : flags.subtracting(.create).rawValue
      try check(mdb_dbi_open(txn.handle, name, openFlags, &dbi), "mdb_dbi_open", context: key)
      return Database(handle: dbi, name: name, flags: flags.subtracting(.create))
    }
    let database: Database
    do {
      database = create ? try write(body) : try read(body)
    } catch let error as LMDBError {
      throw error
    } catch {
      throw LMDBError(code: .invalid, operation: "mdb_dbi_open", context: "\(key): \(error)")
    }
    databases.withLock { $0[key] = database }
    return database
  }

  /// The current size of the memory map in bytes.
  public var mapSize: Int { mapSizeState.withLock { $0 } }

  /// Facts about the environment and its use.
  public struct Info: Sendable {
    /// Size of the memory map in bytes.
    public var mapSize: Int
    /// Number of the last used page; `(lastPage + 1) * pageSize` bytes of the file are in use.
    public var lastPage: Int
    /// ID of the last committed transaction.
    public var lastTransaction: Int
    /// The most reader slots ever in use at once since the lock file was created (LMDB's
    /// `me_numreaders`; it does not go down when slots are freed).
    public var readers: Int
    /// Maximum number of reader slots.
    public var maxReaders: Int
    /// The page size in bytes.
    public var pageSize: Int
  }

  /// Facts about the environment (`mdb_env_info`, `mdb_env_stat`).
  /// - Throws: ``LMDBError/Code/closed`` after ``close()``.
  public func info() throws(LMDBError) -> Info {
    try resizeLock.withShared { () throws(LMDBError) -> Info in
      try checkOpen("mdb_env_info")
      var info = MDB_envinfo()
      var stat = MDB_stat()
      mdb_env_info(handle, &info)
      mdb_env_stat(handle, &stat)
      return Info(
        mapSize: info.me_mapsize, lastPage: info.me_last_pgno, lastTransaction: info.me_last_txnid,
        readers: Int(info.me_numreaders), maxReaders: Int(info.me_maxreaders), pageSize: Int(stat.ms_psize))
    }
  }

  /// Keeps `data.mdb` written with zeros up to ``Options/preallocation`` bytes past its last used
  /// page, when less than half of that remains. Call only with a write transaction open: LMDB's
  /// writer lock keeps every other writer, of any process, out, and pages past the file's end are
  /// written only by this transaction's commit, after the zeros.
  func preallocate() {
    let window = options.preallocation
    guard window > 0, options.durability == .durable else { return }
    var info = MDB_envinfo()
    mdb_env_info(handle, &info)
    let used = (info.me_last_pgno + 1) * pageSize
    // The common case, on every commit: enough of the file is left.
    let knownEnd = fileEnd.load(ordering: .relaxed)
    if knownEnd >= used + window / 2 { return }
    var target = min(used + window, mapSize)
    target -= target % pageSize
    // Near the map's end the low-water mark is the map's end too, so that a full window that
    // cannot be had does not cost an `fstat` per commit (each would dirty the inode again).
    let lowWater = min(used + window / 2, target)
    guard knownEnd < lowWater, var end = Self.dataFileSize(handle) else { return }
    if end < lowWater {
      var descriptor: mdb_filehandle_t = -1
      guard mdb_env_get_fd(handle, &descriptor) == 0 else { return }
      Self.zeros.withUnsafeBytes { zeros in
        while end < target {
          let written = pwrite(descriptor, zeros.baseAddress, min(zeros.count, target - end), off_t(end))
          guard written > 0 else { return }  // best effort: LMDB's own write will report a full disk
          end += written
        }
      }
    }
    fileEnd.store(end, ordering: .relaxed)
  }

  /// Lowers what ``preallocate()`` knows of the data file's end to at most `end` (after the
  /// file was truncated).
  func forgetFileEnd(below end: Int) {
    if fileEnd.load(ordering: .relaxed) > end { fileEnd.store(end, ordering: .relaxed) }
  }

  /// What ``preallocate()`` writes, a block at a time.
  private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

  /// Clears stale reader slots if the last check was more than a second ago (called by writers).
  func clearStaleReadersPeriodically() {
    let now = ContinuousClock.now
    let due = lastReaderCheck.withLock { last -> Bool in
      guard now - last > .seconds(1) else { return false }
      last = now
      return true
    }
    if due {
      resizeLock.withShared {
        guard !closed.load(ordering: .relaxed) else { return }
        var dead: Int32 = 0
        _ = mdb_reader_check(handle, &dead)  // best effort: a failure here only delays the clean-up
      }
    }
  }

  /// Clears reader slots left behind by dead processes (`mdb_reader_check`).
  /// - Returns: how many slots were cleared.
  @discardableResult
  public func clearStaleReaders() throws(LMDBError) -> Int {
    try resizeLock.withShared { () throws(LMDBError) -> Int in
      try checkOpen("mdb_reader_check")
      var dead: Int32 = 0
      try check(mdb_reader_check(handle, &dead), "mdb_reader_check", context: path)
      return Int(dead)
    }
  }

  /// Flushes the data buffers to disk (`mdb_env_sync`), for environments opened with ``Durability/noSync``.
  public func sync() throws(LMDBError) {
    try resizeLock.withShared { () throws(LMDBError) in
      try checkOpen("mdb_env_sync")
      try check(mdb_env_sync(handle, 1), "mdb_env_sync", context: path)
    }
  }

  /// Grows the map to at least twice its size (or adopts a larger size set by another process).
  /// - Parameter adoptOnly: only adopt the size another process set (`MDB_MAP_RESIZED`).
  /// - Throws: ``LMDBError`` with code `mapFull` when the map is at its maximum size already, or
  ///   the error of `mdb_env_set_mapsize`.
  func growMap(adoptOnly: Bool) throws(LMDBError) {
    try resizeLock.withExclusive { () throws(LMDBError) in
      try checkOpen("mdb_env_set_mapsize")
      try mapSizeState.withLock { (size: inout Int) throws(LMDBError) in
        if adoptOnly {
          try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize", context: path)
        } else {
          guard size < options.maximumMapSize else {
            throw LMDBError(
              code: .mapFull, operation: "mdb_env_set_mapsize",
              context: "\(path): the map reached its maximum of \(options.maximumMapSize) bytes")
          }
          let target = min(max(size * 2, size + (1 << 20)), options.maximumMapSize)
          try check(mdb_env_set_mapsize(handle, target), "mdb_env_set_mapsize", context: path)
        }
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        size = info.me_mapsize
      }
    }
  }
}
