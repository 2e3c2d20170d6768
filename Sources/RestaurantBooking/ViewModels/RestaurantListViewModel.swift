import Foundation
import Observation

/// The restaurant list screen: the catalog, the customer's bookings, a refresh, and deleting a
/// booking. It sees only the repository protocols; failures become ``error`` instead of being
/// printed.
@MainActor
@Observable
public final class RestaurantListViewModel {
  /// A failed operation, for the view to show.
  public struct ErrorState: Equatable, Sendable {
    /// What was being done.
    public enum Operation: String, Sendable {
      case loadRestaurants = "loading restaurants"
      case loadBookings = "loading bookings"
      case refreshRestaurants = "refreshing restaurants"
      case deleteBooking = "deleting the booking"
    }

    /// What was being done.
    public var operation: Operation
    /// The error's description.
    public var message: String

    /// Creates an error state.
    public init(operation: Operation, message: String) {
      self.operation = operation
      self.message = message
    }
  }

  /// The restaurants, by name.
  public private(set) var restaurants: [Restaurant] = []
  /// The bookings, by date.
  public private(set) var bookings: [Booking] = []
  /// The last failure; `nil` after a success or ``dismissError()``.
  public private(set) var error: ErrorState?
  /// Whether a refresh is running.
  public private(set) var isRefreshing = false
  /// What the last refresh changed.
  public private(set) var lastRefresh: RefreshSummary?

  private let restaurantRepository: any RestaurantRepository
  private let bookingRepository: any BookingRepository

  /// Creates the view model over the repositories (injected by the composition root).
  public init(restaurantRepository: any RestaurantRepository, bookingRepository: any BookingRepository) {
    self.restaurantRepository = restaurantRepository
    self.bookingRepository = bookingRepository
  }

  /// Loads the stored restaurants and bookings.
  public func load() async {
    do {
      restaurants = try await restaurantRepository.getAll()
    } catch {
      report(error, .loadRestaurants)
      return
    }
    await loadBookings()
  }

  /// Refreshes the catalog from the remote, then shows it.
  public func fetchRestaurants() async {
    guard !isRefreshing else { return }
    isRefreshing = true
    defer { isRefreshing = false }
    do {
      lastRefresh = try await restaurantRepository.refresh()
    } catch {
      report(error, .refreshRestaurants)
      // The stored catalog is still valid: show it.
      if let stored = try? await restaurantRepository.getAll() { restaurants = stored }
      return
    }
    do {
      restaurants = try await restaurantRepository.getAll()
      error = nil
    } catch {
      report(error, .loadRestaurants)
    }
  }

  /// Deletes `booking`, then shows the remaining bookings.
  public func deleteBooking(_ booking: Booking) async {
    do {
      try await bookingRepository.delete(id: booking.id)
    } catch {
      report(error, .deleteBooking)
      await loadBookings(clearingError: false)
      return
    }
    await loadBookings()
  }

  /// Keeps ``restaurants`` and ``bookings`` current with every change committed to the
  /// repositories, by this process or another (a pull from another device, a sync in the
  /// background), until the calling task is cancelled: as SwiftData's `@Query` keeps a view
  /// current. Start it once, for example from SwiftUI's `.task { await viewModel.observe() }`.
  public func observe() async {
    async let bookings: Void = followBookings()
    async let restaurants: Void = followRestaurants()
    _ = await (bookings, restaurants)
  }

  private func followBookings() async {
    do {
      for try await bookings in bookingRepository.observeAll() { self.bookings = bookings }
    } catch {
      report(error, .loadBookings)
    }
  }

  private func followRestaurants() async {
    do {
      for try await restaurants in restaurantRepository.observeAll() { self.restaurants = restaurants }
    } catch {
      report(error, .loadRestaurants)
    }
  }

  /// Clears ``error``.
  public func dismissError() {
    error = nil
  }

  private func loadBookings(clearingError: Bool = true) async {
    do {
      bookings = try await bookingRepository.getAll()
      if clearingError { error = nil }
    } catch {
      report(error, .loadBookings)
    }
  }

  private func report(_ error: any Error, _ operation: ErrorState.Operation) {
    self.error = ErrorState(operation: operation, message: String(describing: error))
  }
}
