/// Encodes `Encodable` values into a compact, positional binary format: the on-disk form of event payloads
/// and projection rows.
///
/// The format carries no field names, no type tags and no version: bytes can only be decoded (by
/// `BinaryDecoder`) as the type they were encoded from, or as a type whose `Codable` conformance reads the
/// same sequence of items. This comment is the contract for bytes already on disk; changing anything below
/// makes existing data unreadable.
///
/// ## Items
///
/// - `Bool`: one byte, `0` (false) or `1` (true). Any other byte is rejected when decoding.
/// - `UInt`, `UInt8`, `UInt16`, `UInt32`, `UInt64`: unsigned LEB128 varint. Seven bits per byte, least
///   significant group first; the high bit (`0x80`) is set on every byte but the last. Always the shortest
///   form (no trailing `0x00` group), at most 10 bytes.
/// - `Int`, `Int8`, `Int16`, `Int32`, `Int64`: zigzag-mapped to unsigned (`(n << 1) ^ (n >> 63)` on the
///   64-bit value, so 0, -1, 1, -2, 2 become 0, 1, 2, 3, 4), then as an unsigned varint.
/// - `Float`, `Double`: the IEEE 754 bit pattern, 4 or 8 bytes little-endian (NaN payloads and the sign
///   of zero are kept).
/// - `String`: unsigned varint byte count, then that many bytes of UTF-8, which must be valid UTF-8.
/// - `UUID`: its 16 bytes, in `uuid` order (the order of the hex digits in its string form).
/// - `Date`: `timeIntervalSinceReferenceDate` as a `Double`, 8 bytes little-endian (exact round trip).
/// - `Data` and `[UInt8]`: unsigned varint byte count, then the raw bytes.
/// - Keyed containers (structs, classes): the encoded values in the order they are encoded, with no keys,
///   no field count and no length. Synthesized `Codable` encodes and decodes stored properties in
///   declaration order, so reordering, inserting or removing a property changes the format (appending one
///   does too: older bytes end before it).
/// - Unkeyed containers (arrays, sets): the element count as a 4-byte little-endian `UInt32`, then the
///   elements. The count is reserved when the container is created and incremented in place as each
///   element is encoded, so nested containers need no buffering.
/// - Single-value containers (raw-value enums, wrappers): the value alone.
/// - `Optional`: a tag byte `0` for `nil`, or a tag byte `1` followed by the wrapped value.
///
/// Optional tags are written by keyed `encodeIfPresent` (which synthesized code uses for optional
/// properties), by `encodeNil` in every container, and in front of any `Optional` passed to a generic
/// `encode` (the elements of `[String?]`, `encode(_:forKey:)` with an optional value, a top-level
/// optional). The decoder consumes the tag in `decodeIfPresent` and in `decodeNil` of every container.
/// Custom `Codable` code must therefore use `decodeNil` only where the encoder wrote an optional or
/// `encodeNil`, and must not call an optional's own `encode(to:)` directly (encode it through a container).
///
/// ## Limits
///
/// - Dictionaries are not supported: encoding one throws (its keys would be lost).
/// - Enums with associated values, and enums with neither associated nor raw values, are not supported:
///   their synthesized `Codable` nests keyed containers and needs `allKeys` to decode, so encoding them
///   throws. Raw-value enums (`enum Kind: String, Codable`) and custom single-value conformances work.
/// - Every element of an unkeyed container must occupy at least one byte, so an array of a type without
///   stored properties throws. (The decoder rejects element counts larger than the number of remaining
///   bytes, so that a hostile count cannot make it loop or allocate.)
/// - An unkeyed container holds at most `UInt32.max` elements.
///
/// ## Example
///
/// `struct Point: Codable { var x: Int; var label: String? }` holding `Point(x: -2, label: "a")` encodes as
/// `03 01 01 61`: zigzag(-2) = 3, the present tag, the byte count 1, then `"a"`.
///
/// `BinaryEncoder` has no options and no state: one instance can be shared freely between tasks.
package struct BinaryEncoder: Sendable {
  /// Creates an encoder.
  public init() {}

  /// Encodes a value into a new byte array.
  ///
  /// - Parameter value: The value to encode.
  /// - Returns: The encoded bytes.
  /// - Throws: `EncodingError.invalidValue` if the value contains something the format cannot represent
  ///   (a dictionary, an enum with associated values, a zero-byte array element), or any error thrown
  ///   by the value's own `encode(to:)`.
  /// - Complexity: O(*n*) in the size of the encoded value.
  public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(128)
    try encode(value, appendingTo: &bytes)
    return bytes
  }

  /// Encodes a value by appending its bytes to an existing byte array.
  ///
  /// Useful to build a record header and payload in one buffer without copying. On error, `bytes` is
  /// restored to its original contents.
  ///
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - bytes: The array to append to; its existing contents are left untouched.
  /// - Throws: `EncodingError.invalidValue` if the value contains something the format cannot represent
  ///   (a dictionary, an enum with associated values, a zero-byte array element), or any error thrown
  ///   by the value's own `encode(to:)`.
  /// - Complexity: O(*n*) in the size of the encoded value (amortized, as for any append).
  public func encode<T: Encodable>(_ value: T, appendingTo bytes: inout [UInt8]) throws {
    try encode(value, appendingTo: &bytes, state: BinaryEncodingState())
  }

  /// Writes a value into a new byte array with `write` (a type's own ``BinaryWriter`` path), in a
  /// run that hands every value of type `type` written through `Encodable` to `hook`.
  /// - Parameters:
  ///   - hook: The code that encodes the values of `type` (and keeps what it gathers).
  ///   - type: The type whose values go to `hook`.
  ///   - write: Writes the value.
  /// - Returns: The encoded bytes.
  /// - Throws: What `write` throws, and what ``encode(_:)`` throws for what it encodes.
  package func write(
    hook: any BinaryEncodingHook, for type: Any.Type, _ write: (inout BinaryWriter) throws -> Void
  ) throws -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(128)
    let state = BinaryEncodingState(hook: hook, for: type)
    try run(appendingTo: &bytes, state: state) {
      var writer = BinaryWriter(state: state)
      try write(&writer)
    }
    return bytes
  }

  /// Encodes a value by appending its bytes to `bytes`, in the run `state`; on error, `bytes` is
  /// restored to its original contents.
  private func encode<T: Encodable>(
    _ value: T, appendingTo bytes: inout [UInt8], state: BinaryEncodingState
  ) throws {
    try run(appendingTo: &bytes, state: state) { try state.encodeValue(value) }
  }

  /// Runs `body`, which writes into `state`, with `bytes` as the output; on error, `bytes` is
  /// restored to its original contents.
  private func run(
    appendingTo bytes: inout [UInt8], state: BinaryEncodingState, _ body: () throws -> Void
  ) throws {
    let originalCount = bytes.count
    state.swapOutput(with: &bytes)
    defer { state.swapOutput(with: &bytes) }
    do {
      try body()
      try state.finish()
    } catch {
      state.truncateOutput(to: originalCount)
      throw error
    }
  }
}
