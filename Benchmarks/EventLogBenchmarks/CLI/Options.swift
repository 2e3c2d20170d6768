/// The command line: `eventlog-benchmarks [--quick] [--json FILE] [--svg FILE] [WORKLOAD…]`.
struct Options: Sendable {
  var quick = false
  var jsonPath: String?
  var svgPath: String?
  var runs: Int?
  var batchSize: Int?
  var size: Int?
  var ids = FixtureIDs.Version.timeOrdered
  var workDirectory: String?
  var allowDebug = false
  var help = false
  var list = false
  var workloads: [Workload] = Workload.allCases
  var systems: Set<SystemID> = Set(SystemID.allCases)

  struct UsageError: Error, CustomStringConvertible {
    var description: String
  }

  static let usage = """
    USAGE: eventlog-benchmarks [--quick] [--json FILE] [--svg FILE] [--runs N] [--size N]
                               [--batch-size N] [--ids 7|4] [--system NAME]… [--work-dir DIR] [--allow-debug]
                               [--list] [WORKLOAD…]

    Runs the workloads of GUIDE 3.3 against eventlog, lmdb-raw, lmdb-append, sqlite, seed, libpq-raw and
    eventlog-https, each measurement in a child process, and prints a table of rates and ratios to eventlog.
    The replicate workloads start a throwaway PostgreSQL server (fsync off) for the run and stop it at the
    end; eventlog-https reaches it through the HTTPS transport and the PostgREST stand-in of the test support.

    ARGUMENTS:
      WORKLOAD…          workloads to run: a name or a prefix (append, replay, replicate, …); all by default

    OPTIONS:
      --quick            smaller sizes, 3 runs: under two minutes on 2 cores (default: 5 runs, under fifteen)
      --json FILE        write the results as JSON ({"environment": …, "results": […]})
      --svg FILE         draw each system's rate relative to eventlog as a bar chart
      --runs N           measured runs per measurement (after one warm-up)
      --size N           run every selected workload at this one size (events, restaurants or rows)
      --batch-size N     events per durable commit in append.batched (default 1000, as in GUIDE 3.3);
                         with another size, the batched targets are not checked and each system's
                         batched rate is compared with its append.single rate instead
      --ids 7|4          the fixtures' event and booking IDs: version 7, time-ordered, as the library makes
                         them (default), or version 4, random, as it made them before
      --system NAME      only this system (repeatable): eventlog, lmdb-raw, lmdb-append, sqlite, seed,
                         libpq-raw, eventlog-https
      --work-dir DIR     scratch directory for the stores (default: a new one in $TMPDIR); use a real disk
      --allow-debug      run even in a debug build (numbers are then meaningless)
      --list             list the workloads and their systems
      -h, --help         show this help
    """

  static func parse(_ arguments: [String]) throws(UsageError) -> Options {
    var options = Options()
    var filters: [String] = []
    var systems: [SystemID] = []
    var index = 0
    func value(_ flag: String) throws(UsageError) -> String {
      index += 1
      guard index < arguments.count, !arguments[index].hasPrefix("--") else {
        throw UsageError(description: "missing value for '\(flag)'")
      }
      return arguments[index]
    }
    func positive(_ flag: String) throws(UsageError) -> Int {
      let text = try value(flag)
      guard let number = Int(text), number > 0 else {
        throw UsageError(description: "'\(flag)' needs a positive integer, not '\(text)'")
      }
      return number
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--quick": options.quick = true
      case "--json": options.jsonPath = try value(argument)
      case "--svg": options.svgPath = try value(argument)
      case "--work-dir": options.workDirectory = try value(argument)
      case "--allow-debug": options.allowDebug = true
      case "--list": options.list = true
      case "-h", "--help": options.help = true
      case "--runs": options.runs = try positive(argument)
      case "--batch-size": options.batchSize = try positive(argument)
      case "--size": options.size = try positive(argument)
      case "--ids":
        let text = try value(argument)
        guard let number = Int(text), let version = FixtureIDs.Version(rawValue: number) else {
          throw UsageError(description: "'--ids' is 7 or 4, not '\(text)'")
        }
        options.ids = version
      case "--system":
        let text = try value(argument)
        guard let system = SystemID(rawValue: text) else {
          throw UsageError(
            description:
              "unknown system '\(text)' for '--system' (one of \(SystemID.allCases.map(\.rawValue).joined(separator: ", ")))"
          )
        }
        systems.append(system)
      default:
        if argument.hasPrefix("-") { throw UsageError(description: "unknown option '\(argument)'") }
        filters.append(argument)
      }
      index += 1
    }
    if !systems.isEmpty { options.systems = Set(systems) }
    if !filters.isEmpty {
      var selected: [Workload] = []
      for filter in filters {
        let matches = Workload.allCases.filter {
          $0.rawValue == filter || $0.rawValue.hasPrefix(filter + ".")
        }
        guard !matches.isEmpty else {
          throw UsageError(
            description:
              "unknown workload '\(filter)' (one of \(Workload.allCases.map(\.rawValue).joined(separator: ", ")))"
          )
        }
        selected.append(contentsOf: matches)
      }
      options.workloads = Workload.allCases.filter(selected.contains)
    }
    return options
  }

  var scale: Scale {
    var scale = quick ? Scale.quick : Scale.standard
    if let runs { scale.runs = runs }
    if let batchSize { scale.batchSize = batchSize }
    if let size { scale.sizeOverride = size }
    scale.ids = ids
    return scale
  }
}
