/// A workload of the contract (GUIDE 3.3), with the systems that run it.
enum Workload: String, CaseIterable, Sendable, Codable {
  case appendBatched = "append.batched"
  case appendSingle = "append.single"
  case appendConcurrent = "append.concurrent"
  case replay
  case syncDiff = "sync.diff"
  case readAll = "read.all"

  /// The systems of the contract for this workload, `eventlog` first.
  var systems: [SystemID] {
    switch self {
    case .appendBatched, .appendSingle, .replay: [.eventlog, .lmdbRaw, .lmdbAppend, .sqlite]
    case .appendConcurrent: [.eventlog, .lmdbRaw, .sqlite]
    case .syncDiff: [.eventlog, .seed, .sqlite]
    case .readAll: [.eventlog, .lmdbRaw, .sqlite]
    }
  }

  /// What one operation is.
  var unit: String {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent, .replay: "events"
    case .syncDiff: "restaurants"
    case .readAll: "rows"
    }
  }

  /// One line on what the workload does.
  var summary: String {
    switch self {
    case .appendBatched:
      "booking events (~200-byte payloads) with ID index, stream index, read-model rows; 1000 per durable commit (--batch-size)"
    case .appendSingle: "booking events, each its own durable commit"
    case .appendConcurrent: "8 tasks appending single booking events durably at once"
    case .replay:
      "rebuild the read models from N mixed events (booking created/deleted, restaurant added/updated/removed)"
    case .syncDiff: "remote snapshot of R restaurants, 1% changed, diffed against R local and applied"
    case .readAll: "all restaurants and bookings (1:4) read into domain models"
    }
  }

  /// Whether the runs start from a prebuilt fixture (built by a separate child, not measured).
  func needsFixture(_ system: SystemID) -> Bool {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent: false
    case .replay, .readAll: true
    case .syncDiff: system != .seed
    }
  }

  /// Whether a run changes its fixture (it then works on a fresh copy, made before the clock starts).
  var mutatesFixture: Bool { self == .syncDiff }

  /// A workload of durable commits, whose rate follows the disk's drifting speed: measured in
  /// rounds across systems (``ParentRunner``).
  var isDurableWrite: Bool {
    switch self {
    case .appendBatched, .appendSingle, .appendConcurrent: true
    case .replay, .syncDiff, .readAll: false
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
