import EventLog
import Foundation
import LMDB
import Testing

extension EventStore.Options {
  /// Test options: no flush per commit (the tests that need durability say so).
  static var fast: EventStore.Options {
    var options = EventStore.Options()
    options.durability = .noSync
    options.mapSize = 8 << 20
    return options
  }
}

/// Closes a store (``EventStore/close()``) and drops it, so the environment can be reopened or its
/// files changed.
func close(_ store: inout EventStore?) async {
  await store?.close()
  store = nil
}

/// Opens the store at `path`, runs `body` on it, then closes it (``close(_:)``), so that the
/// next open, or a raw change to the files, sees everything `body` appended.
func withStore(
  at path: String, projections: [any Projection] = [], options: EventStore.Options = .fast,
  _ body: (EventStore) async throws -> Void
) async throws {
  var store: EventStore? = try EventStore(path: path, projections: projections, options: options)
  if let store { try await body(store) }
  await close(&store)
}

/// Every entry of every table of every registered projection, live.
func liveTables(_ store: EventStore) throws -> [String: [[UInt8]: [UInt8]]] {
  try store.read { snapshot in
    var result: [String: [[UInt8]: [UInt8]]] = [:]
    for projection in store.projections {
      let view = try snapshot.projection(projection.name)
      for table in projection.tables {
        result["\(projection.name)/\(table)"] = try dump(view, table)
      }
    }
    return result
  }
}

/// Every entry of every table of a replay.
func replayedTables(_ store: EventStore, _ replay: ReplayResult) throws -> [String: [[UInt8]: [UInt8]]] {
  var result: [String: [[UInt8]: [UInt8]]] = [:]
  for projection in store.projections {
    let view = try replay.projection(projection.name)
    for table in projection.tables {
      result["\(projection.name)/\(table)"] = try dump(view, table)
    }
  }
  return result
}

private func dump(_ view: ProjectionReader, _ table: String) throws -> [[UInt8]: [UInt8]] {
  var entries: [[UInt8]: [UInt8]] = [:]
  try view.forEach(in: table) { key, value in
    entries[[UInt8](key)] = [UInt8](value)
    return true
  }
  return entries
}

// MARK: - Fixture events and projections

/// A note written to a stream.
struct NoteAdded: EventPayload, Equatable {
  static let eventType = "NoteAdded"
  var noteID: UUID
  var text: String
  var priority: Int
  var tag: String?
}

/// A note removed.
struct NoteRemoved: EventPayload, Equatable {
  static let eventType = "NoteRemoved"
  var noteID: UUID
}

/// An event whose apply always fails in ``NotesProjection`` (to test failure isolation).
struct Poison: EventPayload {
  static let eventType = "Poison"
  var reason: String
}

func note(_ text: String, id: UUID = UUID(), priority: Int = 1, eventID: UUID = UUID()) throws -> NewEvent {
  try NewEvent(
    NoteAdded(noteID: id, text: text, priority: priority, tag: priority > 2 ? "urgent" : nil), id: eventID)
}

/// Notes by ID, and a count per stream.
struct NotesProjection: Projection {
  var name = "notes"
  var version: UInt32 = 1
  var tables = ["by-id", "per-stream"]

  struct Row: Codable, Equatable {
    var text: String
    var priority: Int
    var stream: String
  }

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    switch event.type {
    case NoteAdded.eventType:
      let added = try event.decode(NoteAdded.self)
      try state.putRow(
        Row(text: added.text, priority: added.priority, stream: event.stream.rawValue),
        forKey: Array(added.noteID.uuidString.utf8), in: "by-id")
    case NoteRemoved.eventType:
      let removed = try event.decode(NoteRemoved.self)
      try state.delete(forKey: Array(removed.noteID.uuidString.utf8), in: "by-id")
    case Poison.eventType:
      throw PoisonError(reason: try event.decode(Poison.self).reason)
    default:
      break
    }
    let key = Array(event.stream.rawValue.utf8)
    let count = try state.row(UInt64.self, forKey: key, in: "per-stream") ?? 0
    try state.putRow(count + 1, forKey: key, in: "per-stream")
  }
}

struct PoisonError: Error, CustomStringConvertible {
  var reason: String
  var description: String { "poisoned: \(reason)" }
}

/// The result of an async throwing call.
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
  do {
    return .success(try await body())
  } catch {
    return .failure(error)
  }
}
