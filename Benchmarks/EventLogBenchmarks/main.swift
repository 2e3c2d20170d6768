import EventLog
import Foundation

// The composition root of the benchmark: a parent that plans and reports, or (with the hidden
// `--internal-child` flag) a child that prepares or measures one workload on one system.

let arguments = Array(CommandLine.arguments.dropFirst())

/// Refuses a debug build unless `--allow-debug` is given: its numbers would be meaningless.
func refuseDebugBuild(allowed: Bool) {
  #if DEBUG
    Console.progress(
      """
      ********************************************************************************
      WARNING: eventlog-benchmarks was built in DEBUG. Its numbers are meaningless.
      Build and run in release:  swift run -c release eventlog-benchmarks
      ********************************************************************************
      """)
    if !allowed {
      Console.progress("Error: refusing to run a debug build (pass --allow-debug to run it anyway)")
      exit(1)
    }
  #endif
}

if arguments.first == ChildFlag.name {
  refuseDebugBuild(allowed: arguments.contains("--allow-debug"))
  guard arguments.count >= 2,
    let request = try? PayloadJSONDecoder().decode(ChildRequest.self, from: Data(arguments[1].utf8))
  else {
    Console.progress("Error: \(ChildFlag.name) needs a request")
    exit(64)
  }
  do {
    let report = try await ChildMain.run(request)
    FileHandle.standardOutput.write(try PayloadJSONEncoder().encode(report))
    exit(0)
  } catch {
    Console.progress(
      "Error: \(request.workload.rawValue) on \(request.system.rawValue) at \(request.size): \(error)")
    exit(1)
  }
}

let options: Options
do {
  options = try Options.parse(arguments)
} catch {
  Console.progress("Error: \(error)\n\n\(Options.usage)")
  exit(64)
}
if options.help {
  print(Options.usage)
  exit(0)
}
if options.list {
  for workload in Workload.allCases {
    print(
      "\(workload.rawValue): \(workload.systems.map(\.rawValue).joined(separator: ", ")) — \(workload.summary)"
    )
  }
  exit(0)
}
refuseDebugBuild(allowed: options.allowDebug)

let scale = options.scale
let ownsWorkDirectory = options.workDirectory == nil
let workDirectory =
  options.workDirectory
  ?? (NSTemporaryDirectory() + "/eventlog-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")
do {
  try FileSystem.createDirectory(workDirectory)
} catch {
  Console.progress("Error: cannot create the work directory \(workDirectory): \(error)")
  exit(1)
}
var environment = BenchmarkEnvironment.current(
  mode: scale.name, batchSize: scale.batchSize, sizeOverride: scale.sizeOverride,
  idVersion: scale.ids.rawValue, workDirectory: workDirectory)
let outcome = ParentRunner(options: options, scale: scale, workDirectory: workDirectory).run()
if ownsWorkDirectory { FileSystem.remove(workDirectory) }
environment.loadAverageAtEnd = BenchmarkEnvironment.loadAverage()
environment.postgresVersion = outcome.serverVersion
let targets = Targets.evaluate(outcome.measurements, batchSize: scale.batchSize)
let comparisons = BatchComparison.evaluate(outcome.measurements, batchSize: scale.batchSize)
print(
  TableReport.render(
    outcome.measurements, failures: outcome.failures, targets: targets, comparisons: comparisons,
    environment: environment))
do {
  if let path = options.jsonPath {
    try JSONReport(
      environment: environment, results: outcome.measurements, targets: targets,
      batchComparisons: comparisons, failures: outcome.failures
    )
    .write(to: path)
  }
  if let path = options.svgPath {
    try SVGChart.render(outcome.measurements, environment: environment).write(
      toFile: path, atomically: true, encoding: .utf8)
  }
} catch {
  Console.progress("Error: writing the report: \(error)")
  exit(1)
}
exit(outcome.failures.isEmpty ? 0 : 1)
