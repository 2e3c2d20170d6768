/// What a command says of itself beyond its arguments: its name, a one-line abstract and more
/// help after the options.
///
/// Modelled on swift-argument-parser's `CommandConfiguration`; the arguments themselves are the
/// command's declarations (``Flag``, ``Option``, ``Argument``).
struct CommandConfiguration: Sendable {
  /// The command's name (`list`).
  var name: String
  /// One line saying what it does.
  var abstract: String
  /// More help text after the options.
  var discussion: String = ""
}
