/// A workload of the contract (GUIDE 3.3), with the systems that run it.
enum Workload: String, CaseIterable, Sendable, Codable {
  case appendBatched = "append.batched"
  case appendSingle = "append.single"
  case appendConcurrent = "append.concurrent"
  case replay
  case syncDiff = "sync.diff"
  case readAll = "read.all"
  case replicatePush = "replicate.push"
  case replicatePull = "replicate.pull"
  case auditQuery = "audit.query"

  /// The systems of the contract for this workload, `eventlog` first.
  var systems: [SystemID] {
    switch self {
    case .appendBatched, .appendSingle, .replay: [.eventlog, .lmdbRaw, .lmdbAppend, .sqlite]
    case .appendConcurrent: [.eventlog, .lmdbRaw, .sqlite]
    case .syncDiff: [.eventlog, .seed, .sqlite]
    case .readAll: [.eventlog, .lmdbRaw, .sqlite]
    case .replicatePush, .replicatePull: [.eventlog, .libpqRaw, .eventlogHTTPS]
    case .auditQuery: [.eventlog, .sqlite]
    }
  }

  /// What one operation is.
  var unit: String {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent, .replay, .replicatePush, .replicatePull,
      .auditQuery:
      "events"
    case .syncDiff: "restaurants"
    case .readAll: "rows"
    }
  }

  /// One line on what the workload does.
  var summary: String {
    switch self {
    case .appendBatched:
      "booking events (~200-byte payloads in clear, name and notes sealed) with ID index, stream index, read-model rows; 1000 per durable commit (--batch-size)"
    case .appendSingle: "booking events, each its own durable commit"
    case .appendConcurrent: "8 tasks appending single booking events durably at once"
    case .replay:
      "rebuild the read models from N mixed events (booking created/deleted, restaurant added/updated/removed)"
    case .syncDiff: "remote snapshot of R restaurants, 1% changed, diffed against R local and applied"
    case .readAll: "all restaurants and bookings (1:4) read into domain models"
    case .replicatePush:
      "local booking events pushed to the PostgreSQL the benchmark started (fsync off), 500 per server transaction"
    case .replicatePull:
      "server events pulled into a fresh local log, 1000 per page, one durable local commit each"
    case .auditQuery:
      "an auditor's questions through the indexes: 10 time windows of 1% of the N events, one origin device's events "
        + "(each read in full), the counts per type; rate = events returned"
    }
  }

  /// Whether the runs start from a prebuilt fixture (built by a separate child, not measured).
  func needsFixture(_ system: SystemID) -> Bool {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent: false
    case .replay, .readAll, .replicatePush, .replicatePull, .auditQuery: true
    case .syncDiff: system != .seed
    }
  }

  /// Whether every system starts from one fixture, built once (by the library, before any system
  /// is measured) instead of one per system: the replicate workloads, whose local logs carry a
  /// random device ID and whose server database is the same for every system (`eventlog-https`
  /// reaches the same events in a Supabase project's database on the same server, made with the
  /// fixture: ``ReplicationFixture``).
  var sharesFixture: Bool { needsServer }

  /// Whether the workload talks to the PostgreSQL server that the parent starts for the run.
  var needsServer: Bool { self == .replicatePush || self == .replicatePull }

  /// Whether a run changes its fixture (it then works on a fresh copy, made before the clock starts).
  var mutatesFixture: Bool { self == .syncDiff || self == .replicatePush }

  /// Whether a run's store on disk is the fixture itself (read in place), not the run's own
  /// directory (a copy of the fixture, or a store made from nothing).
  func readsFixtureInPlace(_ system: SystemID) -> Bool {
    needsFixture(system) && !mutatesFixture && !needsServer
  }

  /// A workload of durable commits, whose rate follows the disk's drifting speed: measured in
  /// rounds across systems (``ParentRunner``). `replicate.pull` is one (a durable local commit of
  /// 1000 events a page, compared with `append.batched`'s 1000-event commits); `replicate.push`
  /// writes to a server without fsync and commits locally only its mark, once a batch.
  var isDurableWrite: Bool {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent, .replicatePull: true
    case .replay, .syncDiff, .readAll, .replicatePush, .auditQuery: false
    }
  }
}

/// A system under test.
enum SystemID: String, CaseIterable, Sendable, Codable {
  case eventlog
  case lmdbRaw = "lmdb-raw"
  case lmdbAppend = "lmdb-append"
  case sqlite
  case seed
  case libpqRaw = "libpq-raw"
  /// eventlog's `Replicator` through the HTTPS transport (`SupabaseTransport`) and the PostgREST
  /// stand-in of the test support, over the same server (replicate workloads only).
  case eventlogHTTPS = "eventlog-https"
}

/// `append.concurrent`: how many tasks (or threads) append at once.
enum ConcurrentWorkload {
  static let tasks = 8

  /// The records each task appends: every eighth, so that at any moment the eight tasks append
  /// neighbouring records, as eight appenders making their IDs as they go would (time-ordered IDs
  /// made at the same moment are neighbours).
  static func shares<Record>(of records: [Record]) -> [[Record]] {
    (0..<tasks).map { task in Array(stride(from: task, to: records.count, by: tasks).map { records[$0] }) }
  }
}
