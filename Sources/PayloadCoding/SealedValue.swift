import Foundation

/// The stored form of a personal value (EventLog's `Personal`): its data subject, the event and
/// field it belongs to, and the value sealed under the subject's key. See `Docs/OnDiskFormat.md`,
/// "Sealed values".
///
/// The format is here, with the codec, whose ``PayloadLayout/Kind/personal`` tells a sealed value
/// from text stored in clear by it; sealing and opening (XChaCha20-Poly1305, with the subject's
/// key) are EventLog's, which has the keys and libsodium.
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

  package static let marker: UInt8 = 0xFF
  static let version: UInt8 = 1
  static let fixedHeaderSize = 35
  static let maximumFieldLength = 255
  /// The size of the nonce after the header: XChaCha20-Poly1305's (Sodium's
  /// `XChaCha20Poly1305.nonceLength`; a test checks that they agree). A fact of the format, so
  /// that the codec can tell a whole sealed value without libsodium.
  package static let nonceCount = 24
  /// The size of the tag after the ciphertext: XChaCha20-Poly1305's (Sodium's
  /// `XChaCha20Poly1305.tagLength`; a test checks that they agree).
  package static let tagCount = 16

  /// The stored bytes, when they are a sealed value's (its header complete); else `nil`.
  package init?(bytes: [UInt8]) {
    guard bytes.count >= Self.fixedHeaderSize, bytes[0] == Self.marker, bytes[1] == Self.version else {
      return nil
    }
    let headerSize = Self.fixedHeaderSize + Int(bytes[34])
    guard bytes.count >= headerSize + Self.nonceCount + Self.tagCount else {
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
  package var headerSize: Int { Self.fixedHeaderSize + Int(bytes[34]) }

  private static func uuid(in bytes: [UInt8], at offset: Int) -> UUID {
    bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)) }
  }

  /// The header of a value of `subject` in `field` of event `eventID`.
  package static func header(subject: UUID, eventID: UUID, field: String) -> [UInt8] {
    var name = field
    return name.withUTF8 { name in
      [UInt8](unsafeUninitializedCapacity: headerSize(fieldCount: name.count)) { bytes, count in
        count = writeHeader(
          subject: subject, eventID: eventID, field: UnsafeRawBufferPointer(name),
          into: UnsafeMutableRawBufferPointer(bytes))
      }
    }
  }

  /// The size of the header of a value in a field whose name is `fieldCount` bytes (a name is cut
  /// to ``maximumFieldLength``).
  package static func headerSize(fieldCount: Int) -> Int {
    fixedHeaderSize + min(fieldCount, maximumFieldLength)
  }

  /// Writes the header of a value of `subject` in field `field` (its UTF-8 bytes) of event
  /// `eventID` at the start of `bytes`, which holds at least its size (``headerSize(fieldCount:)``).
  /// - Returns: the header's size.
  package static func writeHeader(
    subject: UUID, eventID: UUID, field: UnsafeRawBufferPointer, into bytes: UnsafeMutableRawBufferPointer
  ) -> Int {
    let size = headerSize(fieldCount: field.count)
    bytes[0] = marker
    bytes[1] = version
    withUnsafeBytes(of: subject.uuid) {
      UnsafeMutableRawBufferPointer(rebasing: bytes[2..<18]).copyMemory(from: $0)
    }
    withUnsafeBytes(of: eventID.uuid) {
      UnsafeMutableRawBufferPointer(rebasing: bytes[18..<34]).copyMemory(from: $0)
    }
    bytes[34] = UInt8(size - fixedHeaderSize)
    UnsafeMutableRawBufferPointer(rebasing: bytes[fixedHeaderSize..<size]).copyMemory(
      from: UnsafeRawBufferPointer(rebasing: field[..<(size - fixedHeaderSize)]))
    return size
  }

  /// The size of a sealed value with `header` around `plaintextCount` bytes.
  package static func size(headerCount: Int, plaintextCount: Int) -> Int {
    headerCount + nonceCount + plaintextCount + tagCount
  }
}
