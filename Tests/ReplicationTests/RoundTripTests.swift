import EventLog
import Foundation
import PostgresTestSupport
import Replication
import ReplicationPostgres
import RestaurantBooking
import Synchronization
import Testing

/// Two devices of one customer share their bookings through the server.
@Suite("Push and pull", .needsPostgres)
struct RoundTripTests {
  @Test func aBookingMadeOnOneDeviceReachesTheOtherAndADeleteReachesBoth() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let tablet = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    let booking = try await phone.book(restaurant)

    let pushed = try await phone.push()
    #expect(pushed.pushed == 1 && pushed.alreadyStored == 0 && pushed.rejected == 0 && pushed.pending == 0)
    // The tablet's catalog lacks the restaurant: the booking keeps its name.
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 1 && pulled.cursor == 1)
    let onTablet = try await tablet.allBookings()
    #expect(onTablet == (try await phone.allBookings()), "\(onTablet) vs \(booking)")
    #expect(onTablet.map(\.id) == [booking.id])

    // Pulled events keep their ID, type, payload, metadata and recorded-at; the origin is noted.
    let original = try #require(try phone.store.events(from: 1).last)
    let copy = try #require(try tablet.store.event(at: 1))
    #expect(copy.id == original.id && copy.type == original.type && copy.payload == original.payload)
    #expect(copy.metadata == original.metadata && copy.recordedAt == original.recordedAt)
    let origin = try #require(try tablet.replicator.local.origin(ofLocalSequence: 1))
    #expect(
      origin.device == phone.store.deviceID && origin.sequence == original.sequence && origin.position == 1)

    // A pulled event is not pushed back; the phone's own event coming back is not stored again.
    #expect(try await tablet.push().pushed == 0)
    let back = try await phone.pull()
    #expect(back.pulled == 0 && back.alreadyPresent == 1)

    try await tablet.bookings.delete(id: booking.id)
    #expect(try await tablet.push().pushed == 1)
    #expect(try await phone.pull().pulled == 1)
    #expect(try await phone.allBookings().isEmpty)
    #expect(try await tablet.allBookings().isEmpty)
    try phone.expectHealthy()
    try tablet.expectHealthy()
  }

  @Test func twoDevicesDeletingTheSameBookingBothSucceedAndConverge() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let tablet = try Device(customer)
    let booking = try await phone.book(try await phone.addRestaurant())
    _ = try await phone.push()
    _ = try await tablet.pull()
    // Both delete while apart.
    try await phone.bookings.delete(id: booking.id)
    try await tablet.bookings.delete(id: booking.id)
    _ = try await phone.push()
    _ = try await tablet.push()
    _ = try await phone.pull()
    _ = try await tablet.pull()
    for device in [phone, tablet] {
      #expect(try await device.allBookings().isEmpty)
      // The stream holds the create and both deletes; the second changed nothing.
      #expect(try device.store.version(of: RestaurantBookingStreams.booking(booking.id)) == 3)
      try device.expectHealthy()
    }
    // A third delete is refused locally: the booking is gone.
    await #expect(throws: BookingError.self) { try await phone.bookings.delete(id: booking.id) }
  }

  @Test func theSameBatchPushedTwiceIsStoredOnce() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    for index in 0..<3 { _ = try await phone.book(restaurant, name: "Guest \(index)") }
    let events = try phone.outgoing()
    let device = try await phone.replicator.deviceCredentials()
    let first = try await phone.transport.push(events, device: device, through: 4)
    let second = try await phone.transport.push(events, device: device, through: 4)
    #expect(first == [.stored(position: 1), .stored(position: 2), .stored(position: 3)])
    #expect(
      second == [.alreadyStored(position: 1), .alreadyStored(position: 2), .alreadyStored(position: 3)])
    #expect(try serverEventIDs(fixture, owner: customer.role) == events.map(\.id))
  }

  @Test func aPushThatCrashedAfterTheServerCommittedIsNotSentAgain() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    _ = try await phone.book(restaurant)
    _ = try await phone.book(restaurant)
    // The server's transaction commits, then the device dies before it records the mark.
    let events = try phone.outgoing()
    _ = try await phone.transport.push(
      events, device: try await phone.replicator.deviceCredentials(), through: 3)
    let summary = try await phone.push()
    #expect(
      summary.pushed == 0 && summary.alreadyStored == 0 && summary.pushedThrough == 3 && summary.pending == 0)
    #expect(try serverEventIDs(fixture, owner: customer.role).count == 2)
  }

  @Test func aRepeatedPullAndAPullFromAnOlderCursorStoreNothingTwice() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let tablet = try Device(customer)
    let restaurant = try await phone.addRestaurant()
    for index in 0..<5 { _ = try await phone.book(restaurant, name: "Guest \(index)") }
    _ = try await phone.push()
    #expect(try await tablet.pull().pulled == 5)
    let again = try await tablet.pull()
    #expect(again.pulled == 0 && again.alreadyPresent == 0 && again.cursor == 5)
    // As if the cursor were lost: every event is present already.
    try await tablet.store.updateState([.delete(Array("replication.cursor".utf8))])
    let replayed = try await tablet.pull()
    #expect(replayed.pulled == 0 && replayed.alreadyPresent == 5)
    #expect(try tablet.store.head() == 5)
    try tablet.expectHealthy()
  }

  @Test func pagesAndBatchesSmallerThanTheLogCarryEverythingInOrder() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    var options = Device.quickOptions
    options.pushBatchSize = 7
    options.pullPageSize = 4
    let phone = try Device(customer, options: options)
    let tablet = try Device(customer, options: options)
    let restaurant = try await phone.addRestaurant()
    var made: [Booking] = []
    for index in 0..<30 { made.append(try await phone.book(restaurant, name: "Guest \(index)")) }
    for booking in made.prefix(10) { try await phone.bookings.delete(id: booking.id) }
    let pushed = try await phone.push()
    #expect(pushed.pushed == 40)
    let pulled = try await tablet.pull()
    #expect(pulled.pulled == 40 && pulled.cursor == 40)
    #expect(try await tablet.allBookings() == (try await phone.allBookings()))
    try tablet.expectHealthy()
  }

  @Test func aPullStoppedAfterAPageLeavesTheFetchedNextPageForTheNextPull() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    var options = Device.quickOptions
    options.pullPageSize = 4
    let phone = try Device(customer, options: options)
    let tablet = try Device(customer, options: options)
    let restaurant = try await phone.addRestaurant()
    for index in 0..<10 { _ = try await phone.book(restaurant, name: "Guest \(index)") }
    #expect(try await phone.push().pushed == 10)
    // Stopped once the first page is stored: the second, fetched meanwhile, is dropped unstored.
    let asked = Mutex(0)
    let first = try await tablet.replicator.pull(shouldStop: {
      asked.withLock { count in
        count += 1
        return count > 1
      }
    })
    #expect(first.pulled == 4 && first.cursor == 4)
    #expect(try tablet.store.head() == 4)
    let rest = try await tablet.pull()
    #expect(rest.pulled == 6 && rest.alreadyPresent == 0 && rest.cursor == 10)
    #expect(try await tablet.allBookings() == (try await phone.allBookings()))
    try tablet.expectHealthy()
  }
}

/// The view model sees what a pull brings, without a reload.
@Suite("Pulled changes reach the view model", .needsPostgres)
@MainActor
struct PulledChangesTests {
  @Test func aBookingPulledInTheBackgroundAppearsAndADeleteDisappears() async throws {
    let fixture = try await ServerFixture()
    let customer = try fixture.customer()
    let phone = try Device(customer)
    let tablet = try Device(customer)
    let viewModel = RestaurantListViewModel(
      restaurantRepository: EventSourcedRestaurantRepository(store: tablet.store, source: NoSource()),
      bookingRepository: tablet.bookings)
    await viewModel.load()
    #expect(viewModel.bookings.isEmpty)
    let observing = Task { await viewModel.observe() }
    defer { observing.cancel() }
    // Let the observation subscribe before anything is committed.
    try await Task.sleep(for: .milliseconds(100))

    let booking = try await phone.book(try await phone.addRestaurant())
    _ = try await phone.push()
    _ = try await tablet.pull()
    try await eventually { viewModel.bookings.map(\.id) == [booking.id] }

    try await phone.bookings.delete(id: booking.id)
    _ = try await phone.push()
    _ = try await tablet.pull()
    try await eventually { viewModel.bookings.isEmpty }
    #expect(viewModel.error == nil)
  }

  private func eventually(_ condition: @MainActor () -> Bool) async throws {
    for _ in 0..<200 where !condition() { try await Task.sleep(for: .milliseconds(20)) }
    #expect(condition())
  }
}

/// A restaurant source with nothing to fetch (the tablet never syncs here).
struct NoSource: RestaurantSource {
  var sourceDescription: String { "none" }
  func fetchAll() async throws -> [RemoteRestaurant] { [] }
}
