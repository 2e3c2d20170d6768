import EventLog
import Foundation

/// The users as the app sees them.
protocol UserRepository: Sendable {
  /// Registers a user. - Throws: ``UserError/invalidName`` or ``UserError/invalidEmail``.
  func create(name: String, email: String) async throws -> User
  /// Renames a user. - Throws: ``UserError/invalidName`` or ``UserError/unknownUser(_:)``.
  func rename(id: UUID, to name: String) async throws
  /// Deletes a user. - Throws: ``UserError/unknownUser(_:)`` (never registered, or deleted).
  func delete(id: UUID) async throws
  /// Every user, by name (ignoring case), then by ID.
  func getAll() async throws -> [User]
  func get(id: UUID) async throws -> User?
  /// The changes committed from now on.
  func changes() -> AsyncThrowingStream<UserChange, any Error>
}

enum UserError: Error, Equatable { case invalidName, invalidEmail, unknownUser(UUID) }

enum UserChange: Hashable, Sendable {
  case registered(User), renamed(UserRenamed), deleted(id: UUID)

  init?(_ event: RecordedEvent) throws {
    switch event.type {
    case UserRegistered.eventType: self = .registered(try event.decode(UserRegistered.self).user)
    case UserRenamed.eventType: self = .renamed(try event.decode(UserRenamed.self))
    case UserDeleted.eventType: self = .deleted(id: try event.decode(UserDeleted.self).id)
    default: return nil
    }
  }
}

/// The users as events, one stream each, read through `Users.projection` (open `store` with it).
struct EventSourcedUserRepository: UserRepository {
  let store: EventStore
  var now: @Sendable () -> Date = { Date() }

  func create(name: String, email: String) async throws -> User {
    let email = email.trimmingCharacters(in: .whitespaces)
    guard email.wholeMatch(of: /[^@\s]+@[^@\s]+/) != nil else { throw UserError.invalidEmail }
    let user = User(id: .version7(), name: try Self.valid(name), email: email, createdAt: now())
    let event = try NewEvent(UserRegistered(user: user))
    try await store.append([event], to: Users.stream(user.id), expectedVersion: .noStream)
    return user
  }

  func rename(id: UUID, to name: String) async throws {
    try await append(UserRenamed(id: id, name: try Self.valid(name)), to: id)
  }

  func delete(id: UUID) async throws { try await append(UserDeleted(id: id), to: id) }
  func getAll() async throws -> [User] {
    try store.read { try Users.projection.reader(in: $0).rows(in: Users.byName) }
  }

  func get(id: UUID) async throws -> User? {
    try store.read { try Users.projection.reader(in: $0).row(forKey: .uuid(id)) }
  }

  func changes() -> AsyncThrowingStream<UserChange, any Error> { store.changes { try UserChange($0) } }
  /// Appends `event` to a live user's stream, at the version the user was found at (checked
  /// again, up to 3 times, when the user changed meanwhile).
  private func append(_ event: some EventPayload, to id: UUID) async throws {
    try await store.append(to: Users.stream(id), retrying: 3) { _ in
      guard try await get(id: id) != nil else { throw UserError.unknownUser(id) }
      return [try NewEvent(event)]
    }
  }

  private static func valid(_ name: String) throws -> String {
    let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !name.isEmpty, name.count <= 100 else { throw UserError.invalidName }
    return name
  }
}
