import EventLog

/// How `eventlog diff` and `eventlog history` show a projection entry that changed
/// (`EventStore.RowChange`): as text, a line naming the entry and what happened, then one line per
/// field; as JSON, `{"projection", "table", "key", "change", "before", "after", "changedFields"}`
/// with the fields as objects (`null` where the entry is absent).
enum RowChangeOutput {
  /// The text lines of `change`, indented by `indent` spaces: `projection/table key: added`, then
  /// each field of an added entry (`name  value`), each changed field of a changed one
  /// (`name  old → new`), or each field a removed entry had (`name  old → -`).
  static func lines(_ change: EventStore.RowChange, indent: Int) -> [String] {
    let margin = String(repeating: " ", count: indent)
    var lines = ["\(margin)\(change.projection)/\(change.table) \(change.keyText): \(change.kind.rawValue)"]
    let before = Dictionary((change.before ?? []).map { ($0.name, $0.json) }, uniquingKeysWith: { a, _ in a })
    let after = Dictionary((change.after ?? []).map { ($0.name, $0.json) }, uniquingKeysWith: { a, _ in a })
    let names = change.changedFields
    let width = names.map(\.count).max() ?? 0
    for name in names {
      let label = name.padding(toLength: width, withPad: " ", startingAt: 0)
      switch change.kind {
      case .added: lines.append("\(margin)  \(label)  \(after[name] ?? "-")")
      case .removed: lines.append("\(margin)  \(label)  \(before[name] ?? "-") → -")
      case .changed: lines.append("\(margin)  \(label)  \(before[name] ?? "-") → \(after[name] ?? "-")")
      }
    }
    return lines
  }

  /// The JSON object of `change`.
  static func json(_ change: EventStore.RowChange) -> JSONValue {
    func fields(_ fields: [ShownField]?) -> JSONValue {
      guard let fields else { return .null }
      return .object(fields.map { ($0.name, .raw($0.json)) })
    }
    return .object([
      ("projection", .string(change.projection)),
      ("table", .string(change.table)),
      ("key", .string(change.keyText)),
      ("change", .string(change.kind.rawValue)),
      ("before", fields(change.before)),
      ("after", fields(change.after)),
      ("changedFields", .array(change.changedFields.map(JSONValue.string))),
    ])
  }
}
