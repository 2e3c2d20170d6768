import EventLog
import Foundation

/// `eventlog subjects`: the data subjects whose personal values the log holds sealed, with their
/// event counts, whether their key is here, and their erasures.
struct SubjectsCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "subjects",
    abstract:
      "List the data subjects whose personal data the log holds, with their event counts and erasures.",
    discussion: """
      A data subject is the person personal values belong to (in the example app, a customer). Each event \
      lists the subjects whose values it holds sealed; a subject's values open with its key, which lives \
      beside the log (never in an event or an export) and replicates to the owner's devices through the \
      server. An erased subject's key is destroyed everywhere the erasure reaches ('eventlog erase').
      """)

  @Flag(
    "json",
    help:
      #"As a JSON array of {"subject", "events", "firstSeq", "lastSeq", "key", "erasedAt", "erasure"} (key: whether it is held here; erasedAt and erasure, the SubjectErased event's ID: null unless erased)."#
  )
  var json: Bool

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.read)
    let subjects = try store.subjects()
    if json {
      context.console.print(JSONValue.array(subjects.map(Self.json)).rendered())
      return
    }
    guard !subjects.isEmpty else {
      context.console.print("no data subjects: no event holds sealed personal data")
      return
    }
    var table = Table(["SUBJECT", "EVENTS", "FIRST", "LAST", "KEY", "ERASED"], rightAligned: [1, 2, 3])
    for subject in subjects {
      table.append([
        subject.id.lowercasedString, String(subject.events), subject.firstSequence.map(String.init) ?? "-",
        subject.lastSequence.map(String.init) ?? "-", subject.hasKey ? "held" : "-",
        subject.erasedAt.map(ISO8601.string(from:)) ?? "-",
      ])
    }
    let erased = subjects.filter { $0.erasedAt != nil }.count
    context.console.print(
      table.rendered() + "\(subjects.count) subject\(subjects.count == 1 ? "" : "s"), \(erased) erased",
      terminator: "\n")
  }

  static func json(_ subject: DataSubject) -> JSONValue {
    .object([
      ("subject", .string(subject.id.lowercasedString)),
      ("events", .int(Int64(subject.events))),
      ("firstSeq", subject.firstSequence.map(JSONValue.uint) ?? .null),
      ("lastSeq", subject.lastSequence.map(JSONValue.uint) ?? .null),
      ("key", .bool(subject.hasKey)),
      ("erasedAt", .optional(subject.erasedAt.map(ISO8601.string(from:)))),
      ("erasure", .optional(subject.erasureEvent?.lowercasedString)),
    ])
  }
}

/// `eventlog erase SUBJECT --reason TEXT`: erases a data subject everywhere.
struct EraseCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "erase",
    abstract: "Erase a data subject: destroy its key and append SubjectErased, which replicates.",
    discussion: """
      The subject's personal values stay in the log sealed, and can never be opened again: every device \
      and server that receives the SubjectErased event destroys its copy of the key and refuses the \
      subject's key and new personal values from then on. The log's hash chain is unchanged. LMDB may keep \
      the key's bytes in a freed page of the data file until it reuses it: run 'eventlog compact' to drop \
      them. Erasing a subject erased already appends nothing. See Docs/Erasure.md.
      """)

  @Argument("SUBJECT", help: "The subject's ID (see 'eventlog subjects').", type: .uuid)
  var subject: UUID
  @Option(
    "reason", "TEXT", help: "Why, for the audit trail (replicated and exported: no personal data).",
    type: .nonBlank("the reason for the erasure"))
  var reason: String

  func run(_ context: CommandContext) async throws {
    let store = try context.openStore(.write)
    context.console.print(try await Self.erase(subject, reason: reason, in: store))
  }

  /// Erases `subject` and says what happened, in a line.
  static func erase(_ subject: UUID, reason: String, in store: EventStore) async throws -> String {
    do {
      switch try await store.erase(subject: subject, reason: reason) {
      case .erased(let sequence):
        return
          "erased subject \(subject.lowercasedString): its key is destroyed (SubjectErased, seq \(sequence))"
      case .alreadyErased(let erasedAt, let event):
        return "subject \(subject.lowercasedString) was erased already, at \(ISO8601.string(from: erasedAt)) "
          + "(event \(event.lowercasedString)): nothing appended"
      }
    } catch EventStoreError.unknownSubject {
      throw CommandFailure(
        "SUBJECT: no event holds personal data of \(subject.lowercasedString) and no key of it is here "
          + "(see 'eventlog subjects')")
    }
  }
}
