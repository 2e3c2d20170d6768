import Foundation

extension EventStore {
  /// Appends to `stream` what `decide` makes of it at its current version, and tries again, at
  /// most `maxAttempts` times in all, when another writer appended to the stream in between.
  ///
  /// Each attempt reads the stream's version, then calls `decide` with it: `decide` reads what it
  /// needs (a repository checks the entity's rules against its projection) and returns the
  /// events, which are appended expecting exactly that version. If another append changed the
  /// stream meanwhile, that expectation fails and the next attempt starts over with the new
  /// version, so `decide` always judges the state its events are appended to. What a
  /// repository writes instead of its own retry loop:
  ///
  /// ```swift
  /// try await store.append(to: Users.stream(id)) { _ in
  ///   guard try await user(id: id) != nil else { throw UserError.unknownUser(id) }
  ///   return [try NewEvent(UserRenamed(id: id, name: name))]
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - stream: the stream.
  ///   - maxAttempts: how many times `decide` may be called (at least 1); 3 by default.
  ///   - decide: given the stream's version (0 before its first event), the events to append;
  ///     none appends nothing. What it throws ends the append. It makes its events anew on each
  ///     call (new IDs), since an attempt that failed stored nothing.
  /// - Returns: where the events landed (no events when `decide` returned none).
  /// - Throws: what `decide` throws; ``EventStoreError/wrongExpectedVersion(stream:expected:actual:)``
  ///   when the stream changed under every attempt; the other errors of
  ///   ``append(_:to:expectedVersion:)``, at once.
  /// - Complexity: each attempt reads the stream's version (O(log n)) and appends once.
  @discardableResult
  public func append(
    to stream: StreamID, retrying maxAttempts: Int = 3,
    _ decide: (_ currentVersion: UInt64) async throws -> [NewEvent]
  ) async throws -> AppendResult {
    precondition(maxAttempts >= 1, "append(to:retrying:) needs at least one attempt")
    var attempt = 1
    while true {
      let version = try self.version(of: stream)
      let events = try await decide(version)
      guard !events.isEmpty else { return AppendResult(events: [], alreadyStored: false) }
      do {
        return try await append(events, to: stream, expectedVersion: .exactly(version))
      } catch EventStoreError.wrongExpectedVersion where attempt < maxAttempts {
        attempt += 1  // another writer appended meanwhile: decide again on what it wrote
      }
    }
  }
}
