import Foundation

/// A command line that does not fit the command's declarations: exit status 64, with the usage
/// line.
public struct UsageError: Error, Equatable, CustomStringConvertible, LocalizedError {
  /// What is wrong, naming the flag or argument.
  public var message: String
  /// The usage line of the command concerned; empty to let the program fill in the command's.
  public var usage: String

  /// Creates a usage error.
  public init(_ message: String, usage: String = "") {
    self.message = message
    self.usage = usage
  }

  /// The ``message``, without the usage line.
  public var description: String { message }
  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { message }
}
