extension EventLogProgram {
  /// The options before the command.
  struct GlobalOptions: ArgumentGroup {
    @Option(
      "db", "PATH", help: "The LMDB environment directory (default: $EVENTLOG_DB, else ./eventlog.db).",
      type: .nonEmpty("a directory"))
    var db: String?
    @Flag("version", help: "Show the version.")
    var version: Bool

    /// Takes every `--db PATH` and `--db=PATH` out of `arguments` and returns the last one's path.
    ///
    /// Global options may stand anywhere before `--`, so they are taken out before the command's
    /// own parser sees the words.
    /// - Parameters:
    ///   - arguments: the command line's words, left without the `--db` options.
    ///   - defaultPath: the path when no `--db` is given.
    ///   - program: the program's name, for the usage line.
    /// - Returns: the environment directory's path.
    /// - Throws: ``UsageError`` for a `--db` without a value, or with an empty one.
    static func extractDatabasePath(
      from arguments: inout [String], default defaultPath: String, program: String = "eventlog"
    ) throws -> String {
      var databasePath = defaultPath
      let db = "--" + GlobalOptions().$db.slot.definition.name
      var index = 0
      while index < arguments.count && arguments[index] != "--" {
        let argument = arguments[index]
        if argument == db || argument.hasPrefix(db + "=") {
          let value: String?
          if argument == db {
            value = index + 1 < arguments.count ? arguments[index + 1] : nil
            arguments.removeSubrange(index...min(index + 1, arguments.count - 1))
          } else {
            value = String(argument.dropFirst(db.count + 1))
            arguments.remove(at: index)
          }
          guard let value, !value.isEmpty else {
            throw UsageError("missing value for '--db <PATH>'", usage: globalUsage(program))
          }
          databasePath = value
        } else {
          index += 1
        }
      }
      return databasePath
    }
  }
}
