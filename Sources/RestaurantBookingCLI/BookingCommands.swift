import EventLog
import EventLogCLI
import Foundation
import RestaurantBooking

/// `eventlog bookings create`.
struct BookingsCreateCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "create", abstract: "Book a table: appends BookingCreated and prints the booking.")

  @Option("restaurant", "ID|NAME", help: "The restaurant's id, or its exact name (case-insensitive).")
  var restaurant: String
  @Option("date", "ISO8601", help: "When, for example 2026-12-24T19:30:00Z.", type: .iso8601)
  var date: Date
  @Option(
    "party", "N",
    help: "How many guests (\(BookingRules.partySizes.lowerBound)…\(BookingRules.partySizes.upperBound)).",
    type: .integer())
  var party: Int
  @Option("name", "TEXT", help: "The customer's name.")
  var name: String
  @Option("notes", "TEXT", help: "Notes for the restaurant.")
  var notes: String?
  @Flag("json", help: "As the booking's JSON object.")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    let commands = try context.plugin(RestaurantBookingCommands.self)
    let restaurants = commands.restaurantRepository(store, NoRestaurantSource())
    let restaurantID: UUID
    if let id = UUID(uuidString: restaurant) {
      restaurantID = id
    } else {
      let matches = try await restaurants.getAll().filter { $0.name.lowercased() == restaurant.lowercased() }
      guard let first = matches.first else {
        throw CommandFailure(
          "'--restaurant': no restaurant is named '\(restaurant)' (see 'eventlog restaurants list')")
      }
      guard matches.count == 1 else {
        let ids = matches.map { $0.id.lowercasedString }.joined(separator: ", ")
        throw CommandFailure(
          "'--restaurant': \(matches.count) restaurants are named '\(restaurant)'; give one id: \(ids)")
      }
      restaurantID = first.id
    }
    let booking = try await commands.bookingRepository(store).create(
      restaurantID: restaurantID, date: date, partySize: party, customerName: name, notes: notes)
    if json {
      context.console.print(DomainJSON.booking(booking).rendered())
    } else {
      context.console.print(DomainTables.bookings([booking]), terminator: "")
    }
  }
}

/// `eventlog bookings delete ID`.
struct BookingsDeleteCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "delete", abstract: "Cancel a booking: appends BookingDeleted.")

  @Argument("ID", help: "The booking's id.", type: .uuid)
  var id: UUID

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    try await context.plugin(RestaurantBookingCommands.self).bookingRepository(store).delete(id: id)
    context.console.print("deleted booking \(id.lowercasedString)")
  }
}

/// `eventlog bookings forget --customer NAME --reason TEXT`.
struct BookingsForgetCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "forget",
    abstract: "Forget a customer: erase their name and notes from every booking, everywhere.",
    discussion: """
      Erases the customer's data subject (every customer ID whose bookings carry the name: two devices that \
      first booked for it apart give it two): its key is destroyed and a SubjectErased event appended, \
      which every device and server applies when it receives it. The bookings stay, with the name and notes \
      shown as erased; the log's hash chain is unchanged. Run 'eventlog compact' afterwards to drop the \
      key's bytes from the data file's freed pages. See Docs/Erasure.md.
      """)

  @Option("customer", "NAME", help: "The customer's name, exactly as the bookings carry it.")
  var customer: String
  @Option(
    "reason", "TEXT", help: "Why, for the audit trail (replicated and exported: no personal data).",
    type: .nonBlank("the reason for the erasure"))
  var reason: String

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    let repository = try context.plugin(RestaurantBookingCommands.self).bookingRepository(store)
    // Bookings recorded before personal data was sealed hold the name in clear, with no customer
    // ID: no key to destroy (Docs/Erasure.md, "Bookings recorded before sealing").
    let inClear = try await repository.getAll().filter { $0.customerID == nil && $0.customerName == customer }
    let clearNote =
      "\(inClear.count) booking\(inClear.count == 1 ? " was" : "s were") recorded before personal data was "
      + "sealed and hold\(inClear.count == 1 ? "s" : "") the name in clear: erasing cannot reach "
      + (inClear.count == 1 ? "it" : "them") + " (see Docs/Erasure.md)"
    let customers: [UUID]
    do {
      customers = try await repository.forget(customerName: customer, reason: reason)
    } catch BookingError.unknownCustomer {
      throw CommandFailure(
        inClear.isEmpty
          ? "--customer: no booking that can still be read is by that name (see 'eventlog bookings list')"
          : "--customer: nothing to erase: \(clearNote)")
    }
    let ids = customers.map(\.lowercasedString).joined(separator: ", ")
    context.console.print(
      "forgot the customer: \(customers.count) customer ID\(customers.count == 1 ? "" : "s") erased (\(ids))")
    if !inClear.isEmpty { context.console.error("Warning: \(clearNote)") }
  }
}

/// `eventlog bookings list`.
struct BookingsListCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "list", abstract: "List the current bookings, sorted by date then id.")

  @Flag("json", help: "As a JSON array of bookings.")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let bookings = try await context.plugin(RestaurantBookingCommands.self).bookingRepository(store).getAll()
    if json {
      context.console.print(JSONValue.array(bookings.map(DomainJSON.booking)).rendered())
    } else {
      context.console.print(DomainTables.bookings(bookings), terminator: "")
    }
  }
}
