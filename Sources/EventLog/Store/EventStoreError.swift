import Foundation
import LMDB

/// Everything that can go wrong in the event store, with the stream, event or path it concerns.
public enum EventStoreError: Error, Equatable, Sendable, CustomStringConvertible {
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
  /// A payload that does not decode.
  case payloadDecoding(sequence: UInt64, type: String, reason: String)
  /// A projection failed to apply an event; the append that carried it stored nothing.
  case projectionFailed(projection: String, sequence: UInt64, reason: String)
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
  /// The store was closed.
  case closed
  /// LMDB failed.
  case storage(LMDBError)

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
      "event \(id) appears twice in one append"
    case .partiallyStoredAppend(let id, let sequence):
      "event \(id) is already stored (seq \(sequence)) but other events of the append are not"
    case .invalidEvent(let id, let reason):
      "event \(id) cannot be stored: \(reason)"
    case .eventTypeMismatch(let sequence, let expected, let actual):
      "event \(sequence) is a \(actual), not a \(expected)"
    case .unsupportedSchemaVersion(let type, let version, let supported):
      "\(type) schema version \(version) is not readable by this build (it reads up to \(supported))"
    case .payloadDecoding(let sequence, let type, let reason):
      "event \(sequence) (\(type)) has a payload that does not decode: \(reason)"
    case .projectionFailed(let projection, let sequence, let reason):
      "projection '\(projection)' failed on event \(sequence): \(reason)"
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
    case .closed:
      "the event store is closed"
    case .storage(let error):
      error.description
    }
  }
}

/// Runs `body`, turning an ``LMDBError`` into ``EventStoreError/storage(_:)``.
@inline(__always) @discardableResult
func storage<R>(_ body: () throws -> R) throws -> R {
  do {
    return try body()
  } catch let error as LMDBError {
    throw EventStoreError.storage(error)
  }
}
