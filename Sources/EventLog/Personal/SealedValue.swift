import Foundation
import Sodium

/// The stored form of a ``Personal`` value: its data subject, the event and field it belongs to,
/// and the value sealed under the subject's key. See `Docs/OnDiskFormat.md`, "Sealed values".
///
/// ```
/// offset size field
///  0      1   0xFF: a sealed value (never the first byte of UTF-8 text, which a value stored
///             in clear before sealing existed is)
///  1      1   sealing version, 1
///  2     16   data subject (UUID bytes)
/// 18     16   the event's ID
/// 34      1   field name length F
/// 35      F   field name, UTF-8 (the coding path, dot-separated)
/// 35+F   24   nonce (random)
/// 59+F  n+16  the value's `BinaryEncoder` bytes, XChaCha20-Poly1305 ciphertext and tag
/// ```
///
/// Bytes 0 to 35+F (the header) are the associated data: a sealed value opens only as the field
/// of the event and subject it was sealed for.
@usableFromInline
package struct SealedValue: Sendable, Hashable {
  /// The stored bytes.
  package let bytes: [UInt8]

  static let marker: UInt8 = 0xFF
  static let version: UInt8 = 1
  static let fixedHeaderSize = 35
  static let maximumFieldLength = 255

  /// The stored bytes, when they are a sealed value's (its header complete); else `nil`.
  package init?(bytes: [UInt8]) {
    guard bytes.count >= Self.fixedHeaderSize, bytes[0] == Self.marker, bytes[1] == Self.version else {
      return nil
    }
    let headerSize = Self.fixedHeaderSize + Int(bytes[34])
    guard bytes.count >= headerSize + XChaCha20Poly1305.nonceLength + XChaCha20Poly1305.tagLength else {
      return nil
    }
    self.bytes = bytes
  }

  /// The data subject.
  package var subject: UUID { Self.uuid(in: bytes, at: 2) }
  /// The event the value was sealed in.
  package var eventID: UUID { Self.uuid(in: bytes, at: 18) }
  /// The field's name.
  package var field: String {
    String(decoding: bytes[Self.fixedHeaderSize..<headerSize], as: UTF8.self)
  }
  var headerSize: Int { Self.fixedHeaderSize + Int(bytes[34]) }

  private static func uuid(in bytes: [UInt8], at offset: Int) -> UUID {
    bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)) }
  }

  /// The header of a value of `subject` in `field` of event `eventID`.
  static func header(subject: UUID, eventID: UUID, field: String) -> [UInt8] {
    let name = Array(field.utf8.prefix(maximumFieldLength))
    var header: [UInt8] = [marker, version]
    header.reserveCapacity(fixedHeaderSize + name.count)
    withUnsafeBytes(of: subject.uuid) { header.append(contentsOf: $0) }
    withUnsafeBytes(of: eventID.uuid) { header.append(contentsOf: $0) }
    header.append(UInt8(name.count))
    header.append(contentsOf: name)
    return header
  }

  /// The size of a sealed value with `header` around `plaintextCount` bytes.
  static func size(headerCount: Int, plaintextCount: Int) -> Int {
    headerCount + XChaCha20Poly1305.nonceLength + plaintextCount + XChaCha20Poly1305.tagLength
  }

  /// `plaintext` sealed under `key` behind `header` (a random nonce).
  static func seal(_ plaintext: [UInt8], header: [UInt8], key: [UInt8]) -> [UInt8] {
    header + XChaCha20Poly1305.seal(plaintext, key: key, associatedData: header)
  }

  /// The plaintext, or `nil` when `key` does not open it (another key, or altered bytes).
  func open(key: [UInt8]) -> [UInt8]? {
    let header = Array(bytes[..<headerSize])
    return XChaCha20Poly1305.open(Array(bytes[headerSize...]), key: key, associatedData: header)
  }
}
