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

/// A source that fetches the catalog in pages (the Supabase client): it can keep the whole fetch
/// within an overall deadline and report each page as it arrives.
public protocol PagedRestaurantSource: RestaurantSource {
  /// Fetches the whole catalog, giving up once `deadline` has passed, and calls `progress`
  /// after each page.
  /// - Throws: ``RestaurantSyncError`` naming the page or row;
  ///   ``RestaurantSyncError/deadlineExceeded(seconds:pages:rows:)`` when time is up.
  func fetchAll(
    deadline: Duration, progress: (@Sendable (FetchProgress) -> Void)?
  ) async throws -> [RemoteRestaurant]
}

/// How far a paged fetch has come.
public struct FetchProgress: Sendable, Equatable {
  /// Pages received so far.
  public var pages: Int
  /// Rows received so far.
  public var rows: Int

  /// Creates a progress report.
  public init(pages: Int, rows: Int) {
    self.pages = pages
    self.rows = rows
  }
}
