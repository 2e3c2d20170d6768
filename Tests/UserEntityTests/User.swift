import EventLog
import Foundation

/// A user, and the row the `users` projection stores (`Codable`: the binary coder stores it).
struct User: Identifiable, Hashable, Codable, TableRow {
  var id: UUID
  var name: String
  var email: String
  var createdAt: Date
}

/// A user registered: the first event of the stream `user-<id>`.
struct UserRegistered: EventPayload {
  static let eventType = "UserRegistered"
  var user: User
}

struct UserRenamed: EventPayload, Hashable {
  static let eventType = "UserRenamed"
  var id: UUID
  var name: String
}

/// A user deleted: the last event of their stream.
struct UserDeleted: EventPayload {
  static let eventType = "UserDeleted"
  var id: UUID
}

/// The users' read model: rows by ID, and an index by name (ignoring case, then by ID).
enum Users {
  static let byName = TableIndex<User>("by-name", .caseInsensitive(\.name))
  static let projection = TableProjection<User>(
    name: "users", version: 1, primaryKey: .uuid(\.id), indexes: [byName],
    handlers: [
      .create(UserRegistered.self) { $0.user },
      .update(UserRenamed.self, key: \.id) { user, event in user.name = event.name },
      .delete(UserDeleted.self, key: \.id),
    ])

  static func stream(_ id: UUID) -> StreamID { StreamID("user-\(id.lowercasedString)") }
}
