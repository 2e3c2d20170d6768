import EventLog
import Foundation

/// `eventlog conflicts`: the concurrent writes the convergent rule overwrote or discarded, in
/// every table with updates of the app's schema.
struct ConflictsCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "conflicts",
    abstract: "List the concurrent changes the convergent rule overwrote or discarded, newest first.",
    discussion: """
      A table with updates folds each row's events in stamp order: of two changes of one field, the later \
      stamp wins; a delete wins over a change it crosses. Where the losing write had not been seen by the \
      winner (it was made apart: on another device before they exchanged events, or by a device whose clock \
      was behind), the rule records a conflict: the table, the row's key, the field, how it was decided \
      (overwritten: the later stamp's value holds; deleted: a later delete removed the changed row; \
      discarded: a change stamped after a delete), and both writes: their value, event sequence here, device \
      and recorded-at. A write had seen another when the event it names as its causation (the row's latest \
      when it was written) is stamped at or after it. Every device that holds the same events lists the same \
      conflicts.
      """)

  @Flag(
    "json",
    help:
      #"As a JSON array of {"table", "key", "field", "kind", "winner", "loser"}, each side {"event", "seq", "device", "deviceSeq", "recordedAt", "value"} (value: the field's JSON, null for a delete)."#
  )
  var json: Bool
  @Option("table", "NAME", help: "Only this table's conflicts (a table with updates of the app's schema).")
  var table: String?
  @Option("limit", "N", help: "Show at most N conflicts, the newest.", type: .integer(in: 0...Int.max))
  var limit: Int?

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    if let table, !store.conflictTables.contains(table) {
      let tables = store.conflictTables
      throw CommandFailure(
        "--table: '\(TerminalText.escaped(table))' is no table with updates (those that keep conflicts: "
          + (tables.isEmpty ? "none" : tables.joined(separator: ", ")) + ")")
    }
    var conflicts = Array(try store.conflicts(in: table).reversed())
    if let limit { conflicts = Array(conflicts.prefix(limit)) }
    if json {
      context.console.print(JSONValue.array(conflicts.map(Self.json)).rendered())
      return
    }
    guard !conflicts.isEmpty else {
      context.console.print(
        "no conflicts recorded" + (table.map { " in '\(TerminalText.escaped($0))'" } ?? ""))
      return
    }
    var rows = Table(["TABLE", "KEY", "FIELD", "KIND", "WINNER", "LOSER"])
    for conflict in conflicts {
      rows.append([
        TerminalText.escaped(conflict.table), TerminalText.escaped(conflict.key),
        TerminalText.escaped(conflict.field), conflict.kind.rawValue, Self.shown(conflict.winner),
        Self.shown(conflict.loser),
      ])
    }
    context.console.print(rows.rendered(), terminator: "")
  }

  /// A write in the table: its value (cut at 40 characters), sequence here and device.
  static func shown(_ write: Conflict.Write) -> String {
    var value = write.value ?? "(deleted)"
    if value.count > 40 { value = value.prefix(39) + "…" }
    let sequence = write.sequence.map { "seq \($0)" } ?? "seq ?"
    let device = write.device.map { ", device " + $0.lowercasedString.prefix(8) } ?? ""
    return TerminalText.escaped(value) + " (\(sequence)\(device))"
  }

  static func json(_ conflict: Conflict) -> JSONValue {
    func side(_ write: Conflict.Write) -> JSONValue {
      // The value is the JSON the engine rendered; anything else (a damaged table) is shown as text.
      let value: JSONValue =
        write.value.map { text in
          (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil
            ? .raw(text) : .string(text)
        } ?? .null
      return .object([
        ("event", .string(write.eventID.lowercasedString)),
        ("seq", write.sequence.map(JSONValue.uint) ?? .null),
        ("device", .optional(write.device?.lowercasedString)),
        ("deviceSeq", write.deviceSequence.map(JSONValue.uint) ?? .null),
        ("recordedAt", .string(ISO8601.string(from: write.recordedAt))), ("value", value),
      ])
    }
    return .object([
      ("table", .string(conflict.table)), ("key", .string(conflict.key)), ("field", .string(conflict.field)),
      ("kind", .string(conflict.kind.rawValue)), ("winner", side(conflict.winner)),
      ("loser", side(conflict.loser)),
    ])
  }
}
