/// The keyed encoding container of `BinaryEncoder`: writes values in call order and no keys.
///
/// Every `encodeIfPresent` overload is implemented here: the protocol's default implementations write
/// nothing for `nil` and the bare value otherwise, which a format without keys cannot tell apart. Each one
/// here writes a tag byte (`0` for `nil`, `1` for present) followed by the value.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let state: BinaryEncodingState
  /// How many coding-path entries lead to this container.
  let depth: Int

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }

  // MARK: Non-optional values

  mutating func encodeNil(forKey key: Key) throws { state.writeByte(0) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { state.writeBool(value) }
  mutating func encode(_ value: String, forKey key: Key) throws { state.writeString(value) }
  mutating func encode(_ value: Double, forKey key: Key) throws { state.writeFixed64(value.bitPattern) }
  mutating func encode(_ value: Float, forKey key: Key) throws { state.writeFixed32(value.bitPattern) }
  mutating func encode(_ value: Int, forKey key: Key) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { state.writeSigned(value) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { state.writeUnsigned(value) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    if state.encodeSpecial(value) {
      return
    }
    if depth == 0, let hook = state.hook(for: T.self) {
      // A hooked field of the payload itself (a personal value), named by its key (no coding path
      // to keep): the path's push and pop were a fifth of a sealed value's encoding (`perf`,
      // `append.batched`).
      try withUnsafePointer(to: value) {
        try hook.encode(UnsafeRawPointer($0), into: state, field: key.stringValue)
      }
      return
    }
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    defer { BinaryCodingSupport.popCodingKeys(from: &state.codingPath, depth: depth) }
    try state.encodeNested(value)
  }

  // MARK: Optional values (tag byte, then the value)

  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeBool(value)
  }

  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeString(value)
  }

  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeFixed64(value.bitPattern)
  }

  mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeFixed32(value.bitPattern)
  }

  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeSigned(Int64(value))
  }

  mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeSigned(Int64(value))
  }

  mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeSigned(Int64(value))
  }

  mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeSigned(Int64(value))
  }

  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeSigned(value)
  }

  mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeUnsigned(UInt64(value))
  }

  mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeUnsigned(UInt64(value))
  }

  mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeUnsigned(UInt64(value))
  }

  mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeUnsigned(UInt64(value))
  }

  mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    state.writeUnsigned(value)
  }

  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    guard let value = tagged(value) else { return }
    try encode(value, forKey: key)
  }

  // MARK: Nesting

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    // Synthesized `Codable` for enums is the main user of this; their decoding needs `allKeys`, which a
    // keyless format cannot provide. Fail the whole encode rather than write bytes that cannot be decoded.
    state.recordDeferred(
      EncodingError.invalidValue(
        key.stringValue,
        EncodingError.Context(
          codingPath: state.codingPath,
          debugDescription: "BinaryEncoder does not support keyed containers nested in keyed containers "
            + "(as used by enums without raw values): the positional format writes no keys"
        )
      )
    )
    return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(state: state, depth: depth + 1))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    return BinaryUnkeyedEncodingContainer(state: state, depth: depth + 1, countOffset: state.reserveCount())
  }

  mutating func superEncoder() -> any Encoder {
    BinaryCodingSupport.pushCodingKey(SuperCodingKey(), onto: &state.codingPath, depth: depth)
    return state
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    return state
  }

  /// Writes the presence tag of an optional (`1` present, `0` absent) and returns the optional.
  @inline(__always)
  private func tagged<V>(_ value: V?) -> V? {
    state.writeByte(value == nil ? 0 : 1)
    return value
  }
}

/// The unkeyed encoding container of `BinaryEncoder`: a 4-byte element count, then the elements.
///
/// The count is reserved (as zero) when the container is created and incremented in place for each
/// element, so containers nested inside elements simply append after it.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let state: BinaryEncodingState
  /// How many coding-path entries lead to this container.
  let depth: Int
  /// Where the little-endian `UInt32` element count lives in the output.
  let countOffset: Int

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }
  var count: Int { Int(state.count(at: countOffset)) }

  mutating func encodeNil() throws {
    addElement()
    state.writeByte(0)
  }

  mutating func encode(_ value: Bool) throws {
    addElement()
    state.writeBool(value)
  }

  mutating func encode(_ value: String) throws {
    addElement()
    state.writeString(value)
  }

  mutating func encode(_ value: Double) throws {
    addElement()
    state.writeFixed64(value.bitPattern)
  }

  mutating func encode(_ value: Float) throws {
    addElement()
    state.writeFixed32(value.bitPattern)
  }

  mutating func encode(_ value: Int) throws {
    addElement()
    state.writeSigned(Int64(value))
  }

  mutating func encode(_ value: Int8) throws {
    addElement()
    state.writeSigned(Int64(value))
  }

  mutating func encode(_ value: Int16) throws {
    addElement()
    state.writeSigned(Int64(value))
  }

  mutating func encode(_ value: Int32) throws {
    addElement()
    state.writeSigned(Int64(value))
  }

  mutating func encode(_ value: Int64) throws {
    addElement()
    state.writeSigned(value)
  }

  mutating func encode(_ value: UInt) throws {
    addElement()
    state.writeUnsigned(UInt64(value))
  }

  mutating func encode(_ value: UInt8) throws {
    addElement()
    state.writeUnsigned(UInt64(value))
  }

  mutating func encode(_ value: UInt16) throws {
    addElement()
    state.writeUnsigned(UInt64(value))
  }

  mutating func encode(_ value: UInt32) throws {
    addElement()
    state.writeUnsigned(UInt64(value))
  }

  mutating func encode(_ value: UInt64) throws {
    addElement()
    state.writeUnsigned(value)
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let index = addElement()
    if state.encodeSpecial(value) {
      return
    }
    BinaryCodingSupport.pushCodingKey(IndexCodingKey(intValue: index), onto: &state.codingPath, depth: depth)
    defer { BinaryCodingSupport.popCodingKeys(from: &state.codingPath, depth: depth) }
    let start = state.byteCount
    try state.encodeNested(value)
    // The decoder rejects element counts larger than the bytes that follow (so hostile counts cannot make
    // it spin or allocate); that is only sound if every element occupies at least one byte.
    guard state.byteCount > start else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: state.codingPath,
          debugDescription: "BinaryEncoder cannot encode an array element that encodes to zero bytes "
            + "(a type with no stored properties)"
        )
      )
    }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let index = addElement()
    BinaryCodingSupport.pushCodingKey(IndexCodingKey(intValue: index), onto: &state.codingPath, depth: depth)
    return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(state: state, depth: depth + 1))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let index = addElement()
    BinaryCodingSupport.pushCodingKey(IndexCodingKey(intValue: index), onto: &state.codingPath, depth: depth)
    return BinaryUnkeyedEncodingContainer(state: state, depth: depth + 1, countOffset: state.reserveCount())
  }

  mutating func superEncoder() -> any Encoder {
    let index = addElement()
    BinaryCodingSupport.pushCodingKey(IndexCodingKey(intValue: index), onto: &state.codingPath, depth: depth)
    return state
  }

  /// Counts one more element and returns its index.
  @discardableResult
  private func addElement() -> Int {
    let index = count
    _ = state.incrementCount(at: countOffset, depth: depth)
    return index
  }
}

/// The single-value encoding container of `BinaryEncoder`: writes the value with no framing.
///
/// `encodeNil()` writes the absent tag `0`; the matching present tag `1` in front of an optional's value is
/// written by the encoder when it meets an `Optional` in a generic `encode`.
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
  let state: BinaryEncodingState
  /// How many coding-path entries lead to this container.
  let depth: Int

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }

  mutating func encodeNil() throws { state.writeByte(0) }
  mutating func encode(_ value: Bool) throws { state.writeBool(value) }
  mutating func encode(_ value: String) throws { state.writeString(value) }
  mutating func encode(_ value: Double) throws { state.writeFixed64(value.bitPattern) }
  mutating func encode(_ value: Float) throws { state.writeFixed32(value.bitPattern) }
  mutating func encode(_ value: Int) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int8) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int16) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int32) throws { state.writeSigned(Int64(value)) }
  mutating func encode(_ value: Int64) throws { state.writeSigned(value) }
  mutating func encode(_ value: UInt) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt8) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt16) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt32) throws { state.writeUnsigned(UInt64(value)) }
  mutating func encode(_ value: UInt64) throws { state.writeUnsigned(value) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    try state.encodeValue(value)
  }
}
