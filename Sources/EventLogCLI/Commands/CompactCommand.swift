import EventLog

/// `eventlog compact`: replaces the environment's data file with a compacting copy of itself, so
/// that its free pages keep nothing of what was deleted or overwritten.
struct CompactCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "compact",
    abstract: "Rewrite the data file without its free pages, so that nothing deleted survives in it.",
    discussion: """
      LMDB keeps the bytes of a deleted or overwritten value in the data file's free pages until a later \
      commit reuses them. compact writes a compacting copy of the environment (as mdb_copy -c: only the pages \
      in use) to a directory inside it, flushes it to disk, and renames it over data.mdb: a crash leaves the \
      old file or the new one. The events, the chain head and the projections are unchanged; the file is \
      usually smaller. Prints the data file's size before and after.

      It needs the environment to itself: it fails (exit 1), changing nothing, while another process has it \
      open (an app, a running 'replicate --watch'); stop that process first. A process that tries to open \
      the environment while the copy is renamed waits, then fails once, and opens it when tried again. \
      With --json: {"path", "bytesBefore", "bytesAfter"}.
      """)

  @Flag("json", help: #"As {"path", "bytesBefore", "bytesAfter"}."#)
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    let compaction: EventStore.Compaction
    do {
      compaction = try await store.compact()
    } catch EventStoreError.environmentInUse(_, let process) {
      throw CommandFailure(
        "the event log at '\(context.databasePath)' is open in another process"
          + (process.map { " (process \($0))" } ?? "")
          + ": compact needs it alone; stop that process and run compact again (nothing was changed)")
    } catch {
      throw CommandFailure(
        "cannot compact the event log at '\(context.databasePath)': \(error)", underlying: error)
    }
    if json {
      context.console.print(
        JSONValue.object([
          ("path", .string(compaction.path)), ("bytesBefore", .int(Int64(compaction.bytesBefore))),
          ("bytesAfter", .int(Int64(compaction.bytesAfter))),
        ]).rendered())
    } else {
      context.console.print(
        "Compacted '\(TerminalText.escaped(compaction.path))/data.mdb': \(compaction.bytesBefore) bytes before "
          + "(\(Formatting.bytes(compaction.bytesBefore))), \(compaction.bytesAfter) bytes after "
          + "(\(Formatting.bytes(compaction.bytesAfter))).")
    }
  }
}
