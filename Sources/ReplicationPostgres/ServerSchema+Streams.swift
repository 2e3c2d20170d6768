import Postgres

extension ServerSchema {
  /// The stream-name prefixes the server accepts (`eventlog.replicated_streams`), in order.
  ///
  /// Every app's `remote init` adds its own, so one server serves several apps. An empty list
  /// means the server accepts every stream (a server no app with replicated streams initialized).
  /// - Parameter connection: a connection as the database's owner (the table is not readable by
  ///   the devices' roles).
  /// - Returns: the prefixes, sorted.
  /// - Throws: ``PostgresError`` (a database without the schema: SQLSTATE `42P01` or `3F000`).
  public static func replicatedStreams(on connection: PostgresConnection) throws -> [String] {
    let rows = try connection.query(
      "SELECT prefix FROM eventlog.replicated_streams ORDER BY prefix COLLATE \"C\"",
      purpose: "read the replicated stream prefixes")
    return try (0..<rows.count).map { try rows.string($0, "prefix") }
  }

  /// Stops the server accepting events on the streams `prefix` starts: removes it from
  /// `eventlog.replicated_streams`, in one transaction. Events the server stored stay; a device
  /// that pushes an event on such a stream later has it refused.
  ///
  /// The last prefix is not removed: an empty list would make the server accept every stream.
  /// - Parameters:
  ///   - prefix: the prefix, exactly as ``replicatedStreams(on:)`` lists it.
  ///   - connection: a connection as the database's owner.
  /// - Returns: the prefixes the server accepts after the removal, sorted.
  /// - Throws: ``StreamsError`` when `prefix` is not in the list or is the last one (nothing
  ///   changes); ``PostgresError``.
  @discardableResult
  public static func removeReplicatedStream(
    _ prefix: String, on connection: PostgresConnection
  ) throws
    -> [String]
  {
    let purpose = "remove the replicated stream prefix"
    try connection.execute("BEGIN", purpose: purpose)
    do {
      // The rows stay locked to the commit: two removals cannot each leave the other's last prefix.
      let rows = try connection.query(
        "SELECT prefix FROM eventlog.replicated_streams ORDER BY prefix COLLATE \"C\" FOR UPDATE",
        purpose: "read the replicated stream prefixes")
      let present = try (0..<rows.count).map { try rows.string($0, "prefix") }
      guard present.contains(prefix) else { throw StreamsError.notPresent(prefix: prefix, present: present) }
      guard present.count > 1 else { throw StreamsError.lastPrefix(prefix) }
      try connection.query(
        "DELETE FROM eventlog.replicated_streams WHERE prefix = $1", [.text(prefix)],
        purpose: "remove the replicated stream prefix '\(prefix)'")
      try connection.execute("COMMIT", purpose: purpose)
      return present.filter { $0 != prefix }
    } catch {
      try? connection.execute("ROLLBACK", purpose: "roll back: \(purpose)")
      throw error
    }
  }

  /// Why a replicated stream prefix was not removed.
  public enum StreamsError: Error, Equatable, CustomStringConvertible {
    /// The server does not hold the prefix.
    case notPresent(prefix: String, present: [String])
    /// The prefix is the only one: removing it would make the server accept every stream.
    case lastPrefix(String)

    /// What was refused, naming the prefix; nothing was changed.
    public var description: String {
      switch self {
      case .notPresent(let prefix, let present):
        "the server does not replicate the stream prefix '\(prefix)' (it replicates "
          + (present.isEmpty
            ? "every stream: no prefix is recorded" : present.map { "'\($0)'" }.joined(separator: ", "))
          + "); nothing was changed"
      case .lastPrefix(let prefix):
        "'\(prefix)' is the server's only replicated stream prefix: without one the server accepts every "
          + "stream; nothing was changed"
      }
    }
  }
}
