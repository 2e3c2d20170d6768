import Foundation

// The example's public names of the last release that this one renamed, kept for one release as
// fix-its (Docs/CHANGELOG.md); they go in the release after.

extension BookingRepository {
  /// Renamed ``booking(id:)``.
  @available(*, unavailable, renamed: "booking(id:)")
  public func get(id: UUID) async throws -> Booking? { try await booking(id: id) }
}

extension RestaurantRepository {
  /// Renamed ``restaurant(id:)``.
  @available(*, unavailable, renamed: "restaurant(id:)")
  public func get(id: UUID) async throws -> Restaurant? { try await restaurant(id: id) }
}

extension SupabaseRestaurantSource {
  /// Renamed ``handles(_:)``.
  @available(*, unavailable, renamed: "handles(_:)")
  public static func isHTTP(_ text: String) -> Bool { handles(text) }
}
