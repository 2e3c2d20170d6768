import Foundation
import Sodium

/// A personal value encoded in a new event's payload but not sealed yet: the append seals it in
/// place with its subject's key (``EventStore``'s write batch), where the key is at hand.
package struct PendingSeal: Sendable, Hashable {
  /// Where the sealed value starts in the payload (its header; after its length).
  package var offset: Int
  /// The header's size (``SealedValue``): the nonce, the plaintext and room for the tag follow it.
  package var headerCount: Int
  /// The size of the nonce, plaintext and tag: the plaintext (the value's `BinaryEncoder`
  /// bytes) waits in the payload where its ciphertext goes, so that nothing is carried apart.
  package var sealedCount: Int
  /// Whose key seals it.
  package var subject: UUID

  /// Seals the value in `payload` (its header, room for the nonce, its plaintext and room for
  /// the tag) in place, under `key`.
  func seal(in payload: inout [UInt8], key: [UInt8]) {
    payload.withUnsafeMutableBytes { bytes in
      let start = offset + headerCount
      XChaCha20Poly1305.sealInPlace(
        UnsafeMutableRawBufferPointer(rebasing: bytes[start..<(start + sealedCount)]), key: key,
        associatedData: UnsafeRawBufferPointer(rebasing: bytes[offset..<start]))
    }
  }
}

/// The encoding of a new event's payload (``NewEvent``): the encoder's hook for its
/// `Personal<String>` values (``BinaryEncodingHook``, the codec's fast path for a type it cannot
/// name), and the values to seal that each of its ``Personal`` values notes.
///
/// One instance lives for one payload's encoding, on one thread.
final class PersonalSealing: BinaryEncodingHook {
  /// The event whose payload this is: each sealed value's header names it.
  let eventID: UUID
  /// The personal values encoded, to be sealed by the append.
  var pendingSeals: [PendingSeal] = []

  init(eventID: UUID) { self.eventID = eventID }

  /// Writes the `Personal<String>` at `value`: the encoder hands this hook that type's values only.
  func encode(_ value: UnsafeRawPointer, into state: BinaryEncodingState, field: String?) throws {
    try value.assumingMemoryBound(to: Personal<String>.self).pointee.encode(
      into: state, sealing: self, field: field)
  }
}

extension BinaryEncoder {
  /// Encodes the payload of new event `eventID` through its `Encodable` conformance into a new
  /// byte array, with its ``Personal`` values as placeholders that the append seals: what a
  /// type's own ``EventPayload/encode(binary:)`` must agree with.
  package func encodeForSealing<T: Encodable>(_ value: T, eventID: UUID) throws -> ([UInt8], [PendingSeal]) {
    try writeForSealing(eventID: eventID) { try $0.encode(value) }
  }

  /// ``encodeForSealing(_:eventID:)`` through the payload's own path
  /// (``EventPayload/encode(binary:)``, by default the same `Codable` encoding).
  func writeForSealing<E: EventPayload>(_ payload: E, eventID: UUID) throws -> ([UInt8], [PendingSeal]) {
    try writeForSealing(eventID: eventID) { try payload.encode(binary: &$0) }
  }

  /// The bytes `write` writes in a run that collects the pending seals of event `eventID`.
  private func writeForSealing(
    eventID: UUID, _ write: (inout BinaryWriter) throws -> Void
  ) throws -> ([UInt8], [PendingSeal]) {
    let sealing = PersonalSealing(eventID: eventID)
    let bytes = try self.write(hook: sealing, for: Personal<String>.self, write)
    return (bytes, sealing.pendingSeals)
  }
}

extension NewEvent {
  /// The event with its personal values sealed under the keys `key` gives for their subjects,
  /// as the append seals them: for tests and tools that need a sealed payload without a store.
  package func sealingPendingValues(with key: (UUID) -> [UInt8]) -> NewEvent {
    var event = self
    for seal in pendingSeals { seal.seal(in: &event.payload, key: key(seal.subject)) }
    event.pendingSeals = []
    return event
  }
}
