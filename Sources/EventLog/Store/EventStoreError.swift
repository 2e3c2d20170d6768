import Foundation
import LMDB

/// Everything that can go wrong in the event store, with the stream, event or path it concerns.
///
/// Match a case with its context (`catch EventStoreError.wrongExpectedVersion(let stream, _, _)`)
/// or without it, and a failure of the storage engine by its kind:
///
/// ```swift
/// do {
///   try await store.append(events, to: stream, expectedVersion: .exactly(version))
/// } catch EventStoreError.wrongExpectedVersion {
///   // reload and try again
/// } catch EventStoreError.storage(let failure) where failure.kind == .diskFull {
///   // the disk is full
/// }
/// ```
///
/// A failure of a projection or of a payload's decoding keeps the error that caused it
/// (``underlyingError``). Two errors are equal when their cases and contexts are and their
/// underlying errors are of one type and equal (compared by description when that type is not
/// `Equatable`).
public enum EventStoreError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// An append's expectation of a stream's version did not hold; nothing of the append was stored.
  case wrongExpectedVersion(stream: StreamID, expected: ExpectedVersion, actual: UInt64)
  /// A stored record failed its checksum or could not be parsed.
  case corruptedRecord(sequence: UInt64, reason: String)
  /// A stream ID that cannot be stored.
  case invalidStream(StreamID, reason: String)
  /// An append without events.
  case emptyAppend
  /// The same event ID twice in one append.
  case duplicateEventInAppend(id: UUID)
  /// Some events of an append are stored already and others are not.
  case partiallyStoredAppend(id: UUID, sequence: UInt64)
  /// A field of a new event that cannot be stored (too long, say).
  case invalidEvent(id: UUID, reason: String)
  /// ``RecordedEvent/decode(_:)`` was asked for another type than the stored one.
  case eventTypeMismatch(sequence: UInt64, expected: String, actual: String)
  /// A payload's schema version that no upcaster handles.
  case unsupportedSchemaVersion(type: String, version: UInt16, supported: UInt16)
  /// A payload that does not decode; `underlying` is the decoder's error.
  case payloadDecoding(sequence: UInt64, type: String, underlying: any Error)
  /// A projection failed to apply an event (`underlying` is what it threw); the append that
  /// carried the event stored nothing.
  case projectionFailed(projection: String, sequence: UInt64, underlying: any Error)
  /// The projections are misconfigured (duplicate names, invalid table names).
  case invalidProjection(String)
  /// The environment was written by a newer, unknown format.
  case unsupportedFormat(path: String, found: UInt32, supported: UInt32)
  /// A write on a store opened read-only.
  case readOnly(path: String)
  /// The log's head was not the one an ingest expected; nothing was stored.
  case unexpectedHead(path: String, expected: UInt64, actual: UInt64)
  /// A state change that cannot be stored (``EventStore/updateState(_:)``).
  case invalidState(key: [UInt8], reason: String)
  /// A type's layout that the environment recorded does not read into this build's type
  /// (`Docs/OnDiskFormat.md`, "Evolving a type"): a field of another kind, a new field that is
  /// not optional, a stored non-optional field the type lost. Found at open, before anything is
  /// written. `type` is the event type, or the row type and its projection.
  case incompatibleLayout(path: String, type: String, field: String, reason: String)
  /// The environment holds payloads or rows with fields this build's types do not know (a newer
  /// build added them): it opens read-only, and reads around them, but refuses to write.
  /// `types` names each type and its unknown fields.
  case newerLayouts(path: String, types: [String])
  /// The data subject was erased (``EventStore/erase(subject:reason:)``, here or on a device this
  /// one replicates with): an event holding its personal values is refused, and its key is never
  /// stored again. `event` is the new event that was refused.
  case subjectErased(subject: UUID, event: UUID)
  /// No event names the data subject, and it has no key here: nothing to erase.
  case unknownSubject(UUID)
  /// Another process has the environment open where the operation needs it alone
  /// (``EventStore/compact()``); `process` is its ID when known.
  case environmentInUse(path: String, process: Int32?)
  /// The store was closed.
  case closed
  /// The storage engine failed: ``StorageFailure/kind`` says how.
  case storage(StorageFailure)

  /// The error in one sentence with its context: `stream 'booking-1' expected no stream but is at
  /// version 2`.
  public var description: String {
    switch self {
    case .wrongExpectedVersion(let stream, let expected, let actual):
      "stream '\(stream)' expected \(expected) but is at version \(actual)"
    case .corruptedRecord(let sequence, let reason):
      "event \(sequence) is damaged: \(reason)"
    case .invalidStream(let stream, let reason):
      "invalid stream ID '\(stream.rawValue.prefix(80))': \(reason)"
    case .emptyAppend:
      "an append needs at least one event"
    case .duplicateEventInAppend(let id):
      "event \(id.lowercasedString) appears twice in one append"
    case .partiallyStoredAppend(let id, let sequence):
      "event \(id.lowercasedString) is already stored (seq \(sequence)) but other events of the append are not"
    case .invalidEvent(let id, let reason):
      "event \(id.lowercasedString) cannot be stored: \(reason)"
    case .eventTypeMismatch(let sequence, let expected, let actual):
      "event \(sequence) is a \(actual), not a \(expected)"
    case .unsupportedSchemaVersion(let type, let version, let supported):
      "\(type) schema version \(version) is not readable by this build (it reads up to \(supported))"
    case .payloadDecoding(let sequence, let type, let underlying):
      "event \(sequence) (\(type)) has a payload that does not decode: \(underlying)"
    case .projectionFailed(let projection, let sequence, let underlying):
      "projection '\(projection)' failed on event \(sequence): \(underlying)"
    case .invalidProjection(let reason):
      "invalid projection: \(reason)"
    case .unsupportedFormat(let path, let found, let supported):
      "\(path) has on-disk format \(found); this build reads format \(supported)"
    case .readOnly(let path):
      "\(path) is open read-only"
    case .unexpectedHead(let path, let expected, let actual):
      "\(path) holds \(actual) events where \(expected) were expected; nothing was stored"
    case .invalidState(let key, let reason):
      "state key '\(String(decoding: key.prefix(80), as: UTF8.self))' cannot be stored: \(reason)"
    case .incompatibleLayout(let path, let type, let field, let reason):
      "\(path): the layout recorded for \(type) does not read into this build's type: field '\(field)' \(reason); "
        + "raise its version (an event's schemaVersion with an upcaster, a table's projection version)"
    case .newerLayouts(let path, let types):
      "\(path) holds \(types.joined(separator: ", ")), written by a newer build; this build reads it but "
        + "does not write it (open it read-only)"
    case .subjectErased(let subject, let event):
      "event \(event.lowercasedString) holds personal data of subject \(subject.lowercasedString), which was "
        + "erased: its data is never recorded again"
    case .unknownSubject(let subject):
      "no event holds personal data of subject \(subject.lowercasedString) and no key for it is held here"
    case .environmentInUse(let path, let process):
      "\(path) is open in another process" + (process.map { " (process \($0))" } ?? "")
        + "; it must be closed first"
    case .closed:
      "the event store is closed"
    case .storage(let error):
      error.description
    }
  }
}

extension EventStoreError {
  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// The error that caused a projection failure or a payload that does not decode (what the
  /// projection or the decoder threw), or the storage engine's own error of ``storage(_:)``;
  /// `nil` for the others.
  public var underlyingError: (any Error)? {
    switch self {
    case .payloadDecoding(_, _, let underlying), .projectionFailed(_, _, let underlying): underlying
    case .storage(let failure): failure.engineError
    default: nil
    }
  }

  /// Whether the cases and their contexts are equal; underlying errors must be of one type, and
  /// are compared with `==` when it is `Equatable`, by description otherwise.
  public static func == (lhs: EventStoreError, rhs: EventStoreError) -> Bool {
    switch (lhs, rhs) {
    case (.wrongExpectedVersion(let a, let b, let c), .wrongExpectedVersion(let x, let y, let z)):
      a == x && b == y && c == z
    case (.corruptedRecord(let a, let b), .corruptedRecord(let x, let y)): a == x && b == y
    case (.invalidStream(let a, let b), .invalidStream(let x, let y)): a == x && b == y
    case (.emptyAppend, .emptyAppend), (.closed, .closed): true
    case (.duplicateEventInAppend(let a), .duplicateEventInAppend(let x)): a == x
    case (.partiallyStoredAppend(let a, let b), .partiallyStoredAppend(let x, let y)): a == x && b == y
    case (.invalidEvent(let a, let b), .invalidEvent(let x, let y)): a == x && b == y
    case (.eventTypeMismatch(let a, let b, let c), .eventTypeMismatch(let x, let y, let z)):
      a == x && b == y && c == z
    case (.unsupportedSchemaVersion(let a, let b, let c), .unsupportedSchemaVersion(let x, let y, let z)):
      a == x && b == y && c == z
    case (.payloadDecoding(let a, let b, let c), .payloadDecoding(let x, let y, let z)):
      a == x && b == y && sameError(c, z)
    case (.projectionFailed(let a, let b, let c), .projectionFailed(let x, let y, let z)):
      a == x && b == y && sameError(c, z)
    case (.invalidProjection(let a), .invalidProjection(let x)): a == x
    case (.unsupportedFormat(let a, let b, let c), .unsupportedFormat(let x, let y, let z)):
      a == x && b == y && c == z
    case (.readOnly(let a), .readOnly(let x)): a == x
    case (.unexpectedHead(let a, let b, let c), .unexpectedHead(let x, let y, let z)):
      a == x && b == y && c == z
    case (.invalidState(let a, let b), .invalidState(let x, let y)): a == x && b == y
    case (.incompatibleLayout(let a, let b, let c, let d), .incompatibleLayout(let w, let x, let y, let z)):
      a == w && b == x && c == y && d == z
    case (.newerLayouts(let a, let b), .newerLayouts(let x, let y)): a == x && b == y
    case (.environmentInUse(let a, let b), .environmentInUse(let x, let y)): a == x && b == y
    case (.storage(let a), .storage(let x)): a == x
    case (.subjectErased(let a, let b), .subjectErased(let x, let y)): a == x && b == y
    case (.unknownSubject(let a), .unknownSubject(let x)): a == x
    default: false
    }
  }
}

/// Whether two errors are of one type and equal: by `==` when the type is `Equatable`, else by
/// their descriptions.
func sameError(_ a: any Error, _ b: any Error) -> Bool {
  guard type(of: a) == type(of: b) else { return false }
  if let equatable = (a as Any) as? any Equatable { return equatable.isEqual(to: b) }
  return String(describing: a) == String(describing: b)
}

extension Equatable {
  fileprivate func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}

extension EventStoreError {
  /// The store's error for a failure of LMDB: ``closed`` when the environment was closed,
  /// ``storage(_:)`` otherwise.
  init(storage error: LMDBError) {
    self = error.code == .closed ? .closed : .storage(StorageFailure(error))
  }
}

/// Runs `body`, turning an `LMDBError` into ``EventStoreError/storage(_:)`` (or
/// ``EventStoreError/closed``).
@inline(__always) @discardableResult
func storage<R>(_ body: () throws -> R) throws -> R {
  do {
    return try body()
  } catch let error as LMDBError {
    throw EventStoreError(storage: error)
  }
}

extension EventStoreError {
  /// A failure of the storage engine under the store, in the store's terms: what kind of
  /// failure it is (what an app acts on), and the engine's own description (its operation, result
  /// code and what it concerned).
  public struct StorageFailure: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong, as an app acts on it.
    public enum Kind: Sendable, Hashable {
      /// The disk holding the environment is full.
      case diskFull
      /// The environment reached the largest map it may grow to.
      case mapFull
      /// Too many threads or processes read the environment at once.
      case readersFull
      /// A file of the environment is damaged, or is not an environment of this engine.
      case damaged
      /// A database the store needs is not in the environment: it is not an event log (or not one
      /// this build can read as it is).
      case missingDatabase
      /// A file or directory of the environment cannot be used as asked: missing, not permitted,
      /// a symbolic link, several hard links, or writable by others.
      case fileAccess
      /// Any other failure; the description says which.
      case other
    }

    /// What went wrong.
    public let kind: Kind
    /// The engine's error, for the package's own modules and the description.
    package let engineError: LMDBError

    /// The failure of `error`, with its kind.
    package init(_ error: LMDBError) {
      engineError = error
      kind =
        switch error.code {
        case .noSpace: .diskFull
        case .mapFull: .mapFull
        case .readersFull: .readersFull
        case .corrupted, .pageNotFound, .invalid, .versionMismatch, .panic: .damaged
        case .notFound: .missingDatabase
        case .noSuchFile, .permissionDenied, .symbolicLink, .tooManyLinks, .wrongFileType, .unsafePermissions:
          .fileAccess
        default: .other
        }
    }

    /// The engine's description: its operation, result code and what it concerned.
    public var description: String { engineError.description }
    /// The description: `LocalizedError`'s text is the same sentence.
    public var errorDescription: String? { description }
  }
}
