import Foundation

extension PayloadLayout {
  /// The layout of `type` learned from the type alone, without a value: a `Decoder` that
  /// follows the type's `init(from:)` and notes the name and kind of each field it asks for,
  /// handing back a placeholder (zero, empty, `nil`) for each. What an open compares with the
  /// layouts its environment recorded (`Docs/OnDiskFormat.md`, "Evolving a type").
  ///
  /// An optional's and an array's inner kind come from their static types; a raw-value enum
  /// that its placeholder does not make (its `init(from:)` throws) is made from its first case
  /// when it is `CaseIterable`.
  /// - Throws: ``PayloadLayoutError`` for what the probe cannot follow: a dictionary, `URL`,
  ///   `Decimal`, a keyed container nested in a keyed one, a key read twice, a value its
  ///   placeholder does not make and that is not `CaseIterable`.
  package init<T: Decodable>(probing type: T.Type) throws {
    do {
      self.init(root: try LayoutProbe.probe(T.self, path: "").kind)
    } catch let error as Unmakeable {
      throw PayloadLayoutError(error.description)
    }
  }
}

/// A value the probe cannot make (its `init(from:)` refuses the placeholder): where only its
/// kind is needed (behind an optional, an array's elements) the kind it showed will do.
private struct Unmakeable: Error, CustomStringConvertible {
  /// The kind its `init(from:)` read before it refused (a raw-value enum's raw value's kind).
  var kind: PayloadLayout.Kind
  var description: String
}

/// `Optional`, for the probe: its wrapped type and its `nil`.
private protocol ProbedOptional {
  static var wrappedDecodable: any Decodable.Type { get }
  static var probedNil: Self { get }
}

extension Optional: ProbedOptional where Wrapped: Decodable {
  static var wrappedDecodable: any Decodable.Type { Wrapped.self }
  static var probedNil: Self { nil }
}

/// `Array` and `Set`, for the probe: their element type and an empty value.
private protocol ProbedSequence {
  static var elementDecodable: any Decodable.Type { get }
  static var empty: Self { get }
}

extension Array: ProbedSequence where Element: Decodable {
  static var elementDecodable: any Decodable.Type { Element.self }
  static var empty: Self { [] }
}

extension Set: ProbedSequence where Element: Decodable {
  static var elementDecodable: any Decodable.Type { Element.self }
  static var empty: Self { [] }
}

/// `Dictionary`, which the binary format refuses.
private protocol ProbedDictionary {}

extension Dictionary: ProbedDictionary {}

/// The probe of one value: its kind, learned from the calls its type's `init(from:)` makes.
private final class LayoutProbe: Decoder, PayloadLayoutProbing {
  let codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  let path: String
  var kind: PayloadLayout.Kind = .unknown
  var fields: [PayloadLayout.Field] = []
  var keyed = false
  /// The keys whose `decodeNil` was asked: their values are optionals.
  var optionalKeys: Set<String> = []

  init(path: String) { self.path = path }

  func fail(_ reason: String) -> PayloadLayoutError {
    PayloadLayoutError(path.isEmpty ? reason : "'\(path)': \(reason)")
  }

  /// The kind of `type` and a placeholder value of it.
  static func probe<T: Decodable>(_ type: T.Type, path: String) throws -> (kind: PayloadLayout.Kind, value: T)
  {
    if let (kind, value) = scalar(T.self) {
      guard let value = value as? T else {
        throw PayloadLayoutError("'\(path)': \(T.self) has no placeholder")
      }
      return (kind, value)
    }
    if let personal = T.self as? any PersonalLayoutValue.Type {
      guard let value = personal.layoutPlaceholder as? T else {
        throw PayloadLayoutError("'\(path)': \(T.self) has no placeholder")
      }
      return (.personal, value)
    }
    if let optional = T.self as? any ProbedOptional.Type {
      let inner = try kind(of: optional.wrappedDecodable, path: path)
      guard let none = optional.probedNil as? T else {
        throw PayloadLayoutError("'\(path)': no nil of \(T.self)")
      }
      return (.optional(inner), none)
    }
    if let sequence = T.self as? any ProbedSequence.Type {
      let element = try kind(of: sequence.elementDecodable, path: path)
      guard let empty = sequence.empty as? T else {
        throw PayloadLayoutError("'\(path)': no empty \(T.self)")
      }
      return (.array(element), empty)
    }
    if T.self is URL.Type || T.self is Decimal.Type {
      throw PayloadLayoutError(
        "\(path.isEmpty ? "" : "'\(path)': ")\(T.self) renders as JSON in a form of its own, not its Codable shape"
      )
    }
    if T.self is any ProbedDictionary.Type {
      throw PayloadLayoutError(
        "\(path.isEmpty ? "" : "'\(path)': ")a dictionary cannot be stored in the binary format")
    }
    let probe = LayoutProbe(path: path)
    do {
      let value = try T(from: probe)
      return (probe.keyed ? .structure(probe.fields) : probe.kind, value)
    } catch let error as PayloadLayoutError {
      throw error
    } catch {
      // A raw-value enum whose placeholder is no case: its first case, when it lists them.
      if let cases = T.self as? any CaseIterable.Type, let first = firstCase(of: cases) as? T,
        let encodable = first as? any Encodable
      {
        return (try PayloadLayout(observing: encodable).root, first)
      }
      throw Unmakeable(
        kind: probe.keyed ? .unknown : probe.kind,
        description: probe.fail(
          "\(T.self) cannot be made without a stored value (\(error)); make it CaseIterable"
        )
        .description)
    }
  }

  /// The kind of `type`, where no value of it is needed: one the probe cannot make gives the
  /// kind it showed (a raw-value enum's raw value's), else ``PayloadLayout/Kind/unknown``.
  static func kind(of type: any Decodable.Type, path: String) throws -> PayloadLayout.Kind {
    func open<T: Decodable>(_ type: T.Type) throws -> PayloadLayout.Kind {
      do {
        return try probe(type, path: path).kind
      } catch let error as Unmakeable {
        return error.kind
      }
    }
    return try open(type)
  }

  private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { C.allCases.first }

  /// The kind and placeholder of a scalar type, or `nil`.
  static func scalar(_ type: Any.Type) -> (PayloadLayout.Kind, Any)? {
    switch ObjectIdentifier(type) {
    case ObjectIdentifier(Bool.self): (.bool, false)
    case ObjectIdentifier(String.self): (.string, "")
    case ObjectIdentifier(Int.self): (.int, 0 as Int)
    case ObjectIdentifier(Int8.self): (.int8, 0 as Int8)
    case ObjectIdentifier(Int16.self): (.int16, 0 as Int16)
    case ObjectIdentifier(Int32.self): (.int32, 0 as Int32)
    case ObjectIdentifier(Int64.self): (.int64, 0 as Int64)
    case ObjectIdentifier(UInt.self): (.uint, 0 as UInt)
    case ObjectIdentifier(UInt8.self): (.uint8, 0 as UInt8)
    case ObjectIdentifier(UInt16.self): (.uint16, 0 as UInt16)
    case ObjectIdentifier(UInt32.self): (.uint32, 0 as UInt32)
    case ObjectIdentifier(UInt64.self): (.uint64, 0 as UInt64)
    case ObjectIdentifier(Float.self): (.float, 0 as Float)
    case ObjectIdentifier(Double.self): (.double, 0 as Double)
    case ObjectIdentifier(UUID.self): (.uuid, UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
    case ObjectIdentifier(Date.self): (.date, Date(timeIntervalSinceReferenceDate: 0))
    case ObjectIdentifier(Data.self): (.data, Data())
    case BinaryCodingSupport.byteArrayTypeID: (.bytes, [UInt8]())
    default: nil
    }
  }

  func field(_ key: some CodingKey) -> String {
    path.isEmpty ? key.stringValue : path + "." + key.stringValue
  }

  /// Notes the field `key` of `kind`.
  func note(_ key: some CodingKey, _ kind: PayloadLayout.Kind) throws {
    guard !fields.contains(where: { $0.name == key.stringValue }) else {
      throw fail("the key '\(key.stringValue)' is read twice")
    }
    fields.append(PayloadLayout.Field(name: key.stringValue, kind: kind))
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard kind == .unknown else { throw fail("a keyed container after a value") }
    keyed = true
    return KeyedDecodingContainer(KeyedProbe<Key>(probe: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard !keyed else { throw fail("an unkeyed container in a keyed one") }
    kind = .array(.unknown)
    return UnkeyedProbe()
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    guard !keyed else { throw fail("a single value in a keyed container") }
    return SingleValueProbe(probe: self)
  }
}

private struct KeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let probe: LayoutProbe
  var codingPath: [any CodingKey] { [] }
  var allKeys: [Key] { [] }

  func contains(_ key: Key) -> Bool { true }

  /// `false`, noting that the value at `key` is an optional: the `decodeIfPresent` of a scalar
  /// type asks this, then decodes the value, whose kind the probe notes inside `.optional`.
  func decodeNil(forKey key: Key) throws -> Bool {
    probe.optionalKeys.insert(key.stringValue)
    return false
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let (kind, value) = try LayoutProbe.probe(T.self, path: probe.field(key))
    try probe.note(key, probe.optionalKeys.contains(key.stringValue) ? .optional(kind) : kind)
    return value
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    try probe.note(key, .optional(try LayoutProbe.kind(of: T.self, path: probe.field(key))))
    return nil
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    throw probe.fail("a keyed container nested in a keyed one")
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try probe.note(key, .array(.unknown))
    return UnkeyedProbe()
  }

  func superDecoder() throws -> any Decoder { throw probe.fail("a super decoder") }
  func superDecoder(forKey key: Key) throws -> any Decoder { throw probe.fail("a super decoder") }
}

/// An unkeyed container of no elements: an array's elements are known from its static type.
private struct UnkeyedProbe: UnkeyedDecodingContainer {
  var codingPath: [any CodingKey] { [] }
  var count: Int? { 0 }
  var isAtEnd: Bool { true }
  var currentIndex: Int { 0 }

  private func end() -> DecodingError {
    DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "a probe has no elements"))
  }

  mutating func decodeNil() throws -> Bool { throw end() }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> { throw end() }
  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
  mutating func superDecoder() throws -> any Decoder { throw end() }
}

private struct SingleValueProbe: SingleValueDecodingContainer {
  let probe: LayoutProbe
  var codingPath: [any CodingKey] { [] }

  func decodeNil() -> Bool {
    probe.kind = .optional(.unknown)
    return true
  }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let (kind, value) = try LayoutProbe.probe(T.self, path: probe.path)
    probe.kind = kind
    return value
  }
}
