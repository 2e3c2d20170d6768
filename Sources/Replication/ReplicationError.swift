import EventLog
import Foundation

/// A replication that could not be done, with the server or event it concerns.
public enum ReplicationError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
  /// The server has no replication schema.
  case schemaMissing(server: String)
  /// The server's schema is older than this build needs.
  case schemaTooOld(server: String, found: Int, required: Int)
  /// The server's schema is newer than this build knows.
  case schemaTooNew(server: String, found: Int, supported: Int)
  /// The environment has no device ID (written by an older build and opened read-only).
  case noDevice(path: String)
  /// A transient failure went on for longer than the retry budget.
  case gaveUp(after: Duration, lastError: String)
  /// The server holds fewer of the owner's events than this device has pulled: it lost some.
  case serverBehind(server: String, head: UInt64, cursor: UInt64)
  /// The server answered something the protocol does not allow.
  case protocolViolation(server: String, reason: String)
  /// The server's log no longer holds what this device pulled or pushed (it was restored from an
  /// older backup, or acknowledged a push it did not keep): recorded, and every later push and
  /// pull refuses with ``diverged(path:reason:)`` until a resync.
  case serverChanged(server: String, reason: String)
  /// An earlier pull found that the server's log no longer matches this device's.
  case diverged(path: String, reason: String)
  /// The server takes the credentials in use (an access token, a database role) for another owner
  /// than the one this device replicates as: nothing is pushed, pulled or marked as that owner.
  case ownerMismatch(server: String, recorded: String, found: String)
  /// A reassign named another owner than the one the server takes the credentials in use for.
  case reassignRefused(server: String, requested: String, found: String)

  /// What could not be done and, where there is one, what to do about it.
  public var description: String {
    switch self {
    case .schemaMissing(let server):
      "the server \(server) has no eventlog schema: run 'eventlog remote init URL' there first (as the database's owner)"
    case .schemaTooOld(let server, let found, let required):
      "the server \(server) has eventlog schema version \(found); this build needs \(required): run 'eventlog remote init URL' to upgrade it"
    case .schemaTooNew(let server, let found, let supported):
      "the server \(server) has eventlog schema version \(found), newer than this build's \(supported): upgrade eventlog"
    case .noDevice(let path):
      "the event log at '\(path)' has no device ID yet: open it for writing once (any write command creates it)"
    case .gaveUp(let after, let lastError):
      "gave up after retrying for \(after.formattedSeconds): \(lastError)"
    case .serverBehind(let server, let head, let cursor):
      "the server \(server) holds \(head) events of this owner, but this device has pulled \(cursor): the server lost events (restored from an older backup?)"
    case .protocolViolation(let server, let reason):
      "the server \(server) broke the replication protocol: \(reason)"
    case .serverChanged(let server, let reason):
      "the server \(server) no longer holds what this device replicated: \(reason). "
        + "Run 'eventlog pull --resync' once the server is the one to keep: this device then pushes again what "
        + "the server lacks and pulls again from the start"
    case .diverged(let path, let reason):
      "the event log at '\(path)' stopped replicating because the server's log changed under it (\(reason)): "
        + "run 'eventlog pull --resync' once the server is the one to keep"
    case .ownerMismatch(let server, let recorded, let found):
      "this device replicates as \(recorded), but \(server) takes the credentials in use for \(found) "
        + "(another user's access token, or another role's URL): refusing to push or pull as them. "
        + "Give \(recorded)'s credentials, or move this device with 'eventlog remote reassign URL --to \(found)' "
        + "(what it pushed stays with \(recorded))"
    case .reassignRefused(let server, let requested, let found):
      "\(server) takes the credentials in use for \(found), not \(requested): nothing was changed; "
        + "give \(requested)'s credentials to move this device to \(requested)"
    }
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}

extension Duration {
  /// `1.5 s`.
  var formattedSeconds: String {
    let (seconds, attoseconds) = components
    let value = Double(seconds) + Double(attoseconds) / 1e18
    return value == value.rounded() ? "\(Int64(value)) s" : String(format: "%.1f s", value)
  }
}
