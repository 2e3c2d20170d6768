import EventLog
import Foundation

/// `eventlog-stress hold-reader`: opens a read transaction and sleeps in it until killed, to
/// leave a stale reader slot behind.
struct HoldReaderCommand: StressCommand {
  static let name = "hold-reader"
  static let usage = "eventlog-stress hold-reader --db PATH"
  static let help = """
    Open the store read-only, begin a read transaction, print `holding <head>` and sleep inside the
    transaction until killed. While it lives, LMDB cannot reuse pages freed after its snapshot.

    Usage: \(usage)
    """
  static let options: [String: Bool] = ["db": true]

  var path: String

  init(_ options: ParsedOptions) throws(UsageError) {
    path = try options.required("db")
  }

  func run() async throws -> Int32 {
    var options = EventStore.Options()
    options.readOnly = true
    let store = try openStore(path: path, projections: [], options: options)
    try store.read { snapshot in
      Output.line("holding \(try snapshot.head())")
      while true { sleep(3_600) }
    }
    return StressProgram.failure  // not reached: the transaction is held until the process is killed
  }
}

/// `eventlog-stress hold-open`: keeps the environment open, outside any transaction, until killed.
///
/// While another process has the environment open, LMDB cannot reset its reader table on the next
/// open (it does when the opener is alone), so a dead reader's slot must be found by
/// `mdb_reader_check`: this is how the tests make sure that check runs.
struct HoldOpenCommand: StressCommand {
  static let name = "hold-open"
  static let usage = "eventlog-stress hold-open --db PATH"
  static let help = """
    Open the store read-only, print `open <head>` and sleep, outside any transaction, until killed.

    Usage: \(usage)
    """
  static let options: [String: Bool] = ["db": true]

  var path: String

  init(_ options: ParsedOptions) throws(UsageError) {
    path = try options.required("db")
  }

  func run() async throws -> Int32 {
    var options = EventStore.Options()
    options.readOnly = true
    let store = try openStore(path: path, projections: [], options: options)
    Output.line("open \(try store.head())")
    while true { sleep(3_600) }
  }
}
