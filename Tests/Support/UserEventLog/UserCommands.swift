import EventLog
import EventLogCLI
import Foundation

/// The users app's commands: `users create|rename|delete|list`, and the users of `replay`.
struct UserCommands: EventLogPlugin {
  /// The user repository over a store, made by the composition root (`main.swift`).
  let repository: @Sendable (EventStore) -> any UserRepository

  var groups: [CommandGroup] {
    [
      CommandGroup(
        name: "users", abstract: "Register, rename, delete and list users.",
        commands: [
          UsersCreateCommand.self, UsersRenameCommand.self, UsersDeleteCommand.self, UsersListCommand.self,
        ])
    ]
  }

  func replayedState(_ replay: EventStore.ReplayResult) throws -> [ReplayedState] {
    let users = try Users.projection.reader(in: replay).rows(in: Users.byName, as: User.init)
    return [ReplayedState(name: "users", json: .array(users.map(Self.json)), text: Self.table(users))]
  }

  /// `{"id", "name", "email", "createdAt"}`.
  static func json(_ user: User) -> JSONValue {
    .object([
      ("id", .string(user.id.lowercasedString)), ("name", .string(user.name)), ("email", .string(user.email)),
      ("createdAt", .string(ISO8601.string(from: user.createdAt))),
    ])
  }

  /// A table of users and a count line.
  static func table(_ users: [User]) -> String {
    var table = Table(["NAME", "EMAIL", "ID"])
    for user in users { table.append([user.name, user.email, user.id.lowercasedString]) }
    return table.rendered() + "\(users.count) user\(users.count == 1 ? "" : "s")\n"
  }

  /// The repository's error as the command line says it.
  static func failure(_ error: UserError) -> CommandFailure {
    switch error {
    case .invalidName: CommandFailure("'--name': a name of 1 to 100 characters is required")
    case .invalidEmail: CommandFailure("'--email': not an email address")
    case .unknownUser(let id): CommandFailure("no user \(id.lowercasedString)")
    }
  }
}

/// `users create --name TEXT --email TEXT [--json]`.
struct UsersCreateCommand: CLICommand {
  static let configuration = CommandConfiguration(name: "create", abstract: "Register a user.")

  @Option("name", "TEXT", help: "The user's name.")
  var name: String
  @Option("email", "TEXT", help: "The user's email address.")
  var email: String
  @Flag("json", help: #"As {"id", "name", "email", "createdAt"}."#)
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let users = try context.plugin(UserCommands.self).repository(try context.openStore(.create))
    do {
      let user = try await users.create(name: name, email: email)
      context.console.print(
        json ? UserCommands.json(user).rendered() : UserCommands.table([user]), terminator: json ? "\n" : "")
    } catch let error as UserError {
      throw UserCommands.failure(error)
    }
  }
}

/// `users rename ID --name TEXT`.
struct UsersRenameCommand: CLICommand {
  static let configuration = CommandConfiguration(name: "rename", abstract: "Rename a user.")

  @Argument("ID", help: "The user's id.", type: .uuid)
  var id: UUID
  @Option("name", "TEXT", help: "The new name.")
  var name: String

  func run(_ context: CommandContext) async throws {
    let users = try context.plugin(UserCommands.self).repository(try context.openStore(.write))
    do {
      try await users.rename(id: id, to: name)
    } catch let error as UserError {
      throw UserCommands.failure(error)
    }
    context.console.print("renamed user \(id.lowercasedString)")
  }
}

/// `users delete ID`.
struct UsersDeleteCommand: CLICommand {
  static let configuration = CommandConfiguration(name: "delete", abstract: "Delete a user.")

  @Argument("ID", help: "The user's id.", type: .uuid)
  var id: UUID

  func run(_ context: CommandContext) async throws {
    let users = try context.plugin(UserCommands.self).repository(try context.openStore(.write))
    do {
      try await users.delete(id: id)
    } catch let error as UserError {
      throw UserCommands.failure(error)
    }
    context.console.print("deleted user \(id.lowercasedString)")
  }
}

/// `users list [--json]`.
struct UsersListCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "list", abstract: "List the users by name (ignoring case), then by id.")

  @Flag("json", help: "As a JSON array of users.")
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let users = try await context.plugin(UserCommands.self).repository(try context.openStore(.read)).getAll()
    if json {
      context.console.print(JSONValue.array(users.map(UserCommands.json)).rendered())
    } else {
      context.console.print(UserCommands.table(users), terminator: "")
    }
  }
}
