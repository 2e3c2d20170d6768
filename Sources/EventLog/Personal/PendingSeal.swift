import Foundation
import Sodium

/// A personal value encoded in a new event's payload but not sealed yet: the append seals it in
/// place with its subject's key (``EventStore``'s write batch), where the key is at hand.
package struct PendingSeal: Sendable, Hashable {
  /// Where the sealed value starts in the payload (its header; after its length).
  package var offset: Int
  /// The header's size (``SealedValue``): the nonce and ciphertext follow it.
  package var headerCount: Int
  /// Whose key seals it.
  package var subject: UUID
  /// The value's `BinaryEncoder` bytes.
  package var plaintext: [UInt8]

  /// Writes the sealed value into `payload` (which holds its header and zeros in its place)
  /// under `key`.
  func seal(in payload: inout [UInt8], key: [UInt8]) {
    let sealedCount = XChaCha20Poly1305.nonceLength + plaintext.count + XChaCha20Poly1305.tagLength
    payload.withUnsafeMutableBytes { bytes in
      let header = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + headerCount)])
      let start = offset + headerCount
      XChaCha20Poly1305.seal(
        plaintext, key: key, associatedData: header,
        into: UnsafeMutableRawBufferPointer(rebasing: bytes[start..<(start + sealedCount)]))
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
