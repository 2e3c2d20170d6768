/// Decodes `Decodable` values from the positional binary format written by `BinaryEncoder`.
///
/// The format is described in `BinaryEncoder`; the type decoded must read the same sequence of items that
/// was written. The decoder is built for untrusted input: no sequence of bytes makes it crash, read out of
/// bounds or allocate more than the input justifies. Lengths and element counts larger than the remaining
/// bytes, varints longer than 10 bytes or not in shortest form, integers that do not fit the requested type,
/// `Bool` bytes and optional tags other than `0` or `1`, invalid UTF-8, nesting deeper than 128 values and
/// trailing bytes after the top-level value all throw `DecodingError.dataCorrupted`, with the coding path and
/// a description naming the problem and its byte offset (for example
/// `"unexpected end of data at byte 17 while reading String"`).
///
/// `BinaryDecoder` has no options and no state: one instance can be shared freely between tasks.
package struct BinaryDecoder: Sendable {
  /// Creates a decoder.
  public init() {}

  /// Decodes a value of the given type from a byte array.
  ///
  /// - Parameters:
  ///   - type: The type to decode.
  ///   - bytes: The encoded value, and nothing else.
  /// - Returns: The decoded value.
  /// - Throws: `DecodingError` if the bytes are not exactly one valid encoding of `type`, or any error
  ///   thrown by the type's own `init(from:)`.
  /// - Complexity: O(*n*) in the number of bytes.
  public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try bytes.withUnsafeBytes { buffer in
      try decode(type, from: buffer)
    }
  }

  /// Decodes a value of the given type directly from raw memory, without copying it.
  ///
  /// The buffer is read only during the call; strings, arrays and `Data` in the result own copies of their
  /// bytes.
  ///
  /// - Parameters:
  ///   - type: The type to decode.
  ///   - buffer: The encoded value, and nothing else. It may start at any address.
  /// - Returns: The decoded value.
  /// - Throws: `DecodingError` if the bytes are not exactly one valid encoding of `type`, or any error
  ///   thrown by the type's own `init(from:)`.
  /// - Complexity: O(*n*) in the number of bytes.
  public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
    let state = BinaryDecodingState(buffer: buffer)
    defer { state.invalidate() }
    let value = try state.decodeValue(T.self)
    try state.finish()
    return value
  }
}
