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

extension BinaryEncoder {
  /// Encodes the payload of new event `eventID` into a new byte array, with its ``Personal``
  /// values as placeholders that the append seals.
  func encodeForSealing<T: Encodable>(_ value: T, eventID: UUID) throws -> ([UInt8], [PendingSeal]) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(128)
    let state = BinaryEncodingState()
    state.sealingEventID = eventID
    state.swapOutput(with: &bytes)
    do {
      try state.encodeValue(value)
      try state.finish()
    } catch {
      state.swapOutput(with: &bytes)
      throw error
    }
    state.swapOutput(with: &bytes)
    return (bytes, state.pendingSeals)
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
