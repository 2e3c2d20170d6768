import EventLog
import Replication

/// What a replication command had done when it failed: the batches the server acknowledged and
/// the pages stored before a failure stay, and the error says so (`Error: … ; 513 of 1513 events
/// were pushed and marked before this; the other 1000 wait for the next push`), instead of
/// leaving the reader to guess, or claiming that nothing was marked.
///
/// It compares the local state when the work began with the state when it failed: what the
/// pushed mark passed of the outbox, and where the cursor went.
struct ReplicationProgressNote {
  private let replica: LocalReplica
  private let pushes: Bool
  private let pulls: Bool
  private let mark: UInt64
  private let cursor: UInt64

  private init(_ replica: LocalReplica, pushes: Bool, pulls: Bool) throws {
    self.replica = replica
    self.pushes = pushes
    self.pulls = pulls
    mark = try replica.pushedThrough()
    cursor = try replica.cursor()
  }

  /// Runs `body` (pushes, pulls, or both) and, when it fails, fails with its error and what was
  /// pushed and marked, or pulled and stored, before it.
  /// - Throws: ``CommandFailure`` with the note, keeping the error as its underlying one; a
  ///   cancellation as it is.
  static func run<T>(
    _ replicator: Replicator, pushes: Bool, pulls: Bool, _ context: CommandContext,
    _ body: () async throws -> T
  ) async throws -> T {
    let note = try ReplicationProgressNote(replicator.local, pushes: pushes, pulls: pulls)
    do {
      return try await body()
    } catch let error where !(error is CancellationError) {
      guard let text = note.text() else { throw error }
      throw CommandFailure(
        EventLogProgram.describe(error, streams: context.dependencies.streamNames) + "; " + text,
        underlying: error)
    }
  }

  /// What was done since the note was taken, or `nil` when the state cannot be read.
  private func text() -> String? {
    var parts: [String] = []
    if pushes {
      guard let markNow = try? replica.pushedThrough(),
        let waiting = try? replica.pendingCount(after: markNow),
        let before = try? replica.pendingCount(after: mark)
      else { return nil }
      let pushed = max(0, before - waiting)
      switch (pushed, waiting) {
      case (0, 0): break
      case (0, _): parts.append("no event was pushed or marked before this (\(waiting) to push)")
      case (_, 0): parts.append("all \(pushed) events to push were pushed and marked before this")
      default:
        parts.append(
          "\(pushed) of \(pushed + waiting) events were pushed and marked before this (the server holds this "
            + "device's log through seq \(markNow)); "
            + (waiting == 1 ? "the other one waits" : "the other \(waiting) wait") + " for the next push")
      }
    }
    if pulls {
      guard let cursorNow = try? replica.cursor() else { return nil }
      parts.append(
        cursorNow > cursor
          ? "the server's events through position \(cursorNow) were pulled and stored before this; "
            + "the next pull goes on from there"
          : "nothing was pulled")
    }
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
  }
}
