extension EventLogProgram {
  /// The top-level help's overview line for `app`.
  static func abstract(of app: EventLogApp) -> String {
    "Audit, replay and verify the event log of the \(app.schema.name) data layer."
  }

  /// The top-level usage line of the program `name`.
  static func globalUsage(_ name: String) -> String { "\(name) [--db PATH] COMMAND [OPTIONS]" }

  static func groupUsage(_ group: CommandGroup, program name: String) -> String {
    "\(name) \(group.name) \(group.commands.map { $0.configuration.name }.joined(separator: "|")) [OPTIONS]"
  }

  static func groupHelp(_ group: CommandGroup, program name: String) -> String {
    var lines = [
      "OVERVIEW: \(group.abstract)", "", "USAGE: \(groupUsage(group, program: name))", "", "SUBCOMMANDS:",
    ]
    lines += CommandSignature.columns(
      group.commands.map { ($0.configuration.name, $0.configuration.abstract) })
    lines += ["", "OPTIONS:"]
    lines += CommandSignature.columns([("-h, --help", "Show help information.")])
    lines += ["", "  See '\(name) \(group.name) SUBCOMMAND --help' for details."]
    return lines.joined(separator: "\n")
  }

  static func topLevelHelp(_ app: EventLogApp) -> String {
    let abstract = abstract(of: app)
    var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(globalUsage(app.programName))", "", "OPTIONS:"]
    let global = CommandSignature(
      CommandConfiguration(name: "", abstract: abstract), declaredIn: GlobalOptions())
    lines += CommandSignature.columns(
      global.options.map { ($0.synopsis(angled: true), $0.help) } + [("-h, --help", "Show help information.")]
    )
    lines += ["", "COMMANDS:"]
    var entries: [(String, String)] = []
    for group in app.groups {
      for command in group.commands {
        entries.append(("\(group.name) \(command.configuration.name)", command.configuration.abstract))
      }
    }
    for command in commands { entries.append((command.configuration.name, command.configuration.abstract)) }
    lines += CommandSignature.columns(entries)
    lines += ["", "  See '\(app.programName) COMMAND --help' for details."]
    return lines.joined(separator: "\n")
  }
}
