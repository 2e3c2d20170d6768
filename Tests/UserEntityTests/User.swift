import Foundation

/// A user, as the app sees them: a domain model. Not `Codable`: what is stored is the events
/// (`UserEvents.swift`) and the `users` table's rows (`Users.swift`).
struct User: Identifiable, Hashable, Sendable {
  var id: UUID
  var name: String
  var email: String
  var createdAt: Date

  /// A user for previews and tests.
  static let sample = User(
    id: UUID(uuidString: "0193A8E2-5C4B-7D10-9E2F-3A4B5C6D7E8F")!, name: "Ada Lovelace",
    email: "ada@example.com", createdAt: Date(timeIntervalSince1970: 1_796_040_000))
}
