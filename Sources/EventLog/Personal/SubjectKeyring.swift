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
    opened(personal) { try? BinaryDecoder().decode(Value.self, from: $0) }
  }

  /// Opens a personal text: the generic `reveal` for `String`, the value met most (a name),
  /// without the generic path. Its opened bytes are read as the text they are, not through
  /// `BinaryDecoder`'s `Codable` machinery, and the call is not generic across modules (which
  /// looks the generic metadata up at run time): together a third of showing a sealed name
  /// (`perf`, `read.all`; Benchmarks/Results/FINDINGS.md, finding 14).
  public func reveal(_ personal: Personal<String>) -> Revealed<String> {
    opened(personal) { plaintext in
      plaintext.withUnsafeBytes { bytes in
        var reader = BinaryReader(bytes)
        guard let text = try? reader.string(), (try? reader.finish()) != nil else { return nil }
        return text
      }
    }
  }

  /// `personal` opened, its plaintext read as a `Value` by `read` (`nil`: it does not read as one).
  private func opened<Value>(
    _ personal: Personal<Value>, reading read: ([UInt8]) -> Value?
  ) -> Revealed<Value> {
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
      guard let key = keys[subject], let plaintext = sealed.open(key: key), let value = read(plaintext)
      else { return .unavailable }
      return .value(value)
    }
  }

  /// Whether `subject` was erased.
  public func isErased(_ subject: UUID) -> Bool { erased.contains(subject) }
}
