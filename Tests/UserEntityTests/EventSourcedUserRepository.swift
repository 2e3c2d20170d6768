import EventLog
import Foundation

/// The users as events, one stream each, read through `Users.projection` (open `store` with it).
struct EventSourcedUserRepository: UserRepository {
  let store: EventStore
  var now: @Sendable () -> Date = { Date() }

  func create(name: String, email: String) async throws -> User {
    let email = email.trimmingCharacters(in: .whitespaces)
    guard email.wholeMatch(of: /[^@\s]+@[^@\s]+/) != nil else { throw UserError.invalidEmail }
    let user = User(id: .version7(), name: try Self.valid(name), email: email, createdAt: now())
    let event = try NewEvent(
      UserRegistered(id: user.id, name: user.name, email: user.email, createdAt: user.createdAt))
    try await store.append([event], to: Users.stream(user.id), expectedVersion: .noStream)
    return user
  }

  func rename(id: UUID, to name: String) async throws {
    try await append(UserRenamed(id: id, name: try Self.valid(name)), to: id)
  }

  func delete(id: UUID) async throws { try await append(UserDeleted(id: id), to: id) }

  func getAll() async throws -> [User] {
    try store.read { try Users.projection.reader(in: $0).rows(in: Users.byName, as: User.init) }
  }

  func user(id: UUID) async throws -> User? {
    try store.read { try Users.projection.reader(in: $0).row(forKey: .uuid(id)).map(User.init) }
  }

  func changes() -> AsyncThrowingStream<UserChange, any Error> { store.changes { try UserChange($0) } }

  /// Appends `event` to a live user's stream, at the version the user was found at (checked
  /// again, up to 3 times in all, when the user changed meanwhile).
  private func append(_ event: some EventPayload, to id: UUID) async throws {
    try await store.append(to: Users.stream(id), retrying: 3) { _ in
      guard try await user(id: id) != nil else { throw UserError.unknownUser(id) }
      return [try NewEvent(event)]
    }
  }

  private static func valid(_ name: String) throws -> String {
    let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !name.isEmpty, name.count <= 100 else { throw UserError.invalidName }
    return name
  }
}

extension UserChange {
  /// The change a users' event records; `nil` for the events of other entities.
  fileprivate init?(_ event: RecordedEvent) throws {
    switch event.type {
    case UserRegistered.eventType:
      let user = try event.decode(UserRegistered.self)
      self = .registered(User(id: user.id, name: user.name, email: user.email, createdAt: user.createdAt))
    case UserRenamed.eventType:
      let renamed = try event.decode(UserRenamed.self)
      self = .renamed(id: renamed.id, name: renamed.name)
    case UserDeleted.eventType: self = .deleted(id: try event.decode(UserDeleted.self).id)
    default: return nil
    }
  }
}
