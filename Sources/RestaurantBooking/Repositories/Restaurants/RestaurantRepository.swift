import Foundation

/// The restaurants the app shows, and their refresh from the remote catalog.
///
/// ViewModels depend on this protocol only; the composition root picks the implementation.
public protocol RestaurantRepository: Sendable {
  /// Every restaurant, by name (case-insensitive) then ID.
  func getAll() async throws -> [Restaurant]

  /// The restaurant `id`, or `nil` when the catalog has none.
  func restaurant(id: UUID) async throws -> Restaurant?

  /// Fetches a complete snapshot of the remote catalog and applies its differences.
  /// - Returns: how many restaurants were added, updated, removed and unchanged.
  /// - Throws: ``RestaurantSyncError`` (nothing changed) or a storage error.
  func refresh() async throws -> RefreshSummary

  /// Every restaurant, as ``getAll()`` lists them, now and after each commit that changes the
  /// list (by this process or another): what a view shows. Ends when the consumer stops
  /// iterating; throws when the log cannot be read.
  func observeAll() -> AsyncThrowingStream<[Restaurant], any Error>

  /// The catalog's changes from now on, as they are committed (by this process or another):
  /// what happened, to react to (``observeAll()`` is what to show). Ends when the consumer stops
  /// iterating; throws when the log cannot be read.
  func changes() -> AsyncThrowingStream<RestaurantChange, any Error>
}

/// One committed change of the restaurant catalog.
public enum RestaurantChange: Sendable, Hashable {
  /// A restaurant appeared.
  case added(Restaurant)
  /// A restaurant changed: the new values of what changed (`nil`: unchanged).
  case updated(id: UUID, name: String?, cuisine: Cuisine?)
  /// A restaurant left the catalog.
  case removed(id: UUID)
  /// A refresh finished (after its other changes).
  case refreshed(RefreshSummary)
}
