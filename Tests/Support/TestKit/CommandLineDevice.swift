import Foundation

/// One device's environment driven through a built `eventlog`, as a user runs it:
/// `binary --db <its environment> arguments…`, with `environment` set over the inherited one
/// (``runChild(_:_:environment:in:input:)``). The environment lives in a temporary directory of
/// its own, removed with the value's last copy.
///
/// The commands the command-line tests repeat: a command's JSON answer, a booking made (the
/// catalog synced first), the bookings listed. Each throws ``Failure`` when the command fails or
/// answers something else, so a test that uses them fails there.
public struct CommandLineDevice: Sendable {
  /// Why a command's answer was not what the test needs: the command and how it ended.
  public struct Failure: Error, CustomStringConvertible {
    /// What was wrong.
    public var reason: String
    /// The command's arguments.
    public var arguments: [String]
    /// How the command ended.
    public var run: ChildRun

    /// The reason, the command and its outputs.
    public var description: String { "\(reason): \(arguments.joined(separator: " ")): \(run)" }
  }

  /// The `eventlog` executable run.
  public let binary: String
  /// The restaurant catalog ``book(_:restaurant:)`` syncs from: a PostgREST-style JSON array.
  public let catalog: String
  /// Variables set over the inherited environment on every run.
  public var environment: [String: String]
  /// The directory that holds the environment and the test's files.
  public let directory: TemporaryDirectory
  /// The environment's path (`--db`).
  public var database: String { directory.environment() }

  /// A device with an environment of its own, not created yet (the first command creates it).
  /// - Parameters:
  ///   - binary: the `eventlog` executable (``builtProduct(_:override:)``).
  ///   - catalog: the catalog ``book(_:restaurant:)`` syncs; it must list the restaurant booked.
  ///   - label: names the temporary directory.
  ///   - environment: variables set over the inherited environment on every run.
  public init(binary: String, catalog: String, label: String, environment: [String: String] = [:]) {
    self.binary = binary
    self.catalog = catalog
    self.environment = environment
    directory = TemporaryDirectory(label)
  }

  /// Runs `eventlog --db <database> arguments…`, with `extra` set over ``environment``.
  /// - Throws: when the program cannot be started.
  @discardableResult
  public func callAsFunction(
    _ arguments: String..., environment extra: [String: String] = [:]
  ) throws -> ChildRun {
    try run(arguments, environment: extra)
  }

  /// Runs `eventlog --db <database> arguments…`, with `extra` set over ``environment``.
  /// - Throws: when the program cannot be started.
  public func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ChildRun {
    try runChild(binary, ["--db", database] + arguments, environment: environment.merging(extra) { $1 })
  }

  /// The JSON object a command that succeeds prints (`… --json`).
  /// - Throws: ``Failure`` when it exits with another status than 0 or prints no JSON object.
  public func json(_ arguments: String...) throws -> [String: Any] {
    let run = try run(arguments)
    guard run.status == 0, let object = Self.jsonObject(run) else {
      throw Failure(reason: "the command printed no JSON object", arguments: arguments, run: run)
    }
    return object
  }

  /// Syncs ``catalog`` (the same snapshot again appends nothing) and books a table at
  /// `restaurant` for two in 2099, in `name`.
  /// - Returns: the booking's ID, as `bookings create --json` prints it.
  /// - Throws: ``Failure`` when the sync or the booking fails.
  @discardableResult
  public func book(_ name: String = "Ada", restaurant: String = "Pasta Palace") throws -> String {
    let sync = ["restaurants", "sync", "--from", try directory.file("catalog.json", Data(catalog.utf8))]
    let synced = try run(sync)
    guard synced.status == 0 else { throw Failure(reason: "the sync failed", arguments: sync, run: synced) }
    let create = [
      "bookings", "create", "--restaurant", restaurant, "--date", "2099-06-01T19:00:00Z", "--party", "2",
      "--name", name, "--json",
    ]
    let created = try run(create)
    guard created.status == 0, let id = Self.jsonObject(created)?["id"] as? String else {
      throw Failure(reason: "no booking was made", arguments: create, run: created)
    }
    return id
  }

  /// The IDs of the bookings `bookings list --json` lists, sorted.
  /// - Throws: ``Failure`` when the command fails or prints no JSON array.
  public func bookingIDs() throws -> [String] {
    let arguments = ["bookings", "list", "--json"]
    let run = try run(arguments)
    guard run.status == 0,
      let list = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]]
    else {
      throw Failure(reason: "the bookings were not listed", arguments: arguments, run: run)
    }
    return list.compactMap { $0["id"] as? String }.sorted()
  }

  /// The JSON object `run` printed, or `nil`.
  private static func jsonObject(_ run: ChildRun) -> [String: Any]? {
    try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
  }
}
