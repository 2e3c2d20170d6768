import EventLog
import Foundation

/// The restaurant catalog as events: reads the `restaurants` projection; a refresh diffs a
/// complete snapshot against it and appends the differences.
///
/// A refresh reads the catalog and the catalog stream's version in one snapshot, diffs in O(n),
/// and appends every ``RestaurantAdded`` / ``RestaurantUpdated`` / ``RestaurantRemoved`` plus one
/// ``RestaurantsRefreshed`` to `restaurant-catalog` in one atomic append that expects that
/// version. If another refresh got in between, it diffs again against the new catalog (at most
/// ``maximumAttempts`` times). All events of a refresh share a correlation ID and the origin.
public final class EventSourcedRestaurantRepository: RestaurantRepository {
  /// How often a refresh diffs again after a concurrent change of the catalog.
  public static let maximumAttempts = 3

  private let store: EventStore
  private let source: any RestaurantSource
  private let origin: String
  private let now: @Sendable () -> Date

  /// Creates the repository.
  /// - Parameters:
  ///   - store: an event store opened with `AppSchema.restaurantBooking`.
  ///   - source: where refreshes fetch the catalog.
  ///   - origin: the events' origin metadata, for example `app`, `cli` or `sync`.
  ///   - now: the clock for `fetchedAt`.
  public init(
    store: EventStore, source: any RestaurantSource, origin: String = "app",
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.store = store
    self.source = source
    self.origin = origin
    self.now = now
  }

  /// - Complexity: O(n), one sequential scan of the name index (it stores the rows).
  public func getAll() async throws -> [Restaurant] {
    try store.read {
      try RestaurantsProjection.table.reader(in: $0)
        .rows(in: RestaurantsProjection.byName, as: Restaurant.init)
    }
  }

  /// - Complexity: O(log n).
  public func restaurant(id: UUID) async throws -> Restaurant? {
    try store.read {
      try RestaurantsProjection.table.reader(in: $0).row(forKey: .uuid(id)).map(Restaurant.init)
    }
  }

  /// Fetches the snapshot, then diffs and appends (see the type's discussion).
  /// - Complexity: O(n + m) for n restaurants and m fetched rows, plus the append of the changes.
  public func refresh() async throws -> RefreshSummary {
    let fetched = try await source.fetchAll()
    let fetchedAt = now()
    let metadata = EventMetadata(correlationID: UUID(), origin: origin)
    for _ in 0..<Self.maximumAttempts {
      let (current, version) = try store.read { snapshot in
        // By ID bytes, the order of PostgREST's `order=id.asc`; the stream's own version, skipped
        // events included: what the append checks.
        (
          try RestaurantsProjection.table.reader(in: snapshot).rows(as: Restaurant.init),
          try snapshot.version(of: RestaurantBookingStreams.catalog)
        )
      }
      let diff = RestaurantDiff.compute(current: current, fetched: fetched)
      let events = try diff.events(source: source.sourceDescription, fetchedAt: fetchedAt, metadata: metadata)
      do {
        try await store.append(
          events, to: RestaurantBookingStreams.catalog, expectedVersion: .exactly(version))
        return diff.summary
      } catch EventStoreError.wrongExpectedVersion(let stream, _, _)
        where stream == RestaurantBookingStreams.catalog
      {
        continue
      }
    }
    throw RestaurantSyncError.catalogChangedConcurrently(attempts: Self.maximumAttempts)
  }

  /// The list of ``getAll()``, read again after each commit that changes it.
  public func observeAll() -> AsyncThrowingStream<[Restaurant], any Error> {
    store.observe {
      try RestaurantsProjection.table.reader(in: $0).rows(
        in: RestaurantsProjection.byName, as: Restaurant.init)
    }
  }

  /// The catalog's changes from now on, read from the log as it is committed (by this process or
  /// another); ends when the consumer stops iterating, throws when the log cannot be read.
  public func changes() -> AsyncThrowingStream<RestaurantChange, any Error> {
    store.changes { try RestaurantChange($0) }
  }
}
