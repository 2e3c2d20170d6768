import Foundation
import LMDB
import Sodium

/// The data subjects' keys and erasure fences of an environment: `subject_keys` and
/// `erased_subjects` (`Docs/OnDiskFormat.md`, "Data subjects"). Never part of an event, never
/// exported: a key leaves the device only through replication to its owner's server.
///
/// - `subject_keys`: subject (16 UUID bytes) → key (32 bytes), then its creation time (Int64
///   microseconds since 1970, little-endian).
/// - `erased_subjects`: subject → the erasure's recorded-at (Int64 microseconds, little-endian),
///   then the `SubjectErased` event's ID (16 bytes). A subject here has no key and never gets
///   one again.
struct SubjectKeyDatabase {
  let keys: Database
  let erased: Database

  /// A subject's key as stored.
  struct StoredKey {
    var key: [UInt8]
    var createdAtMicroseconds: Int64
  }

  /// A subject's erasure as stored.
  struct Erasure {
    var erasedAtMicroseconds: Int64
    var eventID: UUID
  }

  func key(of subject: UUID, in txn: Transaction) throws -> StoredKey? {
    try withUnsafeBytes(of: subject.uuid) { k in
      try txn.withValue(forKey: k, in: keys) { value -> StoredKey? in
        guard value.count == XChaCha20Poly1305.keyLength + 8 else { return nil }
        return StoredKey(
          key: Array(value[0..<XChaCha20Poly1305.keyLength]),
          createdAtMicroseconds: Int64(
            littleEndian: value.loadUnaligned(fromByteOffset: XChaCha20Poly1305.keyLength, as: Int64.self)))
      } ?? nil
    }
  }

  func erasure(of subject: UUID, in txn: Transaction) throws -> Erasure? {
    try withUnsafeBytes(of: subject.uuid) { k in
      try txn.withValue(forKey: k, in: erased) { Self.erasure(from: $0) } ?? nil
    }
  }

  private static func erasure(from value: UnsafeRawBufferPointer) -> Erasure? {
    guard value.count == 24 else { return nil }
    return Erasure(
      erasedAtMicroseconds: Int64(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: Int64.self)),
      eventID: UUID(uuid: value.loadUnaligned(fromByteOffset: 8, as: uuid_t.self)))
  }

  /// Stores `key` for `subject` unless the subject has a key or is erased.
  /// - Returns: whether it was stored.
  @discardableResult
  func store(
    _ key: [UInt8], createdAtMicroseconds: Int64, for subject: UUID, in txn: WriteTransaction
  ) throws
    -> Bool
  {
    guard key.count == XChaCha20Poly1305.keyLength else { return false }
    if try erasure(of: subject, in: txn) != nil || self.key(of: subject, in: txn) != nil { return false }
    var value = key
    withUnsafeBytes(of: createdAtMicroseconds.littleEndian) { value.append(contentsOf: $0) }
    try withUnsafeBytes(of: subject.uuid) { k in
      try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: keys) }
    }
    return true
  }

  /// Destroys `subject`'s key and fences it (an erasure already recorded stays as it was).
  func erase(_ subject: UUID, atMicroseconds micros: Int64, eventID: UUID, in txn: WriteTransaction) throws {
    try withUnsafeBytes(of: subject.uuid) { k in
      _ = try txn.delete(forKey: k, in: keys)
      if try txn.withValue(forKey: k, in: erased, { _ in true }) == nil {
        var value: [UInt8] = []
        withUnsafeBytes(of: micros.littleEndian) { value.append(contentsOf: $0) }
        withUnsafeBytes(of: eventID.uuid) { value.append(contentsOf: $0) }
        try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: erased) }
      }
    }
  }

  /// Every key, in subject order.
  func allKeys(in txn: Transaction) throws -> [(subject: UUID, key: StoredKey)] {
    var result: [(UUID, StoredKey)] = []
    try txn.withCursor(in: keys) { cursor in
      var found = try cursor.move(.first)
      while found {
        let value = cursor.value
        if cursor.key.count == 16, value.count == XChaCha20Poly1305.keyLength + 8 {
          result.append(
            (
              UUID(uuid: cursor.key.loadUnaligned(as: uuid_t.self)),
              StoredKey(
                key: Array(value[0..<XChaCha20Poly1305.keyLength]),
                createdAtMicroseconds: Int64(
                  littleEndian: value.loadUnaligned(
                    fromByteOffset: XChaCha20Poly1305.keyLength, as: Int64.self)))
            ))
        }
        found = try cursor.move(.next)
      }
    }
    return result
  }

  /// Every erasure, in subject order.
  func allErasures(in txn: Transaction) throws -> [(subject: UUID, erasure: Erasure)] {
    var result: [(UUID, Erasure)] = []
    try txn.withCursor(in: erased) { cursor in
      var found = try cursor.move(.first)
      while found {
        if cursor.key.count == 16, let erasure = Self.erasure(from: cursor.value) {
          result.append((UUID(uuid: cursor.key.loadUnaligned(as: uuid_t.self)), erasure))
        }
        found = try cursor.move(.next)
      }
    }
    return result
  }
}
