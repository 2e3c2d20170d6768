import Replication
import Synchronization

/// The owner a ``SupabaseTransport`` sends as: learned from the first `server_info` answer, and
/// checked again for every token the provider gives after it (a token file re-read, a refreshed
/// session), so that a token of another user never carries a push, a pull or a mark.
///
/// It holds the last token checked, in memory only (never printed: the transport's description
/// and mirror leave it out).
final class OwnerPin: Sendable {
  private let state = Mutex<(token: String, owner: String)?>(nil)

  /// Whether `token` may be sent without a check first: nothing is pinned yet (the first call
  /// learns the owner), or it is the token checked last.
  func admits(_ token: String) -> Bool {
    state.withLock { pinned in pinned.map { $0.token == token } ?? true }
  }

  /// Records that `token` is `owner`'s.
  /// - Throws: ``ReplicationError/ownerMismatch(server:recorded:found:)`` when the transport is
  ///   pinned to another owner (the pin stays as it was).
  func admit(_ token: String, as owner: String, server: String) throws(ReplicationError) {
    try state.withLock { (pinned) throws(ReplicationError) in
      if let pinned, pinned.owner != owner {
        throw ReplicationError.ownerMismatch(server: server, recorded: pinned.owner, found: owner)
      }
      pinned = (token, owner)
    }
  }
}
