import EventLog
import Foundation
import RestaurantBooking

/// `eventlog replay`: rebuild the projections from the log and compare them with the live ones,
/// show the state as of an event, or swap the rebuilt projections in.
struct ReplayCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "replay", abstract: "Rebuild the projections from the log; compare them with the live ones.",
    discussion:
      "Without --to, exits with status 1 and names the first difference when the rebuilt projections differ from the live ones."
  )

  @Option(
    "to", "SEQ", help: "Stop at this event and show the state as of then (time travel).", type: .sequence)
  var to: UInt64?
  @Flag("json", help: #"As {"toSeq", "restaurants": [...], "bookings": [...]}."#)
  var json: Bool
  @Flag("apply", help: "Swap the rebuilt projections in, atomically.")
  var apply: Bool

  func validate() throws(UsageError) {
    if apply && to != nil {
      throw UsageError("'--apply' rebuilds the current state and cannot be combined with '--to'")
    }
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(apply ? .write : .read)
    let head = try store.head()
    if let to, to > head {
      throw CommandFailure("'--to \(to)' is past the head of the log (\(head))")
    }
    let progress = ProgressReporter("replay", console: context.console)
    let report: @Sendable (ProgressReport) -> Void = {
      progress.update(completed: $0.completed, total: $0.total)
    }
    let replay =
      apply
      ? try await store.rebuildProjections(progress: report) : try store.replay(through: to, progress: report)
    progress.finish()
    let seconds =
      Double(replay.duration.components.seconds) + Double(replay.duration.components.attoseconds) / 1e18
    let rate = seconds > 0 ? Double(replay.eventCount) / seconds : 0
    let difference = (apply || to != nil) ? nil : try store.firstDifference(from: replay)
    let restaurants = try RestaurantQueries.all(in: replay.projection(RestaurantQueries.projection))
    let bookings = try BookingQueries.all(in: replay.projection(BookingQueries.projection))
    if json {
      var members: [(String, JSONValue)] = [
        ("toSeq", .uint(replay.throughSequence)),
        ("restaurants", .array(restaurants.map(DomainJSON.restaurant))),
        ("bookings", .array(bookings.map(DomainJSON.booking))),
        ("events", .int(Int64(replay.eventCount))),
      ]
      if to == nil && !apply { members.append(("matchesLive", .bool(difference == nil))) }
      context.console.print(JSONValue.object(members).rendered())
    } else {
      let summary =
        "replayed \(replay.eventCount) events in \(String(format: "%.3f", seconds)) s (\(Formatting.rate(rate)) events/s)"
      if apply {
        context.console.print(
          "\(summary); the rebuilt projections are now live (through event \(replay.throughSequence)).")
      } else if to != nil {
        context.console.print("\(summary); state as of event \(replay.throughSequence):")
        context.console.print("")
        context.console.print(DomainTables.restaurants(restaurants), terminator: "")
        context.console.print("")
        context.console.print(DomainTables.bookings(bookings), terminator: "")
      } else if difference == nil {
        context.console.print("\(summary); the projections match the live state.")
      } else {
        context.console.print(summary)
      }
    }
    if let difference {
      throw CommandFailure("the replay differs from the live projections: \(difference)")
    }
  }
}
