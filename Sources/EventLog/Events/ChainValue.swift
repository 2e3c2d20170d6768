import Foundation

/// A record's value in the log's hash chain: 32 bytes that commit to the record as stored and,
/// through the value before it, to every record before it (`Docs/Audit.md`).
///
/// Record `n`'s value is BLAKE2b-256 of record `n - 1`'s value (``zero`` for the first record)
/// followed by its own stored bytes up to the value. Changing, removing or inserting any byte of
/// any record changes the value of every record from there on, so a value held elsewhere (by
/// the server, in an export's manifest, under a signature) pins the whole history before it.
public struct ChainValue: Hashable, Sendable, CustomStringConvertible {
  /// The value's bytes, in four words (inline: no allocation per event).
  private var words: (UInt64, UInt64, UInt64, UInt64)

  /// The value "before the first record": 32 zero bytes.
  public static let zero = ChainValue(words: (0, 0, 0, 0))

  /// The length of a value: 32 bytes.
  public static let length = 32

  private init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

  /// The value of 32 bytes.
  /// - Returns: `nil` when `bytes` is not 32 bytes long.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == Self.length else { return nil }
    var value = Self.zero
    withUnsafeMutableBytes(of: &value.words) { target in
      for (index, byte) in bytes.enumerated() { target[index] = byte }
    }
    self = value
  }

  /// The value read from 32 bytes at the start of `buffer`.
  init(loadingFrom buffer: UnsafeRawBufferPointer) {
    precondition(buffer.count >= Self.length, "a chain value is 32 bytes")
    var value = Self.zero
    withUnsafeMutableBytes(of: &value.words) {
      $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<32]))
    }
    self = value
  }

  /// The value written as 64 hexadecimal digits.
  /// - Returns: `nil` for any other text.
  public init?(hex: String) {
    guard let bytes = Hex.bytes(hex) else { return nil }
    self.init(bytes: bytes)
  }

  /// The value's 32 bytes.
  public var bytes: [UInt8] { Swift.withUnsafeBytes(of: words) { Array($0) } }

  /// Calls `body` with the value's 32 bytes.
  public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try Swift.withUnsafeBytes(of: words, body)
  }

  /// 64 lower-case hexadecimal digits.
  public var hex: String { withUnsafeBytes { Hex.string($0) } }

  /// ``hex``.
  public var description: String { hex }

  /// Whether the two values are the same 32 bytes.
  public static func == (lhs: ChainValue, rhs: ChainValue) -> Bool {
    lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
      && lhs.words.3 == rhs.words.3
  }

  /// Hashes the 32 bytes.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(words.0)
    hasher.combine(words.1)
    hasher.combine(words.2)
    hasher.combine(words.3)
  }
}
