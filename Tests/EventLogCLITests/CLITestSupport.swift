import Foundation
import Testing

/// The outcome of one run of the built `eventlog` binary.
struct Run: CustomStringConvertible {
  var status: Int32
  var stdout: String
  var stderr: String

  var description: String { "status \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs the built `eventlog` executable, as a user would.
struct EventLogBinary {
  /// The executable next to the test bundle (`.build/<config>/eventlog`).
  static let path: String = {
    if let override = ProcessInfo.processInfo.environment["EVENTLOG_BINARY"] { return override }
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidates = [bundle.appendingPathComponent("eventlog").path]
    // Under XCTest the first argument can be the runner; walk up to the build directory.
    candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("eventlog").path)
    candidates.append(
      bundle.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("eventlog").path)
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
  }()

  let directory: URL
  var database: String { directory.appendingPathComponent("test.db").path }

  init() {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "eventlog-cli-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  /// Runs `eventlog --db <test db> arguments…`.
  @discardableResult
  func callAsFunction(
    _ arguments: String..., input: String? = nil, environment: [String: String] = [:],
    useDatabase: Bool = true
  ) throws -> Run {
    try run(arguments, input: input, environment: environment, useDatabase: useDatabase)
  }

  func run(
    _ arguments: [String], input: String? = nil, environment: [String: String] = [:], useDatabase: Bool = true
  ) throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.path)
    process.arguments = (useDatabase ? ["--db", database] : []) + arguments
    var env = ProcessInfo.processInfo.environment
    env["EVENTLOG_DB"] = nil
    env["SUPABASE_ANON_KEY"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.currentDirectoryURL = directory
    let id = UUID().uuidString
    let outURL = directory.appendingPathComponent("out-\(id)")
    let errURL = directory.appendingPathComponent("err-\(id)")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    process.standardOutput = out
    process.standardError = err
    if let input {
      let inURL = directory.appendingPathComponent("in-\(id)")
      try Data(input.utf8).write(to: inURL)
      process.standardInput = try FileHandle(forReadingFrom: inURL)
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    let result = Run(
      status: process.terminationStatus,
      stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    try? FileManager.default.removeItem(at: outURL)
    try? FileManager.default.removeItem(at: errURL)
    return result
  }

  /// Writes `text` to a file in the test directory and returns its path.
  func file(_ name: String, _ text: String) throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
  }

  /// The head sequence, read through `stats --json` (0 when there is no log yet).
  func head() throws -> Int {
    let run = try self("stats", "--json")
    guard run.status == 0,
      let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    else { return 0 }
    return object["head"] as? Int ?? -1
  }

  func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// Parses stdout as JSON.
func json(_ run: Run) throws -> Any {
  try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
}

// MARK: - Fixtures

/// A PostgREST response body of restaurants.
func restaurantsBody(_ rows: [(id: String, name: String, cuisine: String)]) -> String {
  let items = rows.map { #"{"id":"\#($0.id)","name":"\#($0.name)","cuisine":"\#($0.cuisine)"}"# }
  return "[" + items.joined(separator: ",") + "]"
}

let pastaID = "11111111-1111-4111-8111-111111111111"
let sushiID = "22222222-2222-4222-8222-222222222222"
let burgerID = "33333333-3333-4333-8333-333333333333"

let snapshotA = restaurantsBody([
  (pastaID, "Pasta Palace", "Italian"), (sushiID, "Sushi Sensation", "Japanese"),
  (burgerID, "Burger Bonanza", "American"),
])
let snapshotB = restaurantsBody([
  (pastaID, "Pasta Palace", "Italian"), (sushiID, "Sushi Sensation", "Sushi"),
  ("44444444-4444-4444-8444-444444444444", "Taco Town", "Mexican"),
])
