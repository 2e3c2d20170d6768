import Foundation

/// What a ``Personal`` value shows.
public enum Revealed<Value: Sendable & Hashable>: Sendable, Hashable {
  /// The value.
  case value(Value)
  /// Its subject was erased: the key is gone, here and everywhere the erasure reached.
  case erased
  /// Its subject's key is not on this device (not replicated yet), or the sealed bytes do not
  /// open with it (altered).
  case unavailable

  /// The value, or `nil` when it cannot be shown.
  public var value: Value? {
    if case .value(let value) = self { return value }
    return nil
  }
}

/// The subjects' keys of one moment, for opening ``Personal`` values (read from a store with
/// ``EventStore/keyring()`` or ``EventStore/StoreSnapshot/keyring()``).
///
/// It holds keys: keep it only as long as a read needs it.
public struct SubjectKeyring: Sendable {
  let keys: [UUID: [UInt8]]
  let erased: Set<UUID>

  /// A keyring without keys: it opens only values not sealed yet, or stored in clear.
  public init() {
    keys = [:]
    erased = []
  }

  package init(keys: [UUID: [UInt8]], erased: Set<UUID>) {
    self.keys = keys
    self.erased = erased
  }

  /// Opens `personal`: its value, or why it cannot be shown. A value stored in clear before
  /// sealing existed shows without a key (its type's `String` text).
  public func reveal<Value>(_ personal: Personal<Value>) -> Revealed<Value> {
    switch personal.content {
    case .plain(let value, _):
      return .value(value)
    case .clear(let bytes):
      guard Value.self == String.self, let text = String(validating: bytes, as: UTF8.self) as? Value else {
        return .unavailable
      }
      return .value(text)
    case .sealed(let sealed):
      let subject = sealed.subject
      if erased.contains(subject) { return .erased }
      guard let key = keys[subject], let plaintext = sealed.open(key: key),
        let value = try? BinaryDecoder().decode(Value.self, from: plaintext)
      else { return .unavailable }
      return .value(value)
    }
  }

  /// Whether `subject` was erased.
  public func isErased(_ subject: UUID) -> Bool { erased.contains(subject) }
}
