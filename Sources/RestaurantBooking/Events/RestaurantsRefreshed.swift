import EventLog
import Foundation

/// A complete snapshot of the remote catalog was fetched and its differences appended (in the
/// same append, just before this event). Stream: `restaurant-catalog`.
///
/// Appended by every successful refresh, also one that changed nothing, as the audit record of
/// the sync.
public struct RestaurantsRefreshed: EventPayload, Hashable {
  /// The stored type name, `RestaurantsRefreshed`.
  public static let eventType = "RestaurantsRefreshed"
  /// Where the snapshot came from, without credentials (a base URL or a file path).
  public var source: String
  /// When the snapshot was fetched.
  public var fetchedAt: Date
  /// Rows in the snapshot.
  public var fetched: Int
  /// ``RestaurantAdded`` events of the refresh.
  public var added: Int
  /// ``RestaurantUpdated`` events of the refresh.
  public var updated: Int
  /// ``RestaurantRemoved`` events of the refresh.
  public var removed: Int
  /// Rows that matched the catalog.
  public var unchanged: Int

  /// Creates the event.
  public init(
    source: String, fetchedAt: Date, fetched: Int, added: Int, updated: Int, removed: Int, unchanged: Int
  ) {
    self.source = source
    self.fetchedAt = fetchedAt
    self.fetched = fetched
    self.added = added
    self.updated = updated
    self.removed = removed
    self.unchanged = unchanged
  }
}
