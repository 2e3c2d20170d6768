import EventLog
import Foundation
import RestaurantBooking
import TestKit
import Testing

/// The outcome of one run of the built `eventlog` binary.
typealias Run = ChildRun

/// Runs the built `eventlog` executable, as a user would.
struct EventLogBinary {
  /// The executable next to the test bundle (`.build/<config>/eventlog`).
  static let path = builtProduct("eventlog", override: "EVENTLOG_BINARY")
  /// The users app's own `eventlog` (`Tests/Support/UserEventLog`).
  static let userAppPath = builtProduct("user-eventlog", override: "USER_EVENTLOG_BINARY")

  let directory: URL
  /// The executable this value runs.
  let executable: String
  var database: String { directory.appendingPathComponent("test.db").path }

  init(executable: String = Self.path) {
    self.executable = executable
    directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "eventlog-cli-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  private init(executable: String, directory: URL) {
    self.executable = executable
    self.directory = directory
  }

  /// `executable` on this value's directory and environment.
  func running(_ executable: String) -> EventLogBinary {
    EventLogBinary(executable: executable, directory: directory)
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
    try runChild(
      executable, (useDatabase ? ["--db", database] : []) + arguments, environment: environment,
      in: directory.path, input: input.map { Data($0.utf8) })
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

/// The stored bytes of the customer's name in the `BookingCreated` at `sequence` of the
/// environment at `path`: the bytes the record and the booking row hold (sealed), for tests that
/// damage every copy of them in `data.mdb`.
func sealedCustomerName(ofEvent sequence: UInt64, in path: String) async throws -> Data {
  var options = EventStore.Options()
  options.readOnly = true
  let store = try EventStore(path: path, schema: .restaurantBooking, options: options)
  defer { Task { await store.close() } }
  let event = try #require(try store.event(at: sequence))
  return Data(try #require(try event.decode(BookingCreated.self).customerName.storedBytes))
}
