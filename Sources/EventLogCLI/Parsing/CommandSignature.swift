/// A command's declarations, found by reflection in declaration order: the one source of its
/// parser, its usage line and its `--help`.
struct CommandSignature {
  let configuration: CommandConfiguration
  let slots: [any ArgumentSlot]

  /// The declarations of `command`: its ``Flag``, ``Option`` and ``Argument`` properties and those
  /// of its ``ArgumentGroup`` properties, in declaration order.
  init(_ configuration: CommandConfiguration, declaredIn command: Any) {
    self.configuration = configuration
    slots = Self.declarations(in: command)
    var names = Set<String>()
    for slot in slots {
      precondition(
        names.insert(slot.definition.label).inserted && slot.definition.name != "help",
        "'\(configuration.name)' declares '\(slot.definition.label)' twice (or declares --help)")
    }
  }

  private static func declarations(in value: Any) -> [any ArgumentSlot] {
    Mirror(reflecting: value).children.flatMap { child -> [any ArgumentSlot] in
      if let declared = child.value as? any DeclaredArgument { return [declared.slot] }
      if let group = child.value as? any ArgumentGroup { return declarations(in: group) }
      return []
    }
  }

  var options: [ArgumentDefinition] { slots.map(\.definition).filter { $0.kind != .positional } }
  var positionals: [ArgumentDefinition] { slots.map(\.definition).filter { $0.kind == .positional } }

  /// The usage line: `eventlog log [--json] [--stream ID] …`, required options and arguments
  /// without brackets.
  func usage(prefix: String) -> String {
    var parts = [prefix, configuration.name].filter { !$0.isEmpty }
    for definition in options + positionals {
      let synopsis = definition.synopsis(angled: false)
      parts.append(definition.isRequired ? synopsis : "[\(synopsis)]")
    }
    return parts.joined(separator: " ")
  }

  /// The full `--help` text.
  func help(prefix: String) -> String {
    var lines = [
      "OVERVIEW: \(configuration.abstract)", "", "USAGE: \(usage(prefix: prefix))",
    ]
    if !positionals.isEmpty {
      lines += ["", "ARGUMENTS:"]
      lines += Self.columns(positionals.map { ($0.name, $0.help) })
    }
    lines += ["", "OPTIONS:"]
    lines += Self.columns(
      options.map { ($0.synopsis(angled: true), $0.help) } + [("-h, --help", "Show help information.")])
    if !configuration.discussion.isEmpty { lines += ["", configuration.discussion] }
    return lines.joined(separator: "\n")
  }

  /// Two columns, the first padded to its widest entry.
  static func columns(_ entries: [(String, String)]) -> [String] {
    let width = entries.map(\.0.count).max() ?? 0
    return entries.map { "  \($0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0))\($0.1)" }
  }

  /// Whether `argument` asks for help: `-h` or `--help`.
  static func isHelp(_ argument: String) -> Bool { argument == "-h" || argument == "--help" }

  /// Parses `arguments` into the declarations.
  ///
  /// Accepts `--name value`, `--name=value`, `-h`/`--help` anywhere before `--`, and `--` (everything
  /// after is positional); a lone `-` is a positional (standard input), and so is a negative number.
  /// The last value of an option given twice wins.
  /// - Returns: `false` when help was asked for (nothing else is checked then).
  /// - Throws: ``UsageError`` naming an unknown option, a missing value, a flag given a value, a
  ///   value that does not convert, or a missing or extra argument.
  func parse(_ arguments: [String]) throws(UsageError) -> Bool {
    var values: [(slot: any ArgumentSlot, text: String?)] = []
    var positionals: [String] = []
    var wantsHelp = false
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      if Self.isHelp(argument) {
        wantsHelp = true
        continue
      }
      guard argument.hasPrefix("--") else {
        if Int(argument) != nil {
          positionals.append(argument)
          continue
        }
        throw UsageError("unknown option '\(argument)'")
      }
      var name = String(argument.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      guard let slot = slots.first(where: { $0.definition.kind != .positional && $0.definition.name == name })
      else {
        throw UsageError("unknown option '--\(name)'")
      }
      if slot.definition.kind == .flag {
        guard inlineValue == nil else { throw UsageError("the flag '--\(name)' takes no value") }
        values.append((slot, nil))
      } else if let inlineValue {
        values.append((slot, inlineValue))
      } else {
        guard index < arguments.count else {
          throw UsageError("missing value for '\(slot.definition.synopsis(angled: true))'")
        }
        values.append((slot, arguments[index]))
        index += 1
      }
    }
    if wantsHelp { return false }
    let positionalSlots = slots.filter { $0.definition.kind == .positional }
    if positionals.count > positionalSlots.count {
      throw UsageError("unexpected argument '\(positionals[positionalSlots.count])'")
    }
    values += zip(positionalSlots, positionals).map { ($0, $1) }
    for (slot, text) in values {
      guard let text else {
        slot.acceptFlag()
        continue
      }
      do {
        try slot.accept(text)
      } catch {
        let given = error.showsValue ? " '\(text)'" : ""
        throw UsageError("invalid value\(given) for '\(slot.definition.label)': \(error.reason)")
      }
    }
    for slot in slots where slot.definition.isRequired && !slot.hasValue {
      if slot.definition.kind == .positional {
        throw UsageError("missing argument '\(slot.definition.name)'")
      }
      throw UsageError("missing '\(slot.definition.synopsis(angled: true))'")
    }
    return true
  }
}
