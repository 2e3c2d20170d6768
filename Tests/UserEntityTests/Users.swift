import EventLog
import Foundation

/// A row of the `users` table (`Codable`: the binary coder stores it).
struct UserRow: TableRow, Codable, Hashable {
  var id: UUID
  var name: String
  var email: String
  var createdAt: Date
}

/// The users' read model (rows by ID, and an index by name, ignoring case, then by ID), and their
/// streams.
enum Users {
  static let byName = TableIndex<UserRow>("by-name", .caseInsensitive(\.name))
  static let projection = TableProjection<UserRow>(
    name: "users", version: 1, primaryKey: .uuid(\.id), indexes: [byName],
    handlers: [
      .create(UserRegistered.self) {
        UserRow(id: $0.id, name: $0.name, email: $0.email, createdAt: $0.createdAt)
      },
      .update(UserRenamed.self, key: \.id) { row, event in row.name = event.name },
      .delete(UserDeleted.self, key: \.id),
    ])

  static func stream(_ id: UUID) -> StreamID { StreamID("user-\(id.lowercasedString)") }
}

extension AppSchema {
  /// The users module of an app's schema; the streams `user-<id>` are shared between devices.
  static let users = AppSchema(
    name: "users", eventTypes: [UserRegistered.self, UserRenamed.self, UserDeleted.self],
    projections: [Users.projection], replicatedStreams: AppSchema.StreamSelection(prefixes: ["user-"]))
}

extension User {
  /// The user a row of the `users` table holds.
  init(_ row: UserRow) { self.init(id: row.id, name: row.name, email: row.email, createdAt: row.createdAt) }
}
