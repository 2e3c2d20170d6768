import Foundation

/// The users as the app sees them: what a view model depends on. It returns domain models.
protocol UserRepository: Sendable {
  /// Registers a user. - Throws: ``UserError/invalidName`` or ``UserError/invalidEmail``.
  func create(name: String, email: String) async throws -> User
  /// Renames a user. - Throws: ``UserError/invalidName`` or ``UserError/unknownUser(_:)``.
  func rename(id: UUID, to name: String) async throws
  /// Deletes a user. - Throws: ``UserError/unknownUser(_:)`` (never registered, or deleted).
  func delete(id: UUID) async throws
  /// Every user, by name (ignoring case), then by ID.
  func getAll() async throws -> [User]
  /// The user with this ID, if registered and not deleted.
  func user(id: UUID) async throws -> User?
  /// The changes committed from now on.
  func changes() -> AsyncThrowingStream<UserChange, any Error>
}

/// Why a user could not be changed.
enum UserError: Error, Equatable { case invalidName, invalidEmail, unknownUser(UUID) }

/// A committed change of the users.
enum UserChange: Hashable, Sendable {
  case registered(User), renamed(id: UUID, name: String), deleted(id: UUID)
}
