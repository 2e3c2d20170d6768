import Foundation
import LMDB
import Sodium

extension WriteBatch {
  /// Throws ``EventStoreError/subjectErased(subject:event:)`` when `event` holds personal values
  /// of an erased subject.
  func checkSubjectsNotErased(_ event: NewEvent) throws {
    guard let keys = store.schema.subjectKeys else { throw EventStoreError.readOnly(path: store.path) }
    for subject in event.subjects where try keys.erasure(of: subject, in: txn) != nil {
      throw EventStoreError.subjectErased(subject: subject, event: event.id)
    }
  }

  /// Seals `event`'s personal values under their subjects' keys, in place: a subject's first
  /// sealed value creates its key, in this transaction.
  func seal(_ event: inout NewEvent) throws {
    guard let keys = store.schema.subjectKeys else { throw EventStoreError.readOnly(path: store.path) }
    // An event's values are mostly of one subject: the last key found is kept.
    var last: (subject: UUID, key: [UInt8])?
    for seal in event.pendingSeals {
      let key: [UInt8]
      if let last, last.subject == seal.subject {
        key = last.key
      } else if let stored = try keys.key(of: seal.subject, in: txn) {
        key = stored.key
      } else {
        key = XChaCha20Poly1305.generateKey()
        try keys.store(key, createdAtMicroseconds: wallClock, for: seal.subject, in: txn)
      }
      last = (seal.subject, key)
      seal.seal(in: &event.payload, key: key)
    }
    event.pendingSeals = []
  }

  /// Destroys the key of the subject a `SubjectErased` event names and fences the subject, in the
  /// transaction that records the event (appended here, pulled or imported). A payload that does
  /// not read as the event's (a hostile row) changes nothing: the event is stored, the
  /// projections skip it.
  func applyErasure(_ event: NewEvent, atMicroseconds micros: Int64) throws {
    guard let keys = store.schema.subjectKeys else { throw EventStoreError.readOnly(path: store.path) }
    guard
      let erasure = try? EncodedPayload(bytes: event.payload, encoding: event.payloadEncoding).decode(
        SubjectErased.self)
    else { return }
    try keys.erase(erasure.subject, atMicroseconds: micros, eventID: event.id, in: txn)
  }
}
