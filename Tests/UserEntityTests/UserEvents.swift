import EventLog
import Foundation

/// A user registered: the first event of the stream `user-<id>`.
struct UserRegistered: EventPayload {
  static let eventType = "UserRegistered"
  var id: UUID
  var name: String
  var email: String
  var createdAt: Date
}

/// A user renamed.
struct UserRenamed: EventPayload {
  static let eventType = "UserRenamed"
  var id: UUID
  var name: String
}

/// A user deleted: the last event of their stream.
struct UserDeleted: EventPayload {
  static let eventType = "UserDeleted"
  var id: UUID
}
