import EventLog
import Foundation
import RestaurantBooking

/// `eventlog bookings create`.
struct BookingsCreateCommand: CLICommand {
  static let spec = CommandSpec(
    name: "create", abstract: "Book a table: appends BookingCreated and prints the booking.",
    options: [
      .option("restaurant", "ID|NAME", "The restaurant's id, or its exact name (case-insensitive)."),
      .option("date", "ISO8601", "When, for example 2026-12-24T19:30:00Z."),
      .option(
        "party", "N",
        "How many guests (\(BookingRules.partySizes.lowerBound)…\(BookingRules.partySizes.upperBound))."),
      .option("name", "TEXT", "The customer's name."),
      .option("notes", "TEXT", "Notes for the restaurant."),
      .flag("json", "As the booking's JSON object."),
    ])

  var restaurant: String
  var date: Date
  var party: Int
  var name: String
  var notes: String?
  var json: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    func required(_ option: String, _ placeholder: String) throws(UsageError) -> String {
      guard let value = arguments.value(option) else {
        throw UsageError("missing '--\(option) <\(placeholder)>'", usage: usage)
      }
      return value
    }
    restaurant = try required("restaurant", "ID|NAME")
    let dateText = try required("date", "ISO8601")
    guard let date = ISO8601.date(from: dateText) else {
      throw UsageError(
        "invalid value '\(dateText)' for '--date': expected an ISO 8601 date-time such as 2026-12-24T19:30:00Z",
        usage: usage)
    }
    self.date = date
    _ = try required("party", "N")
    party = try arguments.integer("party", usage: usage) ?? 0
    name = try required("name", "TEXT")
    notes = arguments.value("notes")
    json = arguments.flag("json")
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    let restaurants = context.dependencies.restaurantRepository(store, NoRestaurantSource())
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
        let ids = matches.map { $0.id.uuidString.lowercased() }.joined(separator: ", ")
        throw CommandFailure(
          "'--restaurant': \(matches.count) restaurants are named '\(restaurant)'; give one id: \(ids)")
      }
      restaurantID = first.id
    }
    let booking = try await context.dependencies.bookingRepository(store).create(
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
  static let spec = CommandSpec(
    name: "delete", abstract: "Cancel a booking: appends BookingDeleted.",
    arguments: [.init(name: "ID", help: "The booking's id.")])

  var id: UUID

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    let text = arguments.positionals[0]
    guard let id = UUID(uuidString: text) else {
      throw UsageError("invalid booking id '\(text)' for 'ID': expected a UUID", usage: usage)
    }
    self.id = id
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    try await context.dependencies.bookingRepository(store).delete(id: id)
    context.console.print("deleted booking \(id.uuidString.lowercased())")
  }
}

/// `eventlog bookings list`.
struct BookingsListCommand: CLICommand {
  static let spec = CommandSpec(
    name: "list", abstract: "List the current bookings, sorted by date then id.",
    options: [.flag("json", "As a JSON array of bookings.")])

  var json: Bool

  init(_ arguments: ParsedArguments, usage: String) throws(UsageError) {
    json = arguments.flag("json")
  }

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let bookings = try await context.dependencies.bookingRepository(store).getAll()
    if json {
      context.console.print(JSONValue.array(bookings.map(DomainJSON.booking)).rendered())
    } else {
      context.console.print(DomainTables.bookings(bookings), terminator: "")
    }
  }
}
