/// What a command says of itself beyond its arguments: its name, a one-line abstract and more
/// help after the options.
///
/// Modelled on swift-argument-parser's `CommandConfiguration`; the arguments themselves are the
/// command's declarations (``Flag``, ``Option``, ``Argument``).
public struct CommandConfiguration: Sendable {
  /// The command's name (`list`).
  public var name: String
  /// One line saying what it does.
  public var abstract: String
  /// More help text after the options.
  public var discussion: String = ""

  /// A configuration.
  /// - Parameters:
  ///   - name: the command's name.
  ///   - abstract: one line saying what it does.
  ///   - discussion: more help text after the options.
  public init(name: String, abstract: String, discussion: String = "") {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
  }
}
