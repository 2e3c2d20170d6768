import EventLog
import Foundation
import Synchronization
import TestKit
import Testing

/// One value describes an app's data (issue 22, item 1): composed from several modules' schemas,
/// each event judged by the rules of the module that registers its type, an unknown type
/// unreadable; and a store opened read-only on an environment another app wrote (item 3).
@Suite("App schema")
struct AppSchemaTests {
  @Test("composing merges event types, projections, replicated streams and stream names, in order")
  func composition() throws {
    let app = AppSchema(name: "app", composing: [Self.notes(), Self.tasks()])
    #expect(app.name == "app")
    #expect(app.modules == ["notes", "tasks"])
    // The layer's erasure is registered by every schema, once.
    #expect(
      app.eventTypes.typeNames == ["NoteAdded", "NoteRemoved", "SubjectErased", "TaskAdded", "TaskDone"])
    #expect(app.projections.map(\.name) == ["notes", "tasks"])
    #expect(app.knows(eventType: "TaskDone") && !app.knows(eventType: "Poison"))
    // An app that replicates also replicates its erasures (`subject-`); one that replicates
    // nothing does not.
    #expect(
      app.replicatedStreams == AppSchema.StreamSelection(prefixes: ["note-", "task-", "inbox", "subject-"]))
    #expect(app.isReplicated("task-1") && app.isReplicated("inbox") && !app.isReplicated("in"))
    #expect(app.isReplicated(SubjectErased.stream(of: UUID())))
    #expect(!app.isReplicated("catalog"))
    #expect(AppSchema(name: "local", eventTypes: [NoteAdded.self]).replicatedStreams == .none)
    // Each module spells its own streams; the others stay as stored.
    #expect(app.streamNames.displayed("task-ABC") == "task-abc")
    #expect(app.streamNames.stored("task-abc") == "task-ABC")
    #expect(app.streamNames.displayed("note-ABC") == "note-ABC")
    #expect(app.streamNames.stored("anything") == "anything")
  }

  @Test("each event goes to the rules of the module that registers its type; an unknown type is unreadable")
  func admissionRouting() throws {
    let noteRules = RecordingAdmission(refusing: "forbidden")
    let taskRules = RecordingAdmission(refusing: "never")
    let app = AppSchema(
      name: "app", composing: [Self.notes(admission: noteRules), Self.tasks(admission: taskRules)])
    let admission = app.admission
    #expect(admission.verdict(for: try Self.recorded(note("fine"))) == .admitted)
    #expect(
      admission.verdict(for: try Self.recorded(note("forbidden")))
        == .invalid(reason: "NoteAdded says 'forbidden'"))
    #expect(
      admission.verdict(for: try Self.recorded(try NewEvent(TaskAdded(id: UUID(), title: "ok")))) == .admitted
    )
    #expect(
      admission.verdict(for: try Self.recorded(try NewEvent(TaskAdded(id: UUID(), title: "never"))))
        == .invalid(reason: "TaskAdded says 'never'"))
    // A note saying "never" is the notes' business, and they allow it.
    #expect(admission.verdict(for: try Self.recorded(note("never"))) == .admitted)
    #expect(noteRules.seen == ["NoteAdded", "NoteAdded", "NoteAdded"])
    #expect(taskRules.seen == ["TaskAdded", "TaskAdded"])
    // No module registers Poison: unreadable, and no module's rules are asked.
    let poison = try Self.recorded(try NewEvent(Poison(reason: "x")))
    #expect(
      admission.verdict(for: poison)
        == .unreadable(reason: "this build does not know the event type 'Poison'"))
    #expect(noteRules.seen.count == 3 && taskRules.seen.count == 2)
  }

  @Test("a module without rules admits what this build reads, and only that")
  func moduleWithoutRules() throws {
    let admission = Self.tasks().admission
    #expect(admission.verdict(for: try Self.recorded(try NewEvent(TaskDone(id: UUID())))) == .admitted)
    var newer = try NewEvent(TaskDone(id: UUID()))
    newer.schemaVersion = 2
    guard case .unreadable = admission.verdict(for: try Self.recorded(newer)) else {
      Issue.record("a newer schema version must be unreadable")
      return
    }
    let garbage = NewEvent(
      id: UUID(), type: "TaskDone", schemaVersion: 1, payload: [1], metadata: EventMetadata())
    guard case .invalid = admission.verdict(for: try Self.recorded(garbage)) else {
      Issue.record("a payload that does not decode must be invalid")
      return
    }
  }

  @Test("a store with a composed schema applies each module's rules to ingested events")
  func storeWithComposedSchema() async throws {
    let dir = TemporaryDirectory()
    let app = AppSchema(
      name: "app",
      composing: [
        Self.notes(admission: RecordingAdmission(refusing: "forbidden")),
        Self.tasks(admission: RecordingAdmission(refusing: "never")),
      ])
    let store = try EventStore(path: dir.environment(), schema: app, options: .fast)
    #expect(store.appSchema.modules == ["notes", "tasks"])
    #expect(store.projections.map(\.name) == ["notes", "tasks"])
    let outcomes = try await store.ingest([
      EventStore.IngestedEvent(stream: "note-1", event: try note("forbidden")),
      EventStore.IngestedEvent(stream: "task-1", event: try NewEvent(TaskAdded(id: UUID(), title: "never"))),
      EventStore.IngestedEvent(stream: "task-2", event: try NewEvent(TaskAdded(id: UUID(), title: "fine"))),
      EventStore.IngestedEvent(stream: "x", event: try NewEvent(Poison(reason: "unknown here"))),
    ])
    #expect(outcomes[0] == .skipped(sequence: 1, kind: .invalid, reason: "NoteAdded says 'forbidden'"))
    #expect(outcomes[1] == .skipped(sequence: 2, kind: .invalid, reason: "TaskAdded says 'never'"))
    #expect(outcomes[2] == .stored(sequence: 3))
    #expect(
      outcomes[3]
        == .skipped(
          sequence: 4, kind: .unreadable, reason: "this build does not know the event type 'Poison'"))
    #expect(try store.read { try Tasks.projection.reader(in: $0).count() } == 1)
    let report = try store.verify()
    #expect(report.isClean, "\(report.problems)")
    #expect(
      report.uncheckedEvents == [
        EventStore.VerificationReport.UncheckedEvents(
          type: "Poison", count: 1, reason: outcomes[3].reason ?? "")
      ])
  }

  @Test("stream selections: prefixes, union, text")
  func streamSelection() {
    let selection = AppSchema.StreamSelection(prefixes: ["b-", "a-", "a-"])
    #expect(selection.prefixes == ["a-", "b-"])
    #expect(selection.contains("a-1") && selection.contains("b-"))
    #expect(!selection.contains("c-1") && !selection.contains("a") && !selection.contains("A-1"))
    #expect(selection.description == "a-*, b-*")
    #expect(AppSchema.StreamSelection.none.isEmpty && !AppSchema.StreamSelection.none.contains("a"))
    #expect(AppSchema.StreamSelection.none.description == "(none)")
    #expect(AppSchema.StreamSelection.all.contains("anything"))
    #expect(
      selection.union(AppSchema.StreamSelection(prefixes: ["x-", "a-"]))
        == AppSchema.StreamSelection(prefixes: ["a-", "b-", "x-"]))
  }

  @Test("read-only, a store of another app reads the log and says what it cannot check")
  func readOnlyOnAnotherAppsEnvironment() async throws {
    let dir = TemporaryDirectory()
    // The tasks app writes the environment.
    try await withStore(at: dir.environment(), schema: Self.tasks()) { store in
      try await store.append([try NewEvent(TaskAdded(id: Self.taskID, title: "write tests"))], to: "task-1")
      try await store.append([try NewEvent(TaskDone(id: Self.taskID))], to: "task-1")
    }
    // The notes app, read-only: no `notes` tables there, and `tasks` is not its own.
    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    try await withStore(at: dir.environment(), schema: Self.notes(), options: readOnly) { store in
      #expect(store.absentProjections == ["notes"])
      #expect(try store.head() == 2)
      #expect(try store.events(from: 1).map(\.type) == ["TaskAdded", "TaskDone"])
      #expect(
        try store.uncheckedProjections() == [
          // A table with updates stores the convergent rule's revision in its version's top byte.
          EventStore.VerificationReport.UncheckedProjection(
            name: "tasks", version: Tasks.projection.version, reason: .unknownToThisBuild),
          EventStore.VerificationReport.UncheckedProjection(
            name: "notes", version: nil, reason: .notInEnvironment),
        ])
      let report = try store.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(!report.isComplete)
      #expect(report.uncheckedProjections.map(\.name) == ["tasks", "notes"])
      #expect(report.uncheckedEvents.map(\.type) == ["TaskAdded", "TaskDone"])
      #expect(report.uncheckedEvents.map(\.count) == [1, 1])
      let replay = try store.replay()
      #expect(try store.firstDifference(from: replay) == nil)
      #expect(throws: EventStoreError.self) { try store.read { try $0.projection("notes") } }
    }
  }

  @Test("a write by another app leaves this app's projection tables alone and pins its checkpoint")
  func writesOfAnotherAppPinTheCheckpoint() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), schema: Self.tasks()) { store in
      try await store.append([try NewEvent(TaskAdded(id: Self.taskID, title: "one"))], to: "task-1")
    }
    let before = try await Self.tasksTables(at: dir.environment())
    // The notes app appends (its projection is built, the tasks' pinned to the head it found).
    try await withStore(at: dir.environment(), schema: Self.notes()) { store in
      try await store.append([try note("hello")], to: "note-1")
      #expect(try store.read { try $0.checkpoint(of: "tasks") } == 1)
      #expect(try store.verify().isClean)
    }
    #expect(try await Self.tasksTables(at: dir.environment()) == before)
    // The tasks app catches up from its checkpoint on its next writable open.
    try await withStore(at: dir.environment(), schema: Self.tasks()) { store in
      #expect(try store.read { try $0.checkpoint(of: "tasks") } == 2)
      let report = try store.verify()
      #expect(report.isClean && report.uncheckedProjections.map(\.name) == ["notes"], "\(report)")
      #expect(report.uncheckedEvents.map(\.type) == ["NoteAdded"])
    }
  }

  @Test("a projection behind the head is compared as of its checkpoint, and a difference there is found")
  func behindTheHead() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), schema: Self.tasks()) { store in
      try await store.append([try NewEvent(TaskAdded(id: Self.taskID, title: "one"))], to: "task-1")
    }
    try await withStore(at: dir.environment(), schema: Self.notes()) { store in
      try await store.append([try note("hello")], to: "note-1")
    }
    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    try await withStore(at: dir.environment(), schema: Self.tasks(), options: readOnly) { store in
      let comparison = try store.compare(with: try store.replay())
      #expect(comparison.difference == nil && comparison.compared.isEmpty)
      #expect(
        comparison.notCompared == [
          EventStore.VerificationReport.UncheckedProjection(
            name: "notes", version: 1, reason: .unknownToThisBuild),
          EventStore.VerificationReport.UncheckedProjection(
            name: "tasks", version: Tasks.projection.version, reason: .behind(checkpoint: 1)),
        ])
      let report = try store.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(report.uncheckedProjections == comparison.notCompared)
    }
    // A row changed behind the engine's back is a difference as of the checkpoint too.
    do {
      let raw = try CheckpointFormatTests.Raw(dir.environment())
      let table = try raw.environment.openDatabase("p:tasks:\(Tasks.projection.rowTable)", flags: [])
      try raw.environment.write { txn in
        try [UInt8]([0xFF]).withUnsafeBytes { k in
          try [UInt8]([1]).withUnsafeBytes { try txn.put($0, forKey: k, in: table) }
        }
      }
    }
    try await withStore(at: dir.environment(), schema: Self.tasks(), options: readOnly) { store in
      let report = try store.verify()
      #expect(
        report.problems.map(\.problem).contains {
          $0.contains("differ from a replay") && $0.contains("tasks")
        })
    }
  }

  @Test(
    "a projection never built (no checkpoint, empty tables: a first open interrupted) is not in the environment"
  )
  func interruptedFirstOpen() async throws {
    let dir = TemporaryDirectory()
    try await withStore(at: dir.environment(), schema: Self.tasks()) { _ in }
    do {
      let raw = try CheckpointFormatTests.Raw(dir.environment())
      try raw.environment.write { txn in
        _ = try Array("tasks".utf8).withUnsafeBytes { try txn.delete(forKey: $0, in: raw.checkpoints) }
      }
    }
    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    try await withStore(at: dir.environment(), schema: Self.tasks(), options: readOnly) { store in
      #expect(store.absentProjections == ["tasks"])
      let report = try store.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(
        report.uncheckedProjections == [
          EventStore.VerificationReport.UncheckedProjection(
            name: "tasks", version: nil, reason: .notInEnvironment)
        ])
    }
    // Rows without a checkpoint are not a projection never built: the open refuses nothing, and
    // verify names the missing checkpoint.
    try await withStore(at: dir.environment(), schema: Self.tasks()) { store in
      try await store.append([try NewEvent(TaskAdded(id: Self.taskID, title: "one"))], to: "task-1")
    }
    do {
      let raw = try CheckpointFormatTests.Raw(dir.environment())
      try raw.environment.write { txn in
        _ = try Array("tasks".utf8).withUnsafeBytes { try txn.delete(forKey: $0, in: raw.checkpoints) }
      }
    }
    try await withStore(at: dir.environment(), schema: Self.tasks(), options: readOnly) { store in
      #expect(store.absentProjections.isEmpty)
      let problems = try store.verify().problems.map(\.problem)
      #expect(problems.contains("projection 'tasks' has no checkpoint"), "\(problems)")
    }
  }

  // MARK: - Fixtures

  static let taskID = UUID(uuidString: "0196a0de-0000-7000-8000-000000000001") ?? UUID()

  /// The notes module: `NoteAdded`, `NoteRemoved`, the notes projection, streams `note-…` shared.
  static func notes(admission: (any EventAdmission)? = nil) -> AppSchema {
    AppSchema(
      name: "notes", eventTypes: [NoteAdded.self, NoteRemoved.self], projections: [NotesProjection()],
      admission: admission, replicatedStreams: AppSchema.StreamSelection(prefixes: ["note-"]))
  }

  /// The tasks module: `TaskAdded`, `TaskDone`, a table projection, streams `task-…` and `inbox…`
  /// shared, a task stream shown in lower case.
  static func tasks(admission: (any EventAdmission)? = nil) -> AppSchema {
    AppSchema(
      name: "tasks", eventTypes: [TaskAdded.self, TaskDone.self], projections: [Tasks.projection],
      admission: admission, replicatedStreams: AppSchema.StreamSelection(prefixes: ["task-", "inbox"]),
      streamNames: AppSchema.StreamNames(
        displayed: { $0.rawValue.hasPrefix("task-") ? $0.rawValue.lowercased() : $0.rawValue },
        stored: { $0.hasPrefix("task-") ? StreamID("task-" + $0.dropFirst(5).uppercased()) : StreamID($0) }))
  }

  /// Every entry of the tasks' tables, read by the tasks app read-only (nothing caught up).
  static func tasksTables(at path: String) async throws -> [String: [[UInt8]]] {
    var tables: [String: [[UInt8]]] = [:]
    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    try await withStore(at: path, schema: tasks(), options: readOnly) { store in
      try store.read { snapshot in
        let view = try snapshot.projection("tasks")
        for table in Tasks.projection.tables {
          var entries: [[UInt8]] = []
          try view.forEach(in: table) { key, value in
            entries.append([UInt8](key) + [UInt8](value))
            return true
          }
          tables[table] = entries
        }
      }
    }
    return tables
  }

  static func recorded(_ event: NewEvent, stream: StreamID = "s") throws -> RecordedEvent {
    RecordedEvent(
      sequence: 1, id: event.id, stream: stream, version: 1, type: event.type,
      schemaVersion: event.schemaVersion,
      recordedAt: Date(), metadata: event.metadata, payload: event.payload)
  }
}

/// A task added.
struct TaskAdded: EventPayload {
  static let eventType = "TaskAdded"
  var id: UUID
  var title: String
}

/// A task done.
struct TaskDone: EventPayload {
  static let eventType = "TaskDone"
  var id: UUID
}

/// A task's row.
struct TaskRow: TableRow, Codable, Hashable {
  var id: UUID
  var title: String
  var done: Bool
}

/// The tasks' table.
enum Tasks {
  static let projection = TableProjection<TaskRow>(
    name: "tasks", version: 1, primaryKey: .uuid(\.id),
    handlers: [
      .create(TaskAdded.self) { TaskRow(id: $0.id, title: $0.title, done: false) },
      .update(TaskDone.self, key: \.id) { row, _ in row.done = true },
    ])
}

/// Rules that refuse a payload holding `word` in its `text` or `title`, and remember which event
/// types they were asked about.
final class RecordingAdmission: EventAdmission {
  let word: String
  private let asked = Mutex<[String]>([])

  init(refusing word: String) { self.word = word }

  var seen: [String] { asked.withLock { $0 } }

  func verdict(for event: RecordedEvent) -> EventVerdict {
    asked.withLock { $0.append(event.type) }
    let text: String? =
      switch event.type {
      case NoteAdded.eventType: try? event.decode(NoteAdded.self).text
      case TaskAdded.eventType: try? event.decode(TaskAdded.self).title
      default: nil
      }
    return text == word ? .invalid(reason: "\(event.type) says '\(word)'") : .admitted
  }
}

extension EventStore.IngestOutcome {
  /// The reason of a skipped outcome.
  var reason: String? {
    if case .skipped(_, _, let reason) = self { return reason }
    return nil
  }
}

/// Opens the store of `schema` at `path`, runs `body` on it, then closes it.
func withStore(
  at path: String, schema: AppSchema, options: EventStore.Options = .fast,
  _ body: (EventStore) async throws -> Void
) async throws {
  var store: EventStore? = try EventStore(path: path, schema: schema, options: options)
  if let store { try await body(store) }
  await close(&store)
}
