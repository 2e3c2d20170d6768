import Foundation
import Testing

@testable import EventLogCLI

/// The command line's parsing, in process through `EventLogProgram`: every command's parser, usage
/// line and help come from its declarations, so these tests walk the declarations.
@Suite("Parsing (in process)")
struct ParsingTests {
  /// Every command with the words that reach it (`["bookings", "create"]`) and its type.
  static let allCommands: [(path: [String], type: any CLICommand.Type)] =
    InProcessCLI.app.groups.flatMap { group in
      group.commands.map { ([group.name, $0.configuration.name], $0) }
    } + EventLogProgram.commands.map { ([$0.configuration.name], $0) }

  static let paths = allCommands.map(\.path)

  static func signature(_ path: [String]) throws -> CommandSignature {
    try #require(allCommands.first { $0.path == path }).type.signature
  }

  static func prefix(_ path: [String]) -> String { (["eventlog"] + path.dropLast()).joined(separator: " ") }

  @Test("-h and --help print the help made from the declarations, on every command", arguments: paths)
  func help(path: [String]) async throws {
    let cli = InProcessCLI()
    let signature = try Self.signature(path)
    for flag in ["-h", "--help"] {
      let run = await cli.run(path + [flag])
      #expect(run.status == 0, "\(path) \(flag): \(run)")
      #expect(run.stdout == signature.help(prefix: Self.prefix(path)) + "\n")
      #expect(run.stdout.contains("USAGE: \(signature.usage(prefix: Self.prefix(path)))"))
      for option in signature.options {
        #expect(run.stdout.contains(option.synopsis(angled: true)), "\(path): \(option.name)")
        #expect(run.stdout.contains(option.help))
      }
      for argument in signature.positionals { #expect(run.stdout.contains("  \(argument.name)  ")) }
      #expect(run.stdout.contains("-h, --help"))
      // Help needs no required option and ignores extra arguments; an unknown option before it is
      // still an error.
      #expect(await cli.run(path + [flag, "extra", "arguments"]).status == 0)
      #expect(await cli.run(path + ["--bogus", flag]).status == 64)
    }
    #expect(!FileManager.default.fileExists(atPath: cli.database), "help must not create the environment")
  }

  @Test("-h and --help on the tool and every group")
  func groupHelp() async throws {
    let cli = InProcessCLI()
    for flag in ["-h", "--help", "help"] {
      let top = await cli(flag)
      #expect(top.status == 0)
      #expect(top.stdout == EventLogProgram.topLevelHelp(InProcessCLI.app) + "\n")
      for path in Self.paths { #expect(top.stdout.contains(path.joined(separator: " ")), "\(path)") }
      #expect(top.stdout.contains("--db <PATH>") && top.stdout.contains("--version"))
    }
    for group in InProcessCLI.app.groups {
      for flag in ["-h", "--help"] {
        let run = await cli(group.name, flag)
        #expect(run.status == 0 && run.stdout.contains("SUBCOMMANDS"), "\(group.name): \(run)")
        for command in group.commands { #expect(run.stdout.contains(command.configuration.name)) }
      }
    }
    #expect(await cli("--version").stdout == "eventlog \(EventLogProgram.version)\n")
  }

  @Test("every declared option: a missing value, a flag given a value, an unknown option", arguments: paths)
  func declaredOptions(path: [String]) async throws {
    let cli = InProcessCLI()
    let signature = try Self.signature(path)
    let usage = "Usage: \(signature.usage(prefix: Self.prefix(path)))\n"
    for option in signature.options {
      if case .option = option.kind {
        let run = await cli.run(path + ["--\(option.name)"])
        #expect(run.status == 64, "\(path) --\(option.name): \(run)")
        #expect(run.stderr.contains("missing value for '\(option.synopsis(angled: true))'"), "\(run)")
        #expect(run.stderr.contains(usage), "\(run)")
      } else {
        let run = await cli.run(path + ["--\(option.name)=yes"])
        #expect(
          run.status == 64 && run.stderr.contains("the flag '--\(option.name)' takes no value"), "\(run)")
      }
    }
    for unknown in ["--bogus", "-x"] {
      let run = await cli.run(path + [unknown])
      #expect(run.status == 64 && run.stderr.contains("unknown option '\(unknown)'"), "\(run)")
      #expect(run.stderr.contains(usage))
    }
    #expect(!FileManager.default.fileExists(atPath: cli.database))
  }

  @Test(
    "usage errors exit 64 with the usage line, naming the flag, and append nothing",
    arguments: [
      (["bogus"], "unknown command 'bogus'"),
      (["log", "--from", "x"], "invalid value 'x' for '--from': expected an integer (1…"),
      (["log", "--limit", "-1"], "invalid value '-1' for '--limit'"),
      (["log", "--from", "5", "--to", "2"], "'--to 2' is before '--from 5'"),
      (["log", "--stream", ""], "invalid value for '--stream'"),
      (["show"], "missing argument 'SEQ|EVENT-ID'"),
      (["show", "abc"], "invalid value 'abc' for 'SEQ|EVENT-ID'"),
      (["show", "1", "2"], "unexpected argument '2'"),
      (["replay", "--to", "0"], "'--to'"),
      (["replay", "--to", "1", "--apply"], "'--apply'"),
      (["restaurants"], "missing subcommand"),
      (["restaurants", "-x"], "unknown option '-x' for 'restaurants'"),
      (["restaurants", "fly"], "unknown subcommand 'fly'"),
      (["restaurants", "sync"], "missing '--from <URL|FILE|->'"),
      (["restaurants", "sync", "--from", ""], "invalid value '' for '--from'"),
      (["restaurants", "sync", "--from", "a", "--deadline", "0"], "'--deadline'"),
      (["restaurants", "sync", "--from", "https://example.supabase.co"], "--api-key"),
      (["bookings", "delete", "not-a-uuid"], "invalid value 'not-a-uuid' for 'ID': expected a UUID"),
      (
        ["bookings", "create", "--restaurant", "x", "--date", "tomorrow", "--party", "2", "--name", "A"],
        "invalid value 'tomorrow' for '--date': expected an ISO 8601 date-time"
      ),
      (
        [
          "bookings", "create", "--restaurant", "x", "--date", "2030-01-01T00:00:00Z", "--party", "two",
          "--name", "A",
        ], "'--party'"
      ),
      (
        ["bookings", "create", "--restaurant", "x", "--date", "2030-01-01T00:00:00Z", "--party", "2"],
        "missing '--name <TEXT>'"
      ),
      (["export", "--output", ""], "'--output'"),
      (["import"], "missing argument 'FILE'"),
      (["push", "mysql://me:secret@host/db"], "'URL': not a postgres://"),
      (["push"], "missing 'URL'"),
      (["pull", "postgres://x", "--retry-for", "soon"], "'--retry-for'"),
      (
        ["replicate", "postgres://x", "--watch", "--retry-for", "3"],
        "'--retry-for' does not apply to '--watch'"
      ),
      (["remote", "init", "http://x"], "'URL'"),
      (["--db"], "'--db <PATH>'"),
      (["--db="], "'--db <PATH>'"),
      ([], "missing command"),
    ])
  func usageErrors(arguments: [String], message: String) async throws {
    let cli = InProcessCLI()
    try #require(await cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    let before = await cli.head()
    let run = await cli.run(arguments)
    #expect(run.status == 64, "\(run)")
    #expect(run.stderr.hasPrefix("Error: "), "\(run)")
    #expect(run.stderr.contains(message), "\(run)")
    #expect(run.stderr.contains("Usage: eventlog"), "\(run)")
    #expect(!run.stderr.contains("secret"), "a URL is never repeated: \(run)")
    #expect(await cli.head() == before)
  }

  @Test("typed values reach the command: --name=value, the last value wins, defaults, - and --")
  func values() async throws {
    let cli = InProcessCLI()
    try #require(await cli("restaurants", "sync", "--from", try cli.file("a.json", snapshotA)).status == 0)
    func sequences(_ arguments: String...) async throws -> [Int] {
      let run = await cli.run(["log", "--json"] + arguments)
      #expect(run.status == 0, "\(run)")
      return try run.stdout.split(separator: "\n").map { line in
        try #require(
          (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["seq"] as? Int)
      }
    }
    #expect(try await sequences() == [1, 2, 3, 4])
    #expect(try await sequences("--from=2", "--limit", "2") == [2, 3])
    #expect(try await sequences("--from", "1", "--from", "3") == [3, 4])
    #expect(try await sequences("--type", "RestaurantsRefreshed") == [4])
    #expect(try await sequences("--stream", "restaurant-catalog", "--to", "1") == [1])
    let show = await cli("show", "--", "2")
    #expect(show.status == 0 && show.stdout.contains("RestaurantAdded"), "\(show)")
    // The ID argument in either case.
    let created = await cli(
      "bookings", "create", "--restaurant", pastaID.uppercased(), "--date", "2099-01-01T19:00:00Z", "--party",
      "2", "--name", "Ada", "--json")
    #expect(created.status == 0, "\(created)")
    let id = try #require(
      (try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["id"] as? String)
    #expect(await cli("bookings", "delete", id.uppercased()).status == 0)
  }

  @Test("every command declares each name once, and a required option or argument shows without brackets")
  func declarations() throws {
    for (path, type) in Self.allCommands {
      let signature = type.signature
      let usage = signature.usage(prefix: Self.prefix(path))
      for definition in signature.options + signature.positionals {
        let synopsis = definition.synopsis(angled: false)
        #expect(usage.contains(definition.isRequired ? " \(synopsis)" : "[\(synopsis)]"), "\(path): \(usage)")
      }
      #expect(Set(signature.slots.map(\.definition.label)).count == signature.slots.count)
    }
    #expect(
      try Self.signature(["restaurants", "sync"]).usage(prefix: "eventlog restaurants")
        == "eventlog restaurants sync --from URL|FILE|- [--api-key KEY] [--deadline SECONDS] [--json]")
  }
}
