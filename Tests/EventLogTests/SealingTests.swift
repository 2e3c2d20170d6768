import Foundation
import Sodium
import TestKit
import Testing

@testable import EventLog

/// A personal value's sealing: the plaintext written where its ciphertext goes, sealed there by
/// the append (``PendingSeal``), opening with its subject's key only, as the field of its event.
@Suite("Sealing personal values")
struct SealingTests {
  struct Visit: EventPayload {
    static let eventType = "Visit"
    struct Detail: Codable, Hashable, Sendable {
      var note: Personal<String>
    }
    var visitor: Personal<String>
    var age: Personal<Int>
    var detail: Detail
    var remark: Personal<String>?
  }

  static let subject = UUID(uuidString: "0193A0B1-0000-7000-8000-00000000A11C")!
  static let key = [UInt8](repeating: 7, count: XChaCha20Poly1305.keyLength)

  @Test(
    "Sealed in place, a value opens with the key and the associated data it was sealed with, and no other")
  func sealInPlace() {
    let plaintext: [UInt8] = Array("Ada Lovelace".utf8)
    let header: [UInt8] = [1, 2, 3]
    var sealed = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceLength)
    sealed += plaintext + [UInt8](repeating: 0, count: XChaCha20Poly1305.tagLength)
    sealed.withUnsafeMutableBytes { bytes in
      header.withUnsafeBytes { XChaCha20Poly1305.sealInPlace(bytes, key: Self.key, associatedData: $0) }
    }
    #expect(XChaCha20Poly1305.open(sealed, key: Self.key, associatedData: header) == plaintext)
    // The text is not in the sealed bytes; another key, other associated data or an altered byte
    // opens nothing.
    #expect(sealed.firstRange(of: plaintext) == nil)
    #expect(
      XChaCha20Poly1305.open(sealed, key: [UInt8](repeating: 8, count: 32), associatedData: header) == nil)
    #expect(XChaCha20Poly1305.open(sealed, key: Self.key, associatedData: [1, 2, 4]) == nil)
    var altered = sealed
    altered[XChaCha20Poly1305.nonceLength] ^= 1
    #expect(XChaCha20Poly1305.open(altered, key: Self.key, associatedData: header) == nil)
  }

  @Test(
    "A value opens where it lies (the form a read uses), an empty plaintext too; one byte altered, it does not"
  )
  func openInPlace() {
    for plaintext in [Array("Grace".utf8), []] {
      let header: [UInt8] = [9, 9]
      let sealed = XChaCha20Poly1305.seal(plaintext, key: Self.key, associatedData: header)
      let opened = sealed.withUnsafeBytes { sealed in
        header.withUnsafeBytes { XChaCha20Poly1305.open(sealed, key: Self.key, associatedData: $0) }
      }
      #expect(opened == plaintext)
      var altered = sealed
      altered[altered.count - 1] ^= 1
      let refused = altered.withUnsafeBytes { altered in
        header.withUnsafeBytes { XChaCha20Poly1305.open(altered, key: Self.key, associatedData: $0) }
      }
      #expect(refused == nil)
    }
  }

  @Test("A personal text shows as its value, erased or unavailable (an altered byte), as any type's would")
  func revealText() throws {
    let sealed = try NewEvent(
      Visit(
        visitor: Personal("Ada", subject: Self.subject), age: Personal(36, subject: Self.subject),
        detail: .init(note: Personal("n", subject: Self.subject)), remark: nil)
    ).sealingPendingValues(with: { _ in Self.key })
    let read = try BinaryDecoder().decode(Visit.self, from: sealed.payload)
    let keyring = SubjectKeyring(keys: [Self.subject: Self.key], erased: [])
    #expect(keyring.reveal(read.visitor) == .value("Ada"))
    #expect(SubjectKeyring(keys: [:], erased: [Self.subject]).reveal(read.visitor) == .erased)
    var bytes = try #require(read.visitor.storedBytes)
    bytes[bytes.count - 1] ^= 1
    let altered = Personal<String>(storedBytes: bytes)
    #expect(keyring.reveal(altered) == .unavailable)
  }

  @Test("The sealed-value format's room for the nonce and the tag (the codec's) is XChaCha20-Poly1305's")
  func formatSizesAreTheCipher() {
    #expect(SealedValue.nonceCount == XChaCha20Poly1305.nonceLength)
    #expect(SealedValue.tagCount == XChaCha20Poly1305.tagLength)
  }

  @Test(
    "Every personal value of an event is sealed where it lies: strings, other types, nested and optional fields"
  )
  func sealedValuesOpen() throws {
    let visit = Visit(
      visitor: Personal("Ada", subject: Self.subject), age: Personal(36, subject: Self.subject),
      detail: .init(note: Personal(String(repeating: "é", count: 100), subject: Self.subject)),
      remark: Personal("", subject: Self.subject))
    let event = try NewEvent(visit)
    #expect(event.pendingSeals.count == 4)
    #expect(event.subjects == [Self.subject])
    // Until it is sealed, the payload holds each plaintext where its ciphertext goes.
    #expect(event.payload.firstRange(of: Array("Ada".utf8)) != nil)
    let sealed = event.sealingPendingValues(with: { _ in Self.key })
    #expect(sealed.pendingSeals.isEmpty)
    let read = try BinaryDecoder().decode(Visit.self, from: sealed.payload)
    let keyring = SubjectKeyring(keys: [Self.subject: Self.key], erased: [])
    #expect(keyring.reveal(read.visitor) == .value("Ada"))
    #expect(keyring.reveal(read.age) == .value(36))
    #expect(keyring.reveal(read.detail.note) == .value(String(repeating: "é", count: 100)))
    #expect(read.remark.map { keyring.reveal($0) } == .value(""))
    // Each value is bound to its event and its field.
    let fields = [read.visitor, read.detail.note].compactMap {
      $0.storedBytes.flatMap(SealedValue.init(bytes:))
    }
    #expect(fields.map(\.field) == ["visitor", "detail.note"])
    #expect(fields.allSatisfy { $0.eventID == event.id && $0.subject == Self.subject })
    // No key, no value; the payload holds none of the texts.
    #expect(SubjectKeyring().reveal(read.visitor) == .unavailable)
    #expect(sealed.payload.firstRange(of: Array("Ada".utf8)) == nil)
  }

  @Test("Appended, the values are sealed under the subject's key, which the store keeps")
  func appendSeals() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    let visit = Visit(
      visitor: Personal("Grace Hopper", subject: Self.subject), age: Personal(85, subject: Self.subject),
      detail: .init(note: Personal("a note", subject: Self.subject)), remark: nil)
    try await store.append([NewEvent(visit)], to: StreamID("visit-1"))
    let recorded = try #require(try store.events(from: 1, limit: 1).first)
    #expect(recorded.subjects == [Self.subject])
    #expect(recorded.payload.firstRange(of: Array("Grace Hopper".utf8)) == nil)
    let read = try BinaryDecoder().decode(Visit.self, from: recorded.payload)
    let keyring = try store.keyring()
    #expect(keyring.reveal(read.visitor) == .value("Grace Hopper"))
    #expect(keyring.reveal(read.age) == .value(85))
    #expect(keyring.reveal(read.detail.note) == .value("a note"))
    #expect(read.remark == nil)
    await store.close()
  }
}
