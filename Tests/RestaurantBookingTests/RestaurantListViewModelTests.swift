import Foundation
import RestaurantBooking
import Testing

@MainActor
@Suite("RestaurantListViewModel with in-memory repositories")
struct RestaurantListViewModelTests {
  struct Failure: Error, CustomStringConvertible {
    var description: String { "the network is down" }
  }

  @Test("load shows the stored restaurants and bookings")
  func load() async {
    let restaurants = InMemoryRestaurantRepository(stored: [.sample])
    let bookings = InMemoryBookingRepository(stored: [.sample])
    let model = RestaurantListViewModel(restaurantRepository: restaurants, bookingRepository: bookings)
    await model.load()
    #expect(model.restaurants == [.sample])
    #expect(model.bookings == [.sample])
    #expect(model.error == nil)
  }

  @Test("fetchRestaurants refreshes, then shows the new catalog")
  func fetch() async {
    let remote = [Restaurant.sample, Restaurant(id: uuid(1), name: "Sushi Sensation", cuisine: .japanese)]
    let restaurants = InMemoryRestaurantRepository(stored: [], remote: remote)
    let model = RestaurantListViewModel(
      restaurantRepository: restaurants, bookingRepository: InMemoryBookingRepository(stored: []))
    await model.fetchRestaurants()
    #expect(model.restaurants == remote)
    #expect(model.lastRefresh == RefreshSummary(added: 2))
    #expect(model.error == nil)
    #expect(model.isRefreshing == false)
  }

  @Test("a failed refresh becomes the error state and keeps the stored catalog")
  func fetchFails() async {
    let restaurants = InMemoryRestaurantRepository(stored: [.sample], refreshError: Failure())
    let model = RestaurantListViewModel(
      restaurantRepository: restaurants, bookingRepository: InMemoryBookingRepository(stored: []))
    await model.fetchRestaurants()
    #expect(model.error == .init(operation: .refreshRestaurants, message: "the network is down"))
    #expect(model.restaurants == [.sample])
    model.dismissError()
    #expect(model.error == nil)
  }

  @Test("deleteBooking deletes through the repository and shows the rest")
  func delete() async {
    var other = Booking.sample
    other = Booking(
      id: uuid(9), restaurantID: other.restaurantID, restaurantName: other.restaurantName,
      date: other.date.addingTimeInterval(3_600), partySize: 2, customerName: "Grace", notes: nil,
      createdAt: other.createdAt)
    let bookings = InMemoryBookingRepository(stored: [.sample, other])
    let model = RestaurantListViewModel(
      restaurantRepository: InMemoryRestaurantRepository(stored: []), bookingRepository: bookings)
    await model.load()
    await model.deleteBooking(.sample)
    #expect(model.bookings == [other])
    #expect(model.error == nil)
  }

  @Test("deleting a booking twice shows the repository's error")
  func deleteTwice() async {
    let bookings = InMemoryBookingRepository(stored: [.sample])
    let model = RestaurantListViewModel(
      restaurantRepository: InMemoryRestaurantRepository(stored: []), bookingRepository: bookings)
    await model.deleteBooking(.sample)
    await model.deleteBooking(.sample)
    #expect(
      model.error
        == .init(
          operation: .deleteBooking, message: BookingError.alreadyDeleted(Booking.sample.id).description))
    #expect(model.bookings.isEmpty)
  }
}

// MARK: - In-memory fakes of the repository protocols

/// A restaurant repository in memory: `refresh` replaces the catalog with `remote`.
actor InMemoryRestaurantRepository: RestaurantRepository {
  private var stored: [Restaurant]
  private let remote: [Restaurant]
  private let refreshError: (any Error)?

  init(stored: [Restaurant], remote: [Restaurant] = [], refreshError: (any Error)? = nil) {
    self.stored = stored
    self.remote = remote
    self.refreshError = refreshError
  }

  func getAll() async throws -> [Restaurant] { stored }

  func restaurant(id: UUID) async throws -> Restaurant? { stored.first { $0.id == id } }

  func refresh() async throws -> RefreshSummary {
    if let refreshError { throw refreshError }
    let old = Set(stored.map(\.id))
    let new = Set(remote.map(\.id))
    let summary = RefreshSummary(
      added: new.subtracting(old).count,
      updated: remote.filter { row in stored.contains { $0.id == row.id && $0 != row } }.count,
      removed: old.subtracting(new).count,
      unchanged: remote.filter { stored.contains($0) }.count)
    stored = remote
    return summary
  }

  /// The stored list, once.
  nonisolated func observeAll() -> AsyncThrowingStream<[Restaurant], any Error> {
    AsyncThrowingStream { continuation in
      Task {
        continuation.yield(await self.stored)
        continuation.finish()
      }
    }
  }

  nonisolated func changes() -> AsyncThrowingStream<RestaurantChange, any Error> {
    AsyncThrowingStream { $0.finish() }
  }
}

/// A booking repository in memory, with the real repository's delete errors.
actor InMemoryBookingRepository: BookingRepository {
  private var stored: [UUID: Booking]
  private var deleted: Set<UUID> = []

  init(stored: [Booking]) {
    self.stored = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0) })
  }

  func create(
    restaurantID: UUID, date: Date, partySize: Int, customerName: String, notes: String?
  ) async throws -> Booking {
    let booking = Booking(
      id: UUID(), restaurantID: restaurantID, restaurantName: "Restaurant", date: date, partySize: partySize,
      customerName: customerName, notes: notes, createdAt: Date())
    stored[booking.id] = booking
    return booking
  }

  func delete(id: UUID) async throws {
    if deleted.contains(id) { throw BookingError.alreadyDeleted(id) }
    guard stored.removeValue(forKey: id) != nil else { throw BookingError.unknownBooking(id) }
    deleted.insert(id)
  }

  func getAll() async throws -> [Booking] {
    stored.values.sorted { ($0.date, $0.id.uuidString) < ($1.date, $1.id.uuidString) }
  }

  func booking(id: UUID) async throws -> Booking? { stored[id] }

  /// Erases the name and notes of the customer's bookings, as the real repository shows them.
  func forget(customerName: String, reason: String) async throws -> [UUID] {
    let theirs = stored.values.filter { $0.customerName == customerName }
    guard !theirs.isEmpty else { throw BookingError.unknownCustomer(customerName) }
    for var booking in theirs {
      booking.customerName = nil
      booking.erasedFields = booking.notes == nil ? ["customerName"] : ["customerName", "notes"]
      booking.notes = nil
      stored[booking.id] = booking
    }
    return Array(Set(theirs.compactMap(\.customerID)))
  }

  /// The stored list, once.
  nonisolated func observeAll() -> AsyncThrowingStream<[Booking], any Error> {
    AsyncThrowingStream { continuation in
      Task {
        do {
          continuation.yield(try await self.getAll())
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
    }
  }

  nonisolated func changes() -> AsyncThrowingStream<BookingChange, any Error> {
    AsyncThrowingStream { $0.finish() }
  }
}
