import Foundation
import LMDB
import TestKit
import Testing

@testable import EventLog

/// The error StrictJSON throws for `text`, if any.
private func syntaxError(_ text: String) -> StrictJSON.SyntaxError? {
  do {
    try StrictJSON.validate(Data(text.utf8))
    return nil
  } catch {
    return error
  }
}

/// Errors a caller can work with (issue 16, item 4): cases matched in `catch`, the underlying error
/// kept, descriptions as `LocalizedError`.
@Suite("Errors")
struct ErrorTests {
  @Test("a case matches in catch without its context; another case does not")
  func caseMatching() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    try await store.append([try note("a")], to: "s")
    var matched = false
    do {
      try await store.append([try note("b")], to: "s", expectedVersion: .noStream)
    } catch EventStoreError.corruptedRecord {
      Issue.record("matched the wrong case")
    } catch EventStoreError.wrongExpectedVersion {
      matched = true
    }
    #expect(matched)
    let error = EventStoreError.wrongExpectedVersion(stream: "s", expected: .noStream, actual: 1)
    // The case with its context still matches as before.
    if case .wrongExpectedVersion(let stream, _, let actual) = error {
      #expect(stream == "s" && actual == 1)
    } else {
      Issue.record("no case match")
    }
  }

  @Test("an LMDB code matches an LMDBError and an event-store error that carries one")
  func lmdbCodeMatching() {
    let full = LMDBError(code: .mapFull, operation: "mdb_put", context: "events")
    for error: any Error in [
      full, EventStoreError.storage(full),
      EventStoreError.projectionFailed(projection: "p", sequence: 3, underlying: full),
    ] {
      switch error {
      case LMDBError.Code.noSpace: Issue.record("matched the wrong code: \(error)")
      case LMDBError.Code.mapFull: break
      default: Issue.record("no match: \(error)")
      }
    }
    #expect(!(LMDBError.Code.mapFull ~= EventStoreError.closed))
    #expect((EventStoreError.storage(full).underlyingError as? LMDBError) == full)
  }

  @Test("a failing projection's error is kept, not flattened into a string")
  func projectionFailureKeepsItsError() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), projections: [NotesProjection()], options: .fast)
    do {
      try await store.append([try NewEvent(Poison(reason: "late"))], to: "s")
      Issue.record("no error")
    } catch EventStoreError.projectionFailed(let projection, let sequence, let underlying) {
      #expect(projection == "notes" && sequence == 1)
      let poison = try #require(underlying as? PoisonError)
      #expect(poison.reason == "late")
    }
    #expect(try store.head() == 0)
  }

  @Test("a payload that does not decode keeps the decoder's error")
  func payloadDecodingKeepsItsError() throws {
    let event = RecordedEvent(
      sequence: 9, id: UUID(), stream: "items", version: 1, type: "NoteAdded", schemaVersion: 1,
      recordedAt: Date(), metadata: EventMetadata(), payload: [1, 2, 3])
    do {
      _ = try event.decode(NoteAdded.self)
      Issue.record("no error")
    } catch {
      let error = try #require(error as? EventStoreError)
      guard case .payloadDecoding = error else {
        Issue.record("not a payload decoding error: \(error)")
        return
      }
      let underlying = try #require(error.underlyingError)
      #expect(!(underlying is EventStoreError))
      #expect(error.description == "event 9 (NoteAdded) has a payload that does not decode: \(underlying)")
    }
  }

  @Test("equality compares underlying errors by type, then by == or by description")
  func equality() {
    struct Plain: Error, CustomStringConvertible {
      var description: String
    }
    struct Exact: Error, Equatable {
      var value: Int
    }
    func failed(_ error: any Error) -> EventStoreError {
      .projectionFailed(projection: "p", sequence: 1, underlying: error)
    }
    #expect(failed(Plain(description: "a")) == failed(Plain(description: "a")))
    #expect(failed(Plain(description: "a")) != failed(Plain(description: "b")))
    #expect(failed(Exact(value: 1)) == failed(Exact(value: 1)))
    #expect(failed(Exact(value: 1)) != failed(Exact(value: 2)))
    #expect(failed(Plain(description: "Exact(value: 1)")) != failed(Exact(value: 1)))
    #expect(EventStoreError.closed == .closed && EventStoreError.closed != .emptyAppend)
  }

  @Test("public errors are LocalizedError: localizedDescription is the description")
  func localizedDescriptions() throws {
    let id = UUID()
    let errors: [any Error & CustomStringConvertible] = [
      EventStoreError.duplicateEventInAppend(id: id),
      EventStoreError.projectionFailed(projection: "p", sequence: 2, underlying: PoisonError(reason: "x")),
      EventStoreError.storage(LMDBError(code: .mapFull, operation: "mdb_put")),
      LMDBError(code: .notFound, operation: "mdb_get", context: "events"),
      try #require(syntaxError("[1,]")),
    ]
    for error in errors {
      #expect(error.localizedDescription == error.description, "\(type(of: error))")
      #expect((error as? any LocalizedError)?.errorDescription == error.description)
    }
    // UUIDs in descriptions are lower case.
    #expect(EventStoreError.duplicateEventInAppend(id: id).description.contains(id.uuidString.lowercased()))
  }
}
