import EventLog
import Foundation

/// One round of live replication: what it pushed and pulled.
public struct WatchRound: Sendable, Hashable {
  /// The push of the round.
  public var push: PushSummary
  /// The pull of the round.
  public var pull: PullSummary

  /// Creates a round.
  public init(push: PushSummary, pull: PullSummary) {
    self.push = push
    self.pull = pull
  }
}

/// What live replication reports as it goes.
public enum WatchEvent: Sendable {
  /// A round finished.
  case round(WatchRound)
  /// A transient failure; the round is retried after `delay`.
  case retrying(error: String, delay: Duration)
}

extension Replicator {
  /// Replicates until `shouldStop` says so: a push and a pull, then a wait for a local commit,
  /// a notification from the server or the poll interval, and again. Transient failures (the
  /// server going away, a lost connection) are retried without end, with backoff; the round in
  /// flight finishes before it stops. A refused session (an access token that expired, and no
  /// renewed one yet: ``ReplicationTransportError/needsNewSession``) does not end it either: the
  /// round is tried again after 1 s, then 2, 4, … up to 30 s, each try asking the transport's
  /// token provider again, until a renewed session is accepted. The server is checked
  /// (``checkServer(onRetry:)``) before the first round, under the same rule: a watch started
  /// with an expired session waits for a renewed one too. Only the first round's push sends
  /// again the refusals whose cause may have passed (``Rejection/mayPass``).
  /// - Parameters:
  ///   - shouldStop: asked between batches and while waiting, at least four times a second.
  ///   - report: told of each round and each retry.
  /// - Returns: the totals of every round.
  /// - Throws: a fatal error (a wrong password, a missing schema, a local storage error).
  public func watch(
    shouldStop: @escaping @Sendable () -> Bool, report: @escaping @Sendable (WatchEvent) -> Void = { _ in }
  ) async throws -> WatchRound {
    var total = WatchRound(push: PushSummary(), pull: PullSummary())
    let live = Replicator(store: store, transport: transport, options: liveOptions)
    let onRetry: @Sendable (String, Duration) -> Void = { report(.retrying(error: $0, delay: $1)) }
    var listening = true
    var sessionWait: Duration = .seconds(1)
    var checked = false
    var firstRound = true
    while !shouldStop() {
      let roundStart = ContinuousClock.now
      let push: PushSummary
      let pull: PullSummary
      do {
        if !checked {
          try await live.checkServer(onRetry: onRetry)
          checked = true
        }
        // Refusals whose cause may have passed are sent again once, not every round.
        push = try await live.push(retryingRejections: firstRound, onRetry: onRetry, shouldStop: shouldStop)
        firstRound = false
        pull = try await live.pull(onRetry: onRetry, shouldStop: shouldStop)
        sessionWait = .seconds(1)
      } catch let error as any ReplicationTransportError where error.needsNewSession {
        // The session expired: wait for a renewed one (whatever renews it rewrites the token the
        // provider gives), then try the round again.
        report(.retrying(error: "\(error); waiting for a renewed session", delay: sessionWait))
        let until = ContinuousClock.now + sessionWait
        while !shouldStop() && ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(250)) }
        sessionWait = min(sessionWait * 2, .seconds(30))
        continue
      }
      total.push.pushed += push.pushed
      total.push.alreadyStored += push.alreadyStored
      total.push.rejected += push.rejected
      total.push.retried += push.retried
      total.push.pending = push.pending
      total.push.pushedThrough = push.pushedThrough
      total.pull.pulled += pull.pulled
      total.pull.alreadyPresent += pull.alreadyPresent
      total.pull.unreadable += pull.unreadable
      total.pull.conflicts += pull.conflicts
      total.push.conflicts += push.conflicts
      total.pull.cursor = pull.cursor
      report(.round(WatchRound(push: push, pull: pull)))
      // Wait for something to do.
      let seen = try store.head()
      let since = ContinuousClock.now
      var notified = false
      while !shouldStop() {
        if try store.head() != seen { break }
        if ContinuousClock.now - since >= options.pollInterval { break }
        if listening {
          do {
            if try await transport.waitForNews(upTo: .milliseconds(250)) {
              notified = true
              break
            }
          } catch let error as any ReplicationTransportError where error.failureKind == .transient {
            // The server is away: the next round's retries report it and wait for it.
            try await Task.sleep(for: .milliseconds(250))
            break
          } catch let error as any ReplicationTransportError where error.needsNewSession {
            // The session expired while waiting: the next round waits for a renewed one.
            break
          } catch let error as any ReplicationTransportError where error.failureKind == .fatal {
            // No LISTEN here (a transaction pooler): poll instead.
            report(
              .retrying(error: "notifications unavailable, polling: \(error)", delay: options.pollInterval))
            listening = false
          }
        } else {
          try await Task.sleep(for: .milliseconds(250))
        }
      }
      // A notification starts at most one round per interval, however many arrive: anyone who
      // learns the channel's name may send them.
      while notified && !shouldStop() {
        let left = options.minimumPullInterval - (ContinuousClock.now - roundStart)
        guard left > .zero else { break }
        try await Task.sleep(for: min(left, .milliseconds(250)))
      }
    }
    return total
  }

  private var liveOptions: ReplicationOptions {
    var options = self.options
    options.retryFor = nil
    return options
  }
}
