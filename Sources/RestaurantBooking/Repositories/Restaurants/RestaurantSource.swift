/// Where a refresh gets a complete snapshot of the remote restaurant catalog.
///
/// Implementations decode their wire format into ``RemoteRestaurant`` values (their DTOs stay
/// private to their files) and validate every row: a snapshot is complete and valid, or the
/// fetch throws.
public protocol RestaurantSource: Sendable {
  /// Where the rows come from, without credentials (recorded in ``RestaurantsRefreshed``).
  var sourceDescription: String { get }

  /// Fetches the whole catalog.
  /// - Throws: ``RestaurantSyncError`` naming the page, row and field.
  func fetchAll() async throws -> [RemoteRestaurant]
}
