/// The keyed decoding container of `BinaryDecoder`: reads values in call order, ignoring the keys.
///
/// `contains(_:)` is always `true` and `allKeys` is always empty, because the format stores no keys.
/// `decodeIfPresent` and `decodeNil(forKey:)` consume the optional tag byte written by the encoder.
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let state: BinaryDecodingState
  /// How many coding-path entries lead to this container.
  let depth: Int

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }
  var allKeys: [Key] { [] }

  func contains(_ key: Key) -> Bool { true }

  func decodeNil(forKey key: Key) throws -> Bool {
    try read(key) { state throws(BinaryReadFailure) in try !state.readPresence("optional tag") }
  }

  // MARK: Non-optional values

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try read(key) { state throws(BinaryReadFailure) in try state.readBool() }
  }

  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try read(key) { state throws(BinaryReadFailure) in try state.readString() }
  }

  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try read(key) { state throws(BinaryReadFailure) in try state.readDouble() }
  }

  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try read(key) { state throws(BinaryReadFailure) in try state.readFloat() }
  }

  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try read(key) { state throws(BinaryReadFailure) in try state.readSigned(Int.self, "Int") }
  }

  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try read(key) { state throws(BinaryReadFailure) in try state.readSigned(Int8.self, "Int8") }
  }

  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try read(key) { state throws(BinaryReadFailure) in try state.readSigned(Int16.self, "Int16") }
  }

  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try read(key) { state throws(BinaryReadFailure) in try state.readSigned(Int32.self, "Int32") }
  }

  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try read(key) { state throws(BinaryReadFailure) in try state.readSigned(Int64.self, "Int64") }
  }

  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try read(key) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt.self, "UInt") }
  }

  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try read(key) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt8.self, "UInt8") }
  }

  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try read(key) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt16.self, "UInt16") }
  }

  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try read(key) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt32.self, "UInt32") }
  }

  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try read(key) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt64.self, "UInt64") }
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    if BinaryDecodingState.isSpecial(T.self) {
      return try read(key) { state throws(BinaryReadFailure) in try state.readSpecial(T.self) }
    }
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    defer { BinaryCodingSupport.popCodingKeys(from: &state.codingPath, depth: depth) }
    return try state.decodeNested(T.self)
  }

  // MARK: Optional values (tag byte, then the value)

  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Bool?") ? try state.readBool() : nil
    }
  }

  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("String?") ? try state.readString() : nil
    }
  }

  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Double?") ? try state.readDouble() : nil
    }
  }

  func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Float?") ? try state.readFloat() : nil
    }
  }

  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Int?") ? try state.readSigned(Int.self, "Int") : nil
    }
  }

  func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Int8?") ? try state.readSigned(Int8.self, "Int8") : nil
    }
  }

  func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Int16?") ? try state.readSigned(Int16.self, "Int16") : nil
    }
  }

  func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Int32?") ? try state.readSigned(Int32.self, "Int32") : nil
    }
  }

  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("Int64?") ? try state.readSigned(Int64.self, "Int64") : nil
    }
  }

  func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("UInt?") ? try state.readUnsigned(UInt.self, "UInt") : nil
    }
  }

  func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("UInt8?") ? try state.readUnsigned(UInt8.self, "UInt8") : nil
    }
  }

  func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("UInt16?") ? try state.readUnsigned(UInt16.self, "UInt16") : nil
    }
  }

  func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("UInt32?") ? try state.readUnsigned(UInt32.self, "UInt32") : nil
    }
  }

  func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
    try read(key) { state throws(BinaryReadFailure) in
      try state.readPresence("UInt64?") ? try state.readUnsigned(UInt64.self, "UInt64") : nil
    }
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    let present = try read(key) { state throws(BinaryReadFailure) in try state.readPresence("optional tag") }
    return present ? try decode(T.self, forKey: key) : nil
  }

  // MARK: Nesting

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    var path = codingPath
    path.append(key)
    throw DecodingError.dataCorrupted(
      DecodingError.Context(
        codingPath: path,
        debugDescription: "BinaryDecoder does not support keyed containers nested in keyed containers "
          + "(as used by enums without raw values): the positional format stores no keys"
      )
    )
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    return try state.makeUnkeyedContainer(depth: depth + 1)
  }

  func superDecoder() throws -> any Decoder {
    BinaryCodingSupport.pushCodingKey(SuperCodingKey(), onto: &state.codingPath, depth: depth)
    return state
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    BinaryCodingSupport.pushCodingKey(key, onto: &state.codingPath, depth: depth)
    return state
  }

  /// Runs a low-level read, turning its failure into a `DecodingError` whose path ends with `key`.
  @inline(__always)
  private func read<Result>(
    _ key: Key, _ body: (BinaryDecodingState) throws(BinaryReadFailure) -> Result
  ) throws -> Result {
    do throws(BinaryReadFailure) {
      return try body(state)
    } catch {
      throw state.decodingError(error, depth: depth, key: key)
    }
  }
}

/// The unkeyed decoding container of `BinaryDecoder`: a 4-byte element count, then the elements.
///
/// The count was read (and checked against the remaining bytes) when the container was created; `isAtEnd`
/// and `count` come from it. `decodeNil()` consumes an optional tag byte; a `nil` counts as an element.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let state: BinaryDecodingState
  /// How many coding-path entries lead to this container.
  let depth: Int
  /// The number of elements, as declared in the input.
  let elementCount: Int
  private(set) var currentIndex = 0

  init(state: BinaryDecodingState, depth: Int, elementCount: Int) {
    self.state = state
    self.depth = depth
    self.elementCount = elementCount
  }

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }
  var count: Int? { elementCount }
  var isAtEnd: Bool { currentIndex >= elementCount }

  mutating func decodeNil() throws -> Bool {
    let present = try next(Never?.self, advancing: false) { state throws(BinaryReadFailure) in
      try state.readPresence("optional tag")
    }
    if !present {
      currentIndex += 1
    }
    return !present
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    try next(type) { state throws(BinaryReadFailure) in try state.readBool() }
  }

  mutating func decode(_ type: String.Type) throws -> String {
    try next(type) { state throws(BinaryReadFailure) in try state.readString() }
  }

  mutating func decode(_ type: Double.Type) throws -> Double {
    try next(type) { state throws(BinaryReadFailure) in try state.readDouble() }
  }

  mutating func decode(_ type: Float.Type) throws -> Float {
    try next(type) { state throws(BinaryReadFailure) in try state.readFloat() }
  }

  mutating func decode(_ type: Int.Type) throws -> Int {
    try next(type) { state throws(BinaryReadFailure) in try state.readSigned(Int.self, "Int") }
  }

  mutating func decode(_ type: Int8.Type) throws -> Int8 {
    try next(type) { state throws(BinaryReadFailure) in try state.readSigned(Int8.self, "Int8") }
  }

  mutating func decode(_ type: Int16.Type) throws -> Int16 {
    try next(type) { state throws(BinaryReadFailure) in try state.readSigned(Int16.self, "Int16") }
  }

  mutating func decode(_ type: Int32.Type) throws -> Int32 {
    try next(type) { state throws(BinaryReadFailure) in try state.readSigned(Int32.self, "Int32") }
  }

  mutating func decode(_ type: Int64.Type) throws -> Int64 {
    try next(type) { state throws(BinaryReadFailure) in try state.readSigned(Int64.self, "Int64") }
  }

  mutating func decode(_ type: UInt.Type) throws -> UInt {
    try next(type) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt.self, "UInt") }
  }

  mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
    try next(type) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt8.self, "UInt8") }
  }

  mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
    try next(type) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt16.self, "UInt16") }
  }

  mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
    try next(type) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt32.self, "UInt32") }
  }

  mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
    try next(type) { state throws(BinaryReadFailure) in try state.readUnsigned(UInt64.self, "UInt64") }
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    if BinaryDecodingState.isSpecial(T.self) {
      return try next(type) { state throws(BinaryReadFailure) in try state.readSpecial(T.self) }
    }
    try checkNotAtEnd(type)
    BinaryCodingSupport.pushCodingKey(
      IndexCodingKey(intValue: currentIndex), onto: &state.codingPath, depth: depth)
    defer { BinaryCodingSupport.popCodingKeys(from: &state.codingPath, depth: depth) }
    let value = try state.decodeNested(T.self)
    currentIndex += 1
    return value
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try checkNotAtEnd(KeyedDecodingContainer<NestedKey>.self)
    BinaryCodingSupport.pushCodingKey(
      IndexCodingKey(intValue: currentIndex), onto: &state.codingPath, depth: depth)
    currentIndex += 1
    return KeyedDecodingContainer(BinaryKeyedDecodingContainer<NestedKey>(state: state, depth: depth + 1))
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try checkNotAtEnd((any UnkeyedDecodingContainer).self)
    BinaryCodingSupport.pushCodingKey(
      IndexCodingKey(intValue: currentIndex), onto: &state.codingPath, depth: depth)
    let nested = try state.makeUnkeyedContainer(depth: depth + 1)
    currentIndex += 1
    return nested
  }

  mutating func superDecoder() throws -> any Decoder {
    try checkNotAtEnd((any Decoder).self)
    BinaryCodingSupport.pushCodingKey(
      IndexCodingKey(intValue: currentIndex), onto: &state.codingPath, depth: depth)
    currentIndex += 1
    return state
  }

  /// Throws `valueNotFound` if every declared element has been decoded.
  private func checkNotAtEnd(_ type: Any.Type) throws {
    guard currentIndex < elementCount else {
      var path = codingPath
      path.append(IndexCodingKey(intValue: currentIndex))
      throw DecodingError.valueNotFound(
        type,
        DecodingError.Context(
          codingPath: path,
          debugDescription: "unkeyed container is at end: all \(elementCount) elements were decoded"
        )
      )
    }
  }

  /// Reads the next element with a low-level reader, turning failures into `DecodingError`s.
  @inline(__always)
  private mutating func next<Result>(
    _ type: Any.Type, advancing: Bool = true,
    _ body: (BinaryDecodingState) throws(BinaryReadFailure) -> Result
  ) throws -> Result {
    try checkNotAtEnd(type)
    do throws(BinaryReadFailure) {
      let value = try body(state)
      if advancing {
        currentIndex += 1
      }
      return value
    } catch {
      throw state.decodingError(error, depth: depth, key: IndexCodingKey(intValue: currentIndex))
    }
  }
}

/// The single-value decoding container of `BinaryDecoder`: reads one value with no framing.
///
/// `decodeNil()` consumes an optional tag byte (`0` → `true`, `1` → `false`). It cannot throw, so a bad
/// tag or the end of the data is recorded in the decoder state, which makes the read that follows fail
/// with that explanation.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
  let state: BinaryDecodingState
  /// How many coding-path entries lead to this container.
  let depth: Int

  var codingPath: [any CodingKey] { BinaryCodingSupport.codingPathPrefix(state.codingPath, depth: depth) }

  func decodeNil() -> Bool {
    do throws(BinaryReadFailure) {
      return try !state.readPresence("optional tag")
    } catch {
      state.recordDeferred(error)
      return false
    }
  }

  func decode(_ type: Bool.Type) throws -> Bool {
    try read { state throws(BinaryReadFailure) in try state.readBool() }
  }

  func decode(_ type: String.Type) throws -> String {
    try read { state throws(BinaryReadFailure) in try state.readString() }
  }

  func decode(_ type: Double.Type) throws -> Double {
    try read { state throws(BinaryReadFailure) in try state.readDouble() }
  }

  func decode(_ type: Float.Type) throws -> Float {
    try read { state throws(BinaryReadFailure) in try state.readFloat() }
  }

  func decode(_ type: Int.Type) throws -> Int {
    try read { state throws(BinaryReadFailure) in try state.readSigned(Int.self, "Int") }
  }

  func decode(_ type: Int8.Type) throws -> Int8 {
    try read { state throws(BinaryReadFailure) in try state.readSigned(Int8.self, "Int8") }
  }

  func decode(_ type: Int16.Type) throws -> Int16 {
    try read { state throws(BinaryReadFailure) in try state.readSigned(Int16.self, "Int16") }
  }

  func decode(_ type: Int32.Type) throws -> Int32 {
    try read { state throws(BinaryReadFailure) in try state.readSigned(Int32.self, "Int32") }
  }

  func decode(_ type: Int64.Type) throws -> Int64 {
    try read { state throws(BinaryReadFailure) in try state.readSigned(Int64.self, "Int64") }
  }

  func decode(_ type: UInt.Type) throws -> UInt {
    try read { state throws(BinaryReadFailure) in try state.readUnsigned(UInt.self, "UInt") }
  }

  func decode(_ type: UInt8.Type) throws -> UInt8 {
    try read { state throws(BinaryReadFailure) in try state.readUnsigned(UInt8.self, "UInt8") }
  }

  func decode(_ type: UInt16.Type) throws -> UInt16 {
    try read { state throws(BinaryReadFailure) in try state.readUnsigned(UInt16.self, "UInt16") }
  }

  func decode(_ type: UInt32.Type) throws -> UInt32 {
    try read { state throws(BinaryReadFailure) in try state.readUnsigned(UInt32.self, "UInt32") }
  }

  func decode(_ type: UInt64.Type) throws -> UInt64 {
    try read { state throws(BinaryReadFailure) in try state.readUnsigned(UInt64.self, "UInt64") }
  }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try state.decodeValue(T.self)
  }

  /// Runs a low-level read, turning its failure into a `DecodingError` with this container's path.
  @inline(__always)
  private func read<Result>(
    _ body: (BinaryDecodingState) throws(BinaryReadFailure) -> Result
  ) throws -> Result {
    do throws(BinaryReadFailure) {
      return try body(state)
    } catch {
      throw state.decodingError(error, depth: depth)
    }
  }
}
