import EventLog
import Foundation

/// `eventlog replay`: rebuild the projections from the log and compare them with the live ones,
/// show the state as of an event, or swap the rebuilt projections in.
struct ReplayCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "replay", abstract: "Rebuild the projections from the log; compare them with the live ones.",
    discussion:
      "Without --to or --at, exits with status 1 and names the first difference when the rebuilt projections differ from the live ones. Projections this build cannot compare (another app's; its own that the environment does not hold) are named, not counted as differences."
  )

  @Option(
    "to", "SEQ", help: "Stop at this event and show the state as of then (time travel).", type: .sequence)
  var to: UInt64?
  @Option(
    "at", "TIME",
    help:
      "Stop where the log stood at this time (ISO 8601): up to the event before the first one recorded later; show the state as of then.",
    type: .iso8601)
  var at: Date?
  @Flag(
    "json",
    help: #"As {"toSeq", the app's state ("restaurants": [...], …), "events", "matchesLive", "notCompared"}."#
  )
  var json: Bool
  @Flag("apply", help: "Swap the rebuilt projections in, atomically.")
  var apply: Bool

  func validate() throws(UsageError) {
    if apply && (to != nil || at != nil) {
      throw UsageError(
        "'--apply' rebuilds the current state and cannot be combined with '\(to != nil ? "--to" : "--at")'")
    }
    if to != nil && at != nil {
      throw UsageError("'--to' and '--at' both say where to stop: give one")
    }
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(apply ? .write : .read)
    let head = try store.head()
    if let to, to > head {
      throw CommandFailure("'--to \(to)' is past the head of the log (\(head))")
    }
    var stop = to
    if let at {
      stop = try DiffCommand.resolve(.time(at), argument: "--at", in: store, console: context.console)
    }
    let progress = ProgressReporter("replay", console: context.console)
    let report: @Sendable (EventStore.ProgressReport) -> Void = {
      progress.update(completed: $0.completed, total: $0.total)
    }
    let replay =
      apply
      ? try await store.rebuildProjections(progress: report)
      : try store.replay(through: stop, progress: report)
    progress.finish()
    let seconds =
      Double(replay.duration.components.seconds) + Double(replay.duration.components.attoseconds) / 1e18
    let rate = seconds > 0 ? Double(replay.eventCount) / seconds : 0
    let compares = !apply && stop == nil
    // What the comparison leaves out: another app's projections, this build's own that the
    // environment does not hold, and those behind the head (compared as of their checkpoint).
    let comparison = compares ? try store.compare(with: replay) : nil
    let difference = comparison?.difference
    let notCompared = comparison?.notCompared ?? []
    let compared = comparison?.compared ?? []
    let state = try context.dependencies.plugins.flatMap { try $0.replayedState(replay) }
    if json {
      var members: [(String, JSONValue)] = [("toSeq", .uint(replay.throughSequence))]
      members += state.map { ($0.name, $0.json) }
      members.append(("events", .int(Int64(replay.eventCount))))
      if compares {
        members.append(("matchesLive", .bool(difference == nil)))
        members.append(("compared", .array(compared.map(JSONValue.string))))
        members.append(("notCompared", .array(notCompared.map(Self.json))))
      }
      context.console.print(JSONValue.object(members).rendered())
    } else {
      let summary =
        "replayed \(replay.eventCount) events in \(String(format: "%.3f", seconds)) s (\(Formatting.rate(rate)) events/s)"
      if apply {
        context.console.print(
          "\(summary); the rebuilt projections are now live (through event \(replay.throughSequence)).")
      } else if stop != nil {
        let time = at.map { " (the log at \(ISO8601.string(from: $0)))" } ?? ""
        context.console.print("\(summary); state as of event \(replay.throughSequence)\(time):")
        for section in state {
          context.console.print("")
          context.console.print(section.text, terminator: "")
        }
      } else if difference == nil && notCompared.isEmpty {
        context.console.print("\(summary); the projections match the live state.")
      } else if difference == nil {
        let match =
          compared.isEmpty
          ? "no projection was compared at the head"
          : "the projections compared match the live state (\(compared.joined(separator: ", ")))"
        context.console.print("\(summary); \(match).")
        for projection in notCompared { context.console.print("not compared: \(projection)") }
      } else {
        context.console.print(summary)
      }
    }
    if let difference {
      throw CommandFailure("the replay differs from the live projections: \(difference)")
    }
  }

  /// `{"name", "version", "reason"}` of a projection left out of the comparison.
  static func json(_ projection: EventStore.VerificationReport.UncheckedProjection) -> JSONValue {
    .object([
      ("name", .string(projection.name)),
      ("version", projection.version.map { JSONValue.uint(UInt64($0)) } ?? .null),
      ("reason", .string(projection.explanation)),
    ])
  }
}
