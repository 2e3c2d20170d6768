/// What a refresh of the restaurant catalog changed.
public struct RefreshSummary: Sendable, Hashable, CustomStringConvertible {
  /// Restaurants new in the fetched snapshot.
  public var added: Int
  /// Restaurants whose name or cuisine changed.
  public var updated: Int
  /// Restaurants missing from the fetched snapshot.
  public var removed: Int
  /// Restaurants fetched as they were.
  public var unchanged: Int

  /// Creates a summary.
  public init(added: Int = 0, updated: Int = 0, removed: Int = 0, unchanged: Int = 0) {
    self.added = added
    self.updated = updated
    self.removed = removed
    self.unchanged = unchanged
  }

  /// Whether the refresh changed nothing.
  public var isEmpty: Bool { added == 0 && updated == 0 && removed == 0 }

  /// The four counts: `2 added, 1 updated, 0 removed, 40 unchanged`.
  public var description: String {
    "\(added) added, \(updated) updated, \(removed) removed, \(unchanged) unchanged"
  }
}
