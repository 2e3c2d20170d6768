/// What a command accepts: its name, a one-line abstract, positional arguments and options.
///
/// Modelled on swift-argument-parser's `CommandConfiguration`: the spec drives parsing, the usage
/// line and `--help`.
public struct CommandSpec: Sendable {
  /// An option (`--name VALUE`) or a flag (`--name`).
  public struct Option: Sendable {
    /// The long name without dashes.
    public var name: String
    /// The placeholder of the value (`SEQ`, `FILE`); `nil` for a flag.
    public var value: String?
    /// One line of help.
    public var help: String

    /// A flag.
    public static func flag(_ name: String, _ help: String) -> Option {
      Option(name: name, value: nil, help: help)
    }
    /// An option taking a value.
    public static func option(_ name: String, _ value: String, _ help: String) -> Option {
      Option(name: name, value: value, help: help)
    }
  }

  /// A positional argument.
  public struct Argument: Sendable {
    /// Its placeholder (`ID`, `FILE`).
    public var name: String
    /// One line of help.
    public var help: String
    /// Whether it may be left out.
    public var optional = false
  }

  /// The command's name (`list`), or the full path for display (`bookings list`).
  public var name: String
  /// One line saying what it does.
  public var abstract: String
  /// Positional arguments, in order.
  public var arguments: [Argument] = []
  /// Options and flags.
  public var options: [Option] = []
  /// More help text after the options.
  public var discussion: String = ""

  /// The usage line: `eventlog bookings delete ID`.
  public func usage(prefix: String) -> String {
    var parts = [prefix, name].filter { !$0.isEmpty }
    for option in options where option.name != "help" {
      parts.append(option.value.map { "[--\(option.name) \($0)]" } ?? "[--\(option.name)]")
    }
    for argument in arguments {
      parts.append(argument.optional ? "[\(argument.name)]" : argument.name)
    }
    return parts.joined(separator: " ")
  }

  /// The full `--help` text.
  public func help(prefix: String) -> String {
    var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage(prefix: prefix))"]
    if !arguments.isEmpty {
      lines += ["", "ARGUMENTS:"]
      let width = arguments.map(\.name.count).max() ?? 0
      for argument in arguments {
        lines.append(
          "  \(argument.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(argument.help)")
      }
    }
    let all = options + [.flag("help", "Show help information.")]
    let labels = all.map { option in option.value.map { "--\(option.name) <\($0)>" } ?? "--\(option.name)" }
    let width = labels.map(\.count).max() ?? 0
    lines += ["", "OPTIONS:"]
    for (label, option) in zip(labels, all) {
      lines.append("  \(label.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(option.help)")
    }
    if !discussion.isEmpty { lines += ["", discussion] }
    return lines.joined(separator: "\n")
  }
}

/// A command line that does not fit the spec: exit status 64, with the usage line.
public struct UsageError: Error, Equatable, CustomStringConvertible {
  /// What is wrong, naming the flag or argument.
  public var message: String
  /// The usage line of the command concerned.
  public var usage: String

  /// Creates a usage error.
  public init(_ message: String, usage: String = "") {
    self.message = message
    self.usage = usage
  }

  public var description: String { message }
}

/// A parsed command line: flags present, option values and positional arguments.
public struct ParsedArguments: Sendable {
  /// The flags given.
  public var flags: Set<String> = []
  /// The options given, by name (the last value wins).
  public var values: [String: String] = [:]
  /// The positional arguments, in order.
  public var positionals: [String] = []
  /// Whether `--help` was given.
  public var wantsHelp: Bool { flags.contains("help") }

  /// Parses `arguments` against `spec`.
  ///
  /// Accepts `--name value`, `--name=value` and `--` (everything after is positional); a lone `-`
  /// is a positional (standard input).
  /// - Throws: ``UsageError`` naming an unknown option, a missing value, a flag given a value, or
  ///   a missing or extra argument.
  public init(_ arguments: [String], spec: CommandSpec, usage: String) throws(UsageError) {
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
        if !onlyPositionals && argument.hasPrefix("-") && argument != "-" && Int(argument) == nil {
          throw UsageError("unknown option '\(argument)'", usage: usage)
        }
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      var name = String(argument.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      if name == "help" {
        flags.insert("help")
        continue
      }
      guard let option = spec.options.first(where: { $0.name == name }) else {
        throw UsageError("unknown option '--\(name)'", usage: usage)
      }
      if let placeholder = option.value {
        if let inlineValue {
          values[name] = inlineValue
        } else {
          guard index < arguments.count else {
            throw UsageError("missing value for '--\(name) <\(placeholder)>'", usage: usage)
          }
          values[name] = arguments[index]
          index += 1
        }
      } else {
        guard inlineValue == nil else {
          throw UsageError("the flag '--\(name)' takes no value", usage: usage)
        }
        flags.insert(name)
      }
    }
    if wantsHelp { return }
    let required = spec.arguments.filter { !$0.optional }.count
    if positionals.count < required {
      let missing = spec.arguments[positionals.count]
      throw UsageError("missing argument '\(missing.name)'", usage: usage)
    }
    if positionals.count > spec.arguments.count {
      throw UsageError("unexpected argument '\(positionals[spec.arguments.count])'", usage: usage)
    }
  }

  /// Whether the flag was given.
  public func flag(_ name: String) -> Bool { flags.contains(name) }

  /// The value of an option, or `nil`.
  public func value(_ name: String) -> String? { values[name] }

  /// The value of an option as an `Int` in `range`.
  /// - Throws: ``UsageError`` naming the option and the value that does not parse.
  public func integer(
    _ name: String, in range: ClosedRange<Int>? = nil, usage: String
  ) throws(UsageError) -> Int? {
    try integer(name, as: Int.self, in: range, usage: usage)
  }

  /// The value of an option as an integer of type `T` in `range`.
  /// - Throws: ``UsageError`` naming the option and the value that does not parse.
  public func integer<T: FixedWidthInteger>(
    _ name: String, as type: T.Type, in range: ClosedRange<T>?, usage: String
  ) throws(UsageError) -> T? {
    guard let text = values[name] else { return nil }
    guard let value = T(text), range.map({ $0.contains(value) }) ?? true else {
      let bounds = range.map { " (\($0.lowerBound)…\($0.upperBound))" } ?? ""
      throw UsageError("invalid value '\(text)' for '--\(name)': expected an integer\(bounds)", usage: usage)
    }
    return value
  }
}
