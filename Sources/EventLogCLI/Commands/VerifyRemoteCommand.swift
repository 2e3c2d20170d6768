import EventLog
import Foundation
import Replication

extension VerifyCommand {
  /// `verify --remote [URL]`: this environment against the owner's log on the server
  /// (``Replicator/verifyRemote(progress:onRetry:)``), read-only on both sides; exit 1 on any
  /// difference.
  func runRemote(_ context: CommandContext) async throws {
    let url = try RemoteURL.resolve(url, context)
    let remote = try credentials.settings(url: url, allowUnencrypted: allowUnencrypted, context)
    let transport = try context.transport(remote)
    defer { transport.close() }
    let store = try context.openStore(.read)
    let retryFor = Duration.seconds(retrySeconds)
    let replicator = context.replicator(store, transport: transport, retryFor: retryFor)
    let progress = ProgressReporter("verify", console: context.console)
    let report = try await ReplicationDeadline.$current.withValue(ReplicationDeadline(budget: retryFor)) {
      try await replicator.checkServer(onRetry: context.retryNotice)
      return try await replicator.verifyRemote(progress: progress.report, onRetry: context.retryNotice)
    }
    progress.finish()
    if json {
      context.console.print(Self.json(report).rendered())
    } else {
      Self.printText(report, to: context.console)
    }
    guard let first = report.problems.first else { return }
    let total = report.problemCounts.values.reduce(0, +)
    throw CommandFailure(
      "verify --remote found \(total) difference(s) with \(report.server); the first: "
        + TerminalText.escaped(first.problem))
  }

  static func json(_ report: RemoteVerificationReport) -> JSONValue {
    func head(_ head: ServerChainHead?) -> JSONValue {
      head.map { JSONValue.object([("position", .uint($0.position)), ("chain", .string($0.value.hex))]) }
        ?? .null
    }
    let checked = report.checked
    let counts: [(String, Int)] = [
      ("serverEvents", checked.serverEvents), ("matched", checked.matched), ("notStored", checked.notStored),
      ("chainRecomputed", checked.chainRecomputed), ("chainNotRecomputed", checked.chainNotRecomputed),
      ("attestedHeads", checked.attestedHeads), ("attestedHeadsUnchained", checked.attestedHeadsUnchained),
      ("ownEvents", checked.ownEvents), ("ownRejected", checked.ownRejected),
    ]
    return .object([
      ("ok", .bool(report.isClean)), ("server", .string(report.server)), ("owner", .string(report.owner)),
      ("device", .optional(report.device?.lowercasedString)), ("serverHead", head(report.serverChainHead)),
      ("recordedServerHead", head(report.recordedServerHead)), ("pushedThrough", .uint(report.pushedThrough)),
      ("checked", .object(counts.map { ($0.0, JSONValue.int(Int64($0.1))) })),
      (
        "problemCounts",
        .object(
          RemoteVerificationReport.Kind.allCases.compactMap { kind in
            report.problemCounts[kind].map { (kind.rawValue, JSONValue.int(Int64($0))) }
          })
      ),
      (
        "problems",
        .array(
          report.problems.map { problem in
            JSONValue.object([
              ("kind", .string(problem.kind.rawValue)),
              ("position", problem.position.map(JSONValue.uint) ?? .null),
              ("seq", problem.sequence.map(JSONValue.uint) ?? .null),
              ("id", .optional(problem.id?.lowercasedString)), ("problem", .string(problem.problem)),
            ])
          })
      ),
    ])
  }

  static func printText(_ report: RemoteVerificationReport, to console: Console) {
    let checked = report.checked
    let owner = TerminalText.escaped(report.owner)
    var lines = [
      "\(checked.serverEvents) server event(s) of \(owner) on \(report.server): \(checked.matched) here "
        + "unchanged, \(checked.notStored) recorded as not stored here",
      "the server's chain recomputed at \(checked.chainRecomputed) position(s)"
        + (checked.chainNotRecomputed > 0
          ? " (\(checked.chainNotRecomputed) could not be: their rows were not sent)" : "")
        + (report.serverChainHead.map { "; its head: position \($0.position) \($0.value.hex)" } ?? ""),
      "\(checked.attestedHeads) head(s) the server attested for this device compared with this environment's chain"
        + (checked.attestedHeadsUnchained > 0
          ? " (\(checked.attestedHeadsUnchained) at records not chained yet: not compared)" : ""),
      "\(checked.ownEvents) event(s) of this device's own at or below its pushed mark (seq \(report.pushedThrough))"
        + (checked.ownRejected > 0 ? ", of which \(checked.ownRejected) refused by the server" : ""),
    ]
    if let recorded = report.recordedServerHead {
      lines.append(
        "the server's chain at position \(recorded.position), as this device recorded it when it pulled: "
          + recorded.value.hex)
    }
    if report.isClean {
      console.print("OK: this environment matches the server.")
      for line in lines { console.print("  " + line) }
      return
    }
    var table = Table(["KIND", "WHERE", "PROBLEM"])
    for problem in report.problems {
      let place = [
        problem.position.map { "position \($0)" }, problem.sequence.map { "seq \($0)" },
      ].compactMap { $0 }.joined(separator: ", ")
      table.append([
        problem.kind.rawValue, place.isEmpty ? "-" : place, TerminalText.escaped(problem.problem),
      ])
    }
    console.print(table.rendered(), terminator: "")
    for kind in RemoteVerificationReport.Kind.allCases {
      guard let count = report.problemCounts[kind], count > RemoteVerificationReport.maximumPerKind else {
        continue
      }
      console.print("… and \(count - RemoteVerificationReport.maximumPerKind) more of kind \(kind.rawValue)")
    }
    console.print("Checked:")
    for line in lines { console.print("  " + line) }
  }
}
