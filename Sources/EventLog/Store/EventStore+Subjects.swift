import Foundation
import LMDB

/// A data subject as this environment knows it (``EventStore/subjects()``).
public struct DataSubject: Sendable, Hashable, Identifiable {
  /// The subject's ID.
  public var id: UUID
  /// How many events hold its personal values.
  public var events: Int
  /// The first of them (its sequence); `nil` when none is here.
  public var firstSequence: UInt64?
  /// The last of them (its sequence); `nil` when none is here.
  public var lastSequence: UInt64?
  /// Whether this environment holds its key (its values open here).
  public var hasKey: Bool
  /// When it was erased (the `SubjectErased` event's recorded-at), or `nil`.
  public var erasedAt: Date?
  /// The `SubjectErased` event, or `nil`.
  public var erasureEvent: UUID?
}

/// What ``EventStore/erase(subject:reason:)`` did.
public enum ErasureOutcome: Sendable, Hashable {
  /// The key was destroyed and the erasure recorded as event `sequence`.
  case erased(sequence: UInt64)
  /// The subject had been erased already, at `erasedAt` by event `event`: nothing was appended.
  case alreadyErased(erasedAt: Date, event: UUID)
}

/// A data subject's key as replication carries it between an owner's devices and server: the key
/// that opens the subject's ``Personal`` values. Never printed.
public struct SubjectKey: Sendable, Hashable, CustomStringConvertible {
  /// The data subject.
  public var subject: UUID
  /// The key: 32 bytes.
  public var key: [UInt8]
  /// When the device that made it made it.
  public var createdAt: Date

  /// Creates a subject's key.
  public init(subject: UUID, key: [UInt8], createdAt: Date) {
    self.subject = subject
    self.key = key
    self.createdAt = createdAt
  }

  /// The subject, never the key.
  public var description: String { "key of subject \(subject.lowercasedString)" }
}

extension EventStore {
  /// The subjects' keys and erasures as they are now, to open ``Personal`` values with.
  /// - Throws: ``EventStoreError/storage(_:)`` when LMDB fails.
  public func keyring() throws -> SubjectKeyring {
    try storage { try environment.read { txn in try keyring(in: txn) } }
  }

  func keyring(in txn: Transaction) throws -> SubjectKeyring {
    guard let database = schema.subjectKeys else { return SubjectKeyring(keys: [:], erased: []) }
    let keys = try database.allKeys(in: txn)
    let erased = try database.allErasures(in: txn)
    return SubjectKeyring(
      keys: Dictionary(keys.map { ($0.subject, $0.key.key) }, uniquingKeysWith: { first, _ in first }),
      erased: Set(erased.map(\.subject)))
  }

  /// Every data subject the log or the key store knows: the subjects that events hold personal
  /// values of (with their counts), those with a key here, and those erased.
  /// - Complexity: O(n) in the events (each record's list of subjects is read, not its payload).
  /// - Throws: ``EventStoreError/storage(_:)`` when LMDB fails.
  public func subjects() throws -> [DataSubject] {
    var found: [UUID: DataSubject] = [:]
    func entry(_ subject: UUID) -> DataSubject {
      found[subject] ?? DataSubject(id: subject, events: 0, hasKey: false)
    }
    try forEachRecord { reading in
      if case .event(let event) = reading {
        for subject in event.subjects {
          var subjectEntry = entry(subject)
          subjectEntry.events += 1
          if subjectEntry.firstSequence == nil { subjectEntry.firstSequence = event.sequence }
          subjectEntry.lastSequence = event.sequence
          found[subject] = subjectEntry
        }
      }
      return true
    }
    if let database = schema.subjectKeys {
      try storage {
        try environment.read { txn in
          for (subject, _) in try database.allKeys(in: txn) {
            var subjectEntry = entry(subject)
            subjectEntry.hasKey = true
            found[subject] = subjectEntry
          }
          for (subject, erasure) in try database.allErasures(in: txn) {
            var subjectEntry = entry(subject)
            subjectEntry.erasedAt = RecordCodec.date(microseconds: erasure.erasedAtMicroseconds)
            subjectEntry.erasureEvent = erasure.eventID
            found[subject] = subjectEntry
          }
        }
      }
    }
    return found.values.sorted { $0.id.byteOrder < $1.id.byteOrder }
  }

  /// Erases a data subject: destroys its key and appends a ``SubjectErased`` event, in one
  /// transaction. Every device and server the event reaches destroys its copy of the key and
  /// refuses the subject's key and new personal values from then on; the events keep their
  /// sealed bytes (the hash chain is unchanged) and their personal values show as erased.
  ///
  /// The key's bytes may stay in a freed page of the data file until LMDB reuses it: write a
  /// compacting copy (`eventlog compact`) to drop them.
  /// - Parameters:
  ///   - subject: the subject.
  ///   - reason: why, for the audit trail (it is replicated and exported: not personal data).
  /// - Returns: whether the subject was erased now or before.
  /// - Throws: ``EventStoreError/unknownSubject(_:)`` when no event holds the subject's values
  ///   and no key of it is here; the append's errors.
  public func erase(subject: UUID, reason: String) async throws -> ErasureOutcome {
    let known: DataSubject? = try subjects().first { $0.id == subject }
    if let known, let erasedAt = known.erasedAt, let event = known.erasureEvent {
      return .alreadyErased(erasedAt: erasedAt, event: event)
    }
    guard let known, known.hasKey || known.events > 0 else { throw EventStoreError.unknownSubject(subject) }
    let result = try await append(
      [NewEvent(SubjectErased(subject: subject, reason: reason))], to: SubjectErased.stream(of: subject))
    return .erased(sequence: result.lastSequence)
  }

  /// Every key held here (for replication to the owner's server).
  package func subjectKeys() throws -> [SubjectKey] {
    guard let database = schema.subjectKeys else { return [] }
    return try storage {
      try environment.read { txn in
        try database.allKeys(in: txn).map {
          SubjectKey(
            subject: $0.subject, key: $0.key.key,
            createdAt: RecordCodec.date(microseconds: $0.key.createdAtMicroseconds))
        }
      }
    }
  }

  /// Stores keys received from the owner's server: a subject with a key keeps it, and an erased
  /// subject's key is refused (its erasure fence).
  /// - Returns: how many were stored.
  package func storeSubjectKeys(_ keys: [SubjectKey]) async throws -> Int {
    guard !keys.isEmpty else { return 0 }
    guard !options.readOnly else { throw EventStoreError.readOnly(path: path) }
    guard let database = schema.subjectKeys else { throw EventStoreError.readOnly(path: path) }
    return try await exclusive { [self] in
      try storage {
        try environment.write { txn in
          var stored = 0
          for key in keys
          where try database.store(
            key.key, createdAtMicroseconds: RecordCodec.microseconds(key.createdAt), for: key.subject, in: txn
          ) {
            stored += 1
          }
          return stored
        }
      }
    }
  }

  /// The subjects erased here (by this device or an erasure it received), with when.
  package func erasedSubjects() throws -> [(subject: UUID, erasedAt: Date, event: UUID)] {
    guard let database = schema.subjectKeys else { return [] }
    return try storage {
      try environment.read { txn in
        try database.allErasures(in: txn).map {
          ($0.subject, RecordCodec.date(microseconds: $0.erasure.erasedAtMicroseconds), $0.erasure.eventID)
        }
      }
    }
  }
}

extension EventStore.StoreSnapshot {
  /// The subjects' keys and erasures of this snapshot, to open the ``Personal`` values of the
  /// rows read in it.
  public func keyring() throws -> SubjectKeyring {
    try store.keyring(in: transaction)
  }
}
