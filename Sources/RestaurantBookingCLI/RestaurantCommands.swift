import EventLog
import EventLogCLI
import Foundation
import RestaurantBooking

/// `eventlog restaurants sync`: fetch the remote list and append the diff.
struct RestaurantsSyncCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "sync", abstract: "Fetch the restaurant list and append the diff as events; print the counts.",
    discussion: """
      Only a complete snapshot is diffed: a failed page, a malformed row or a duplicate id fails the sync \
      and nothing is appended. The same snapshot twice appends nothing. From a URL, each page must arrive \
      within 30 s and the whole list within --deadline; progress is shown on a terminal while paging.
      """)

  /// The default of `--deadline`, in seconds.
  static let defaultDeadline = 300

  @Option(
    "from", "URL|FILE|-", help: "The Supabase project URL, a file holding one response body, or - for stdin.",
    type: .nonEmpty("a URL, a file or -"))
  var from: String
  @Option("api-key", "KEY", help: "The Supabase API key (default: $SUPABASE_ANON_KEY); never printed.")
  var apiKey: String?
  @Option(
    "deadline", "SECONDS",
    help:
      "Give up fetching from a URL after this long, all pages together (default: \(RestaurantsSyncCommand.defaultDeadline)).",
    type: .integer(in: 1...86_400))
  var deadline: Int = RestaurantsSyncCommand.defaultDeadline
  @Flag("json", help: #"As {"added", "updated", "removed", "unchanged"}."#)
  var json: Bool

  /// Whether `--from` is an http(s) URL (in any case), which needs the API key.
  var isRemote: Bool { SupabaseRestaurantSource.handles(from) }

  func run(_ context: CommandContext) async throws {
    let key = apiKey ?? context.environment["SUPABASE_ANON_KEY"]
    if isRemote && (key ?? "").isEmpty {
      throw UsageError("'--from \(from)' needs an API key: give '--api-key <KEY>' or set SUPABASE_ANON_KEY")
    }
    if from == "-" && StandardStreams.wasClosed(0) { throw InputError(name: from, reason: "it is closed") }
    let commands = try context.plugin(RestaurantBookingCommands.self)
    let source = try commands.restaurantSource(from, isRemote ? key : nil)
    // An existing environment is opened first, so that a broken one is reported before any
    // fetching; a new one is created only once the whole snapshot is here, so that a sync that
    // cannot fetch one creates nothing.
    let exists =
      (try? FileManager.default.attributesOfItem(atPath: context.databasePath + "/data.mdb")) != nil
    let existing = exists ? try context.openStore(.create) : nil
    let rows: [RemoteRestaurant]
    if let paged = source as? any PagedRestaurantSource {
      let progress = ProgressReporter("sync", console: context.console)
      do {
        rows = try await paged.fetchAll(deadline: .seconds(deadline)) { fetched in
          progress.update(completed: UInt64(fetched.rows), unit: "rows", detail: "\(fetched.pages) pages")
        }
      } catch {
        progress.finish()  // end the progress line before the error
        throw error
      }
      progress.finish()
    } else {
      rows = try await source.fetchAll()
    }
    let store = try existing ?? context.openStore(.create)
    let snapshot = FetchedRestaurants(sourceDescription: source.sourceDescription, rows: rows)
    let repository = commands.restaurantRepository(store, snapshot)
    let summary = try await repository.refresh()
    if json {
      context.console.print(
        JSONValue.object([
          ("added", .int(Int64(summary.added))), ("updated", .int(Int64(summary.updated))),
          ("removed", .int(Int64(summary.removed))), ("unchanged", .int(Int64(summary.unchanged))),
        ]).rendered())
    } else {
      context.console.print(
        "added \(summary.added), updated \(summary.updated), removed \(summary.removed), unchanged \(summary.unchanged)"
      )
    }
  }
}

/// `eventlog restaurants list`.
struct RestaurantsListCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "list", abstract: "List the current restaurants, sorted by name.")

  @Flag("json", help: #"As [{"id", "name", "cuisine"}]."#)
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let restaurants = try await context.plugin(RestaurantBookingCommands.self)
      .restaurantRepository(store, NoRestaurantSource()).getAll()
    if json {
      context.console.print(JSONValue.array(restaurants.map(DomainJSON.restaurant)).rendered())
    } else {
      context.console.print(DomainTables.restaurants(restaurants), terminator: "")
    }
  }
}

/// A snapshot already fetched, diffed by the repository as its source's.
struct FetchedRestaurants: RestaurantSource {
  var sourceDescription: String
  var rows: [RemoteRestaurant]

  func fetchAll() async throws -> [RemoteRestaurant] { rows }
}

/// The source of a repository that only reads.
struct NoRestaurantSource: RestaurantSource {
  var sourceDescription: String { "none" }

  func fetchAll() async throws -> [RemoteRestaurant] {
    throw CommandFailure("no restaurant source is configured for this command")
  }
}
