import Foundation

extension PayloadLayout {
  /// The layout of `value`'s type as far as `value` shows it: an `Encoder` that follows the
  /// value's `encode(to:)` as `BinaryEncoder` does and notes each field's name and kind
  /// instead of writing bytes.
  ///
  /// Where the static type says it, a kind is known without a value: `String?` holding `nil` is
  /// an optional string, `[UUID]` empty an array of UUIDs. Where only a value says it (a struct,
  /// a raw-value enum behind an optional that is `nil`, the elements of an empty array of
  /// structs) the kind stays ``Kind/unknown``.
  /// - Throws: ``PayloadLayoutError`` for what a layout cannot describe or render as its type
  ///   renders: a dictionary, `URL` and `Decimal` (their JSON is not their `Codable` shape), a
  ///   keyed container nested in a keyed one, a key encoded twice, array elements of different
  ///   kinds; or what the value's `encode(to:)` throws.
  package init<T: Encodable>(observing value: T) throws {
    let observer = LayoutObserver(codingPath: [])
    try observer.observe(value)
    self.init(root: observer.kind)
  }
}

/// The encoder that learns a payload's layout (``PayloadLayout/init(observing:)``): values that
/// encode only when sealed (EventLog's `Personal`) encode their kind for it.
package protocol PayloadLayoutObserving {}

/// The kind of a type known from the type alone, or `nil` when it takes a value to know it.
private func staticKind(of type: Any.Type) -> PayloadLayout.Kind? {
  switch ObjectIdentifier(type) {
  case ObjectIdentifier(Bool.self): .bool
  case ObjectIdentifier(String.self): .string
  case ObjectIdentifier(Int.self): .int
  case ObjectIdentifier(Int8.self): .int8
  case ObjectIdentifier(Int16.self): .int16
  case ObjectIdentifier(Int32.self): .int32
  case ObjectIdentifier(Int64.self): .int64
  case ObjectIdentifier(UInt.self): .uint
  case ObjectIdentifier(UInt8.self): .uint8
  case ObjectIdentifier(UInt16.self): .uint16
  case ObjectIdentifier(UInt32.self): .uint32
  case ObjectIdentifier(UInt64.self): .uint64
  case ObjectIdentifier(Float.self): .float
  case ObjectIdentifier(Double.self): .double
  case ObjectIdentifier(UUID.self): .uuid
  case ObjectIdentifier(Date.self): .date
  case ObjectIdentifier(Data.self): .data
  case BinaryCodingSupport.byteArrayTypeID: .bytes
  default:
    if type is any PersonalLayoutValue.Type {
      .personal
    } else if let optional = type as? any LayoutOptional.Type {
      .optional(staticKind(of: optional.wrappedType) ?? .unknown)
    } else if let array = type as? any LayoutSequence.Type {
      .array(staticKind(of: array.elementType) ?? .unknown)
    } else {
      nil
    }
  }
}

/// `Optional`, seen through a protocol: its wrapped type and value.
private protocol LayoutOptional {
  static var wrappedType: Any.Type { get }
  var wrappedEncodable: (any Encodable)? { get }
}

extension Optional: LayoutOptional where Wrapped: Encodable {
  static var wrappedType: Any.Type { Wrapped.self }
  var wrappedEncodable: (any Encodable)? { self.map { $0 } }
}

/// `Dictionary`, which the binary format refuses.
private protocol LayoutDictionary {}

extension Dictionary: LayoutDictionary {}

/// `Array` and `Set`, whose elements' type says their kind when they are empty.
private protocol LayoutSequence {
  static var elementType: Any.Type { get }
}

extension Array: LayoutSequence where Element: Encodable {
  static var elementType: Any.Type { Element.self }
}

extension Set: LayoutSequence where Element: Encodable {
  static var elementType: Any.Type { Element.self }
}

/// The `Encoder` behind ``PayloadLayout/init(observing:)``: one per value, noting that value's
/// kind; keyed containers collect fields, unkeyed ones merge their elements' kinds.
private final class LayoutObserver: Encoder, PayloadLayoutObserving {
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  var kind: PayloadLayout.Kind = .unknown
  /// The fields of a keyed container, in the order they were encoded.
  var fields: [PayloadLayout.Field] = []
  /// The kind shared by an unkeyed container's elements, and how many there were.
  var element: PayloadLayout.Kind = .unknown
  var hasContainer = false
  /// The first error of a container operation that cannot throw.
  var deferredError: PayloadLayoutError?

  init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

  func fail(_ reason: String) -> PayloadLayoutError {
    let path = codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    return PayloadLayoutError(path.isEmpty ? reason : "'\(path)': \(reason)")
  }

  /// Notes `value`'s kind, handling what `BinaryEncoder` handles itself first.
  func observe<T: Encodable>(_ value: T) throws {
    if let scalar = staticKind(of: T.self), scalar.isScalar {
      kind = scalar
      return
    }
    if let optional = value as? any LayoutOptional {
      let wrappedKind: PayloadLayout.Kind
      if let wrapped = optional.wrappedEncodable {
        let child = LayoutObserver(codingPath: codingPath)
        try child.observe(wrapped)
        wrappedKind = child.kind
      } else {
        wrappedKind = staticKind(of: type(of: optional).wrappedType) ?? .unknown
      }
      kind = .optional(wrappedKind)
      return
    }
    switch value {
    case is URL, is Decimal:
      throw fail("\(T.self) renders as JSON in a form of its own, not its Codable shape")
    case is any LayoutDictionary:
      throw fail("a dictionary cannot be stored in the binary format (its keys would be lost)")
    default:
      break
    }
    try value.encode(to: self)
    try resolvePending()
    if !hasContainer { throw fail("\(T.self) encoded nothing") }
    // An empty array or set: its element type may say the elements' kind.
    if case .array(.unknown) = kind, let sequence = T.self as? any LayoutSequence.Type {
      kind = .array(staticKind(of: sequence.elementType) ?? .unknown)
    }
  }

  /// A child observer for the value at `key`.
  func child(_ key: any CodingKey) -> LayoutObserver { LayoutObserver(codingPath: codingPath + [key]) }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    if !hasContainer {
      hasContainer = true
      kind = .structure([])
    }
    return KeyedEncodingContainer(KeyedObserver<Key>(observer: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    if !hasContainer {
      hasContainer = true
      kind = .array(.unknown)
    }
    return UnkeyedObserver(observer: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    hasContainer = true
    return SingleValueObserver(observer: self)
  }

  /// Adds a field to the keyed container's structure.
  func addField(_ name: String, _ fieldKind: PayloadLayout.Kind, nullWhenAbsent: Bool = false) {
    guard case .structure(var fields) = kind else {
      deferredError = deferredError ?? fail("mixes a keyed container with another")
      return
    }
    guard !fields.contains(where: { $0.name == name }) else {
      deferredError = deferredError ?? fail("encodes the key '\(name)' twice")
      return
    }
    fields.append(PayloadLayout.Field(name: name, kind: fieldKind, nullWhenAbsent: nullWhenAbsent))
    kind = .structure(fields)
  }

  /// Merges an element's kind into the unkeyed container's.
  func addElement(_ elementKind: PayloadLayout.Kind) {
    guard case .array(let current) = kind else {
      deferredError = deferredError ?? fail("mixes an unkeyed container with another")
      return
    }
    guard let merged = current.merged(with: elementKind) else {
      deferredError = deferredError ?? fail("holds elements of different kinds")
      return
    }
    kind = .array(merged)
  }

  /// The kind of `value` observed at `key`.
  func kind<T: Encodable>(of value: T, at key: any CodingKey) throws -> PayloadLayout.Kind {
    let child = child(key)
    try child.observe(value)
    return child.kind
  }

  struct KeyedObserver<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let observer: LayoutObserver
    var codingPath: [any CodingKey] { observer.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
      observer.addField(key.stringValue, .optional(.unknown), nullWhenAbsent: true)
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { observer.addField(key.stringValue, .bool) }
    mutating func encode(_ value: String, forKey key: Key) throws {
      observer.addField(key.stringValue, .string)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
      observer.addField(key.stringValue, .double)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
      observer.addField(key.stringValue, .float)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { observer.addField(key.stringValue, .int) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { observer.addField(key.stringValue, .int8) }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
      observer.addField(key.stringValue, .int16)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
      observer.addField(key.stringValue, .int32)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
      observer.addField(key.stringValue, .int64)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws { observer.addField(key.stringValue, .uint) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
      observer.addField(key.stringValue, .uint8)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
      observer.addField(key.stringValue, .uint16)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
      observer.addField(key.stringValue, .uint32)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
      observer.addField(key.stringValue, .uint64)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
      let kind = try observer.kind(of: value, at: key)
      // An optional encoded as a value (not through `encodeIfPresent`) renders `nil` as null.
      observer.addField(key.stringValue, kind, nullWhenAbsent: value is any LayoutOptional)
    }

    /// A field that `encodeIfPresent` encodes: an optional whose `nil` leaves the key out.
    private func optional<T: Encodable>(_ value: T?, _ key: Key) throws {
      let kind =
        if let value { try observer.kind(of: value, at: key) } else { staticKind(of: T.self) ?? .unknown }
      observer.addField(key.stringValue, .optional(kind))
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
      try optional(value, key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
      // The binary format refuses these too (enums with associated values).
      observer.deferredError =
        observer.deferredError ?? observer.fail("nests a keyed container in a keyed container")
      return observer.child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      let child = ChildField(observer: observer, key: key)
      return child.child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
      guard let key = Key(stringValue: "super") else { return observer.child(ObservedIndexKey(intValue: 0)) }
      return superEncoder(forKey: key)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
      ChildField(observer: observer, key: key).child
    }
  }

  struct UnkeyedObserver: UnkeyedEncodingContainer {
    let observer: LayoutObserver
    var codingPath: [any CodingKey] { observer.codingPath }
    var count = 0

    private mutating func add(_ kind: PayloadLayout.Kind) {
      observer.addElement(kind)
      count += 1
    }

    private var nextKey: any CodingKey { ObservedIndexKey(intValue: count) }

    mutating func encodeNil() throws { add(.optional(.unknown)) }
    mutating func encode(_ value: Bool) throws { add(.bool) }
    mutating func encode(_ value: String) throws { add(.string) }
    mutating func encode(_ value: Double) throws { add(.double) }
    mutating func encode(_ value: Float) throws { add(.float) }
    mutating func encode(_ value: Int) throws { add(.int) }
    mutating func encode(_ value: Int8) throws { add(.int8) }
    mutating func encode(_ value: Int16) throws { add(.int16) }
    mutating func encode(_ value: Int32) throws { add(.int32) }
    mutating func encode(_ value: Int64) throws { add(.int64) }
    mutating func encode(_ value: UInt) throws { add(.uint) }
    mutating func encode(_ value: UInt8) throws { add(.uint8) }
    mutating func encode(_ value: UInt16) throws { add(.uint16) }
    mutating func encode(_ value: UInt32) throws { add(.uint32) }
    mutating func encode(_ value: UInt64) throws { add(.uint64) }
    mutating func encode<T: Encodable>(_ value: T) throws { add(try observer.kind(of: value, at: nextKey)) }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
      let element = ChildElement(observer: observer, key: nextKey)
      count += 1
      return element.child.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
      let element = ChildElement(observer: observer, key: nextKey)
      count += 1
      return element.child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
      let element = ChildElement(observer: observer, key: nextKey)
      count += 1
      return element.child
    }
  }

  struct SingleValueObserver: SingleValueEncodingContainer {
    let observer: LayoutObserver
    var codingPath: [any CodingKey] { observer.codingPath }

    mutating func encodeNil() throws { observer.kind = .optional(.unknown) }
    mutating func encode(_ value: Bool) throws { observer.kind = .bool }
    mutating func encode(_ value: String) throws { observer.kind = .string }
    mutating func encode(_ value: Double) throws { observer.kind = .double }
    mutating func encode(_ value: Float) throws { observer.kind = .float }
    mutating func encode(_ value: Int) throws { observer.kind = .int }
    mutating func encode(_ value: Int8) throws { observer.kind = .int8 }
    mutating func encode(_ value: Int16) throws { observer.kind = .int16 }
    mutating func encode(_ value: Int32) throws { observer.kind = .int32 }
    mutating func encode(_ value: Int64) throws { observer.kind = .int64 }
    mutating func encode(_ value: UInt) throws { observer.kind = .uint }
    mutating func encode(_ value: UInt8) throws { observer.kind = .uint8 }
    mutating func encode(_ value: UInt16) throws { observer.kind = .uint16 }
    mutating func encode(_ value: UInt32) throws { observer.kind = .uint32 }
    mutating func encode(_ value: UInt64) throws { observer.kind = .uint64 }
    mutating func encode<T: Encodable>(_ value: T) throws {
      let child = LayoutObserver(codingPath: observer.codingPath)
      try child.observe(value)
      observer.kind = child.kind
    }
  }

  /// A field whose value a nested container or a super encoder writes later: its kind is read
  /// from the child observer when the parent's kind is asked for. Registered at once (the
  /// field's place is its position), and its kind is filled in by ``LayoutObserver/kind``.
  final class ChildField {
    let child: LayoutObserver

    init(observer: LayoutObserver, key: any CodingKey) {
      child = observer.child(key)
      observer.pending.append((key.stringValue, child))
      observer.addField(key.stringValue, .unknown)
    }
  }

  /// An element written by a nested container: merged in when the parent's kind is asked for.
  final class ChildElement {
    let child: LayoutObserver

    init(observer: LayoutObserver, key: any CodingKey) {
      child = observer.child(key)
      observer.pendingElements.append(child)
    }
  }

  /// Fields and elements written through nested containers, resolved by ``resolvePending()``.
  var pending: [(name: String, observer: LayoutObserver)] = []
  var pendingElements: [LayoutObserver] = []

  /// Fills in the kinds that nested containers wrote.
  func resolvePending() throws {
    for (name, child) in pending {
      try child.resolvePending()
      if let error = child.deferredError { throw error }
      guard case .structure(var fields) = kind, let index = fields.firstIndex(where: { $0.name == name })
      else {
        continue
      }
      fields[index].kind = child.kind
      kind = .structure(fields)
    }
    for child in pendingElements {
      try child.resolvePending()
      if let error = child.deferredError { throw error }
      addElement(child.kind)
    }
    pending = []
    pendingElements = []
    if let deferredError { throw deferredError }
  }
}

/// The key of an array element, for coding paths.
private struct ObservedIndexKey: CodingKey {
  var stringValue: String { "\(intValue ?? 0)" }
  var intValue: Int?
  init(intValue: Int) { self.intValue = intValue }
  init?(stringValue: String) { nil }
}

extension PayloadLayout.Kind {
  /// Whether it is a scalar (no inner kind).
  var isScalar: Bool { scalarName != nil }
}
