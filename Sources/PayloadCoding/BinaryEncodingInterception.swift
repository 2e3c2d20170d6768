/// Types that the encoder must intercept before their own `encode(to:)` runs.
///
/// `Optional` needs a presence tag in front of a present value, which its own `Encodable` conformance
/// (`singleValueContainer().encode(wrapped)`) cannot express; `Dictionary` would silently lose its keys in
/// a positional format, so it is rejected up front instead of producing bytes that cannot be decoded.
///
/// Package access: EventLog's `Personal` intercepts its encoding too (a new value is written as the
/// placeholder the append seals).
package protocol BinaryEncodingInterception {
  /// Encodes `self` into `state` in place of `encode(to:)`.
  func interceptEncoding(into state: BinaryEncodingState) throws
}

extension Optional: BinaryEncodingInterception where Wrapped: Encodable {
  package func interceptEncoding(into state: BinaryEncodingState) throws {
    switch self {
    case .none:
      state.writeByte(0)
    case .some(let wrapped):
      state.writeByte(1)
      try state.encodeValue(wrapped)
    }
  }
}

extension Dictionary: BinaryEncodingInterception where Key: Encodable, Value: Encodable {
  package func interceptEncoding(into state: BinaryEncodingState) throws {
    throw EncodingError.invalidValue(
      self,
      EncodingError.Context(
        codingPath: state.codingPath,
        debugDescription: "BinaryEncoder does not support dictionaries: the positional format writes no keys"
      )
    )
  }
}
