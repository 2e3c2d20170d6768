import Foundation

/// A value that is personal data of a data subject (a customer's name, a note about them): the
/// log stores it sealed under the subject's key, so that erasing the subject (destroying the key,
/// ``EventStore/erase(subject:reason:)``) makes it unreadable everywhere, while the rest of the
/// event and the hash chain stay as they were.
///
/// Declare a personal field by its type, and say whose data it is when you create the event:
///
/// ```swift
/// struct BookingCreated: EventPayload {
///   static let eventType = "BookingCreated"
///   var bookingID: UUID
///   var customerID: UUID               // the data subject: an ID, never the name
///   var customerName: Personal<String>
///   var notes: Personal<String>?
/// }
///
/// let event = BookingCreated(
///   bookingID: id, customerID: customer,
///   customerName: Personal("Ada", subject: customer), notes: nil)
/// ```
///
/// ``NewEvent/init(_:id:metadata:)`` encodes the value and the append seals it
/// (XChaCha20-Poly1305, a random nonce, the event ID, field and subject bound) with the
/// subject's key, which it creates on the subject's first event. Read back, the value is sealed:
/// projections copy it into their rows as it is (they never hold the plaintext), and code that
/// shows it opens it with a ``SubjectKeyring`` (``SubjectKeyring/reveal(_:)->Revealed<Value>``). A value stored
/// in clear by a build before sealing existed reads as one that opens without a key.
///
/// In JSON (`log --json`, `export`) a sealed value is its stored bytes in Base64, and a value
/// stored in clear its text; a recorded layout gives the field the kind `personal`, which a
/// build without the type renders and reads back the same way.
public struct Personal<Value: Codable & Sendable & Hashable>: Sendable, Hashable {
  @usableFromInline
  enum Content: Sendable, Hashable {
    /// Created by the app, not sealed yet: only ``NewEvent`` encodes it (sealing it).
    case plain(Value, subject: UUID)
    /// Read from the log.
    case sealed(SealedValue)
    /// Read from the log, stored in clear before sealing existed: the value's UTF-8 text.
    case clear([UInt8])
  }

  @usableFromInline let content: Content

  /// A value of `subject`'s, to be sealed under the subject's key when its event is appended.
  /// - Parameters:
  ///   - value: the personal value.
  ///   - subject: whose data it is: a stable ID of the person (not their name or any other
  ///     personal value, which would outlive the erasure in the record's list of subjects).
  ///
  /// Inlinable: the app's code makes its values, specialized for its types (made through the
  /// generic entry point, a value cost a tenth of a microsecond more in the `append.batched`
  /// profile).
  @inlinable
  public init(_ value: Value, subject: UUID) {
    self.init(content: .plain(value, subject: subject))
  }

  @usableFromInline
  init(content: Content) { self.content = content }

  /// A value read from stored bytes: sealed (they start with `0xFF`), else stored in clear.
  package init(storedBytes bytes: [UInt8]) {
    if bytes.first == SealedValue.marker, let sealed = SealedValue(bytes: bytes) {
      content = .sealed(sealed)
    } else {
      content = .clear(bytes)
    }
  }

  /// The data subject; `nil` for a value stored in clear before sealing existed.
  public var subject: UUID? {
    switch content {
    case .plain(_, let subject): subject
    case .sealed(let sealed): sealed.subject
    case .clear: nil
    }
  }

  /// Whether the value is stored sealed (or will be, once appended).
  public var isSealed: Bool {
    if case .clear = content { return false }
    return true
  }

  /// The bytes the value is stored as; `nil` before its event is appended.
  package var storedBytes: [UInt8]? {
    switch content {
    case .plain: nil
    case .sealed(let sealed): sealed.bytes
    case .clear(let bytes): bytes
    }
  }
}

extension Personal: PersonalLayoutValue {
  package static var layoutPlaceholder: Self { Personal(content: .clear([])) }
}

extension Personal: Codable {
  /// Reads the stored bytes: `Data` (a sealed value, or text stored in clear). In JSON a sealed
  /// value is the Base64 of its bytes, and a value stored in clear is its text; a string whose
  /// Base64 is not a whole sealed value is text.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if decoder is any BinaryDecoding || decoder is any PayloadLayoutProbing {
      self.init(storedBytes: Array(try container.decode(Data.self)))
    } else if let data = try? container.decode(Data.self), let sealed = SealedValue(bytes: Array(data)) {
      self.init(content: .sealed(sealed))
    } else {
      self.init(content: .clear(Array(try container.decode(String.self).utf8)))
    }
  }

  /// Writes the stored bytes: `Data`, which JSON shows in Base64 (a value stored in clear
  /// before sealing existed: its text).
  ///
  /// A value not appended yet is sealed only by ``NewEvent``: any other encoder is refused
  /// (an `EncodingError`), so that no plaintext leaves through one.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if encoder is any PersonalValueShowing, let keyring = SubjectKeyring.shown {
      // A row shown to an auditor (`history`, `diff`): the value, or null where it cannot be.
      if let value = keyring.reveal(self).value {
        try container.encode(value)
      } else {
        try container.encodeNil()
      }
      return
    }
    switch content {
    case .sealed(let sealed):
      try container.encode(Data(sealed.bytes))
    case .clear(let bytes):
      // Binary: `Data`, as a sealed value. (The layout observer notes a personal field by its
      // type, `personal`, for clear and sealed values alike, without encoding it; were it to
      // encode one, `Data` is the binary shape.)
      if encoder is any BinaryEncoding || encoder is any PayloadLayoutObserving {
        try container.encode(Data(bytes))
      } else {
        try container.encode(String(decoding: bytes, as: UTF8.self))
      }
    case .plain:
      guard encoder is any PayloadLayoutObserving else {
        throw EncodingError.invalidValue(
          self,
          EncodingError.Context(
            codingPath: encoder.codingPath,
            debugDescription:
              "a personal value is sealed when its event is created (NewEvent); it cannot be encoded in clear"
          ))
      }
      // Learning the layout: only the kind matters.
      try container.encode(Data())
    }
  }
}

extension SubjectKeyring {
  /// The keys the audit commands show rows' personal values with (`history`, `diff`), for the
  /// task that renders them: unset, a row shows a sealed value's bytes.
  @TaskLocal package static var shown: SubjectKeyring?
}

extension Personal: BinaryEncodingInterception {
  /// The generic path of the encoder (a value that is not a `Personal<String>`, or one encoded
  /// without ``PersonalSealing``'s hook): sealing, if the run is a new event's.
  package func interceptEncoding(into state: BinaryEncodingState) throws {
    try encode(into: state, sealing: state.hook as? PersonalSealing, field: nil)
  }

  /// Writes the value into `state`: a value read from the log as it is stored, a new one as its
  /// placeholder (noted in `sealing`'s pending seals; without `sealing`, refused). `field` names
  /// it, when the caller knows its name without the coding path (a field at the top level: its key).
  func encode(into state: BinaryEncodingState, sealing: PersonalSealing?, field: String?) throws {
    switch content {
    case .sealed(let sealed):
      sealed.bytes.withUnsafeBytes { state.writeLengthPrefixed($0) }
    case .clear(let bytes):
      bytes.withUnsafeBytes { state.writeLengthPrefixed($0) }
    case .plain(let value, let subject):
      guard let sealing else {
        throw EncodingError.invalidValue(
          self,
          EncodingError.Context(
            codingPath: state.codingPath,
            debugDescription:
              "a personal value is sealed when its event is created (NewEvent); it cannot be encoded here"
          ))
      }
      // The value's BinaryEncoder bytes: a String's written straight into the payload (the common
      // case), another type's encoded apart first.
      let text = Value.self == String.self ? BinaryCodingSupport.identityCast(value, to: String.self) : ""
      let encoded = Value.self == String.self ? nil : try BinaryEncoder().encode(value)
      let plaintextCount = encoded?.count ?? BinaryCodingSupport.lengthPrefixedSize(text.utf8.count)
      // A field at the top level is named by its key alone.
      var name: String
      if let field {
        name = field
      } else {
        let path = state.codingPath
        name = path.count == 1 ? path[0].stringValue : path.map(\.stringValue).joined(separator: ".")
      }
      let headerCount = name.withUTF8 { SealedValue.headerSize(fieldCount: $0.count) }
      let size = SealedValue.size(headerCount: headerCount, plaintextCount: plaintextCount)
      state.writeUnsigned(UInt64(size))
      let offset = state.byteCount
      // The header and room for the nonce, the plaintext where its ciphertext goes, room for the tag.
      state.writeFilled(headerCount + SealedValue.nonceCount) { bytes in
        _ = name.withUTF8 {
          SealedValue.writeHeader(
            subject: subject, eventID: sealing.eventID, field: UnsafeRawBufferPointer($0), into: bytes)
        }
      }
      if let encoded {
        encoded.withUnsafeBytes { state.writeRaw($0) }
      } else {
        state.writeString(text)
      }
      state.writeZeros(SealedValue.tagCount)
      sealing.pendingSeals.append(
        PendingSeal(
          offset: offset, headerCount: headerCount, sealedCount: size - headerCount, subject: subject))
    }
  }
}

extension BinaryReader {
  /// Reads a ``Personal`` value (its stored bytes, as its `Decodable` conformance does: as
  /// `Data`, and failing as reading `Data` fails, as ``personalBytes()`` does).
  public mutating func personal<Value>(_ type: Value.Type = Value.self) throws -> Personal<Value> {
    Personal(storedBytes: Array(try lengthPrefixedBytes()))
  }
}

extension BinaryReader {
  /// Reads a ``Personal`` value's stored bytes without copying them (for copying a sealed value
  /// from a payload into a row: ``RowWriter/personal(stored:)``).
  /// - Returns: bytes inside the reader's buffer, valid as long as it is.
  public mutating func personalBytes() throws -> UnsafeRawBufferPointer {
    try lengthPrefixedBytes()
  }
}

extension BinaryWriter {
  /// Writes a ``Personal`` value as its `Encodable` conformance does in a new event's payload
  /// (``EventPayload/encode(binary:)``): a value read from the log as it is stored, a new one as
  /// the placeholder the append seals.
  /// - Parameters:
  ///   - value: the value.
  ///   - field: its name, bound to the sealed value: the property's coding key for a field of the
  ///     payload itself (`customerName`), the keys joined with `.` for one nested deeper.
  /// - Throws: `EncodingError` for a new value outside a new event's payload.
  public mutating func personal<Value>(_ value: Personal<Value>, field: String) throws {
    try value.encode(into: state, sealing: state.hook as? PersonalSealing, field: field)
  }

  /// Writes a personal text: the generic `personal(_:field:)` for `String`, the value met most (a
  /// name), without the generic call across modules.
  /// - Parameters:
  ///   - value: the value.
  ///   - field: its name (as for the generic form).
  /// - Throws: `EncodingError` for a new value outside a new event's payload.
  public mutating func personal(_ value: Personal<String>, field: String) throws {
    try value.encode(into: state, sealing: state.hook as? PersonalSealing, field: field)
  }
}

extension RowWriter {
  /// A ``Personal`` value as it is stored (sealed, or in clear from before sealing): its length
  /// (LEB128), then its bytes. A value whose event was not appended yet has no stored form and
  /// writes as empty: rows are made from events read from the log.
  public mutating func personal<Value>(_ value: Personal<Value>) {
    let bytes = value.storedBytes ?? []
    bytes.withUnsafeBytes { string(utf8: $0) }
  }

  /// A ``Personal`` value's stored bytes (``BinaryReader/personalBytes()``): the same bytes as
  /// ``personal(_:)``.
  public mutating func personal(stored bytes: UnsafeRawBufferPointer) { string(utf8: bytes) }

  /// An optional ``Personal`` value: 0, or 1 then ``personal(_:)``.
  public mutating func optionalPersonal<Value>(_ value: Personal<Value>?) {
    if let value {
      byte(1)
      personal(value)
    } else {
      byte(0)
    }
  }

  /// An optional ``Personal`` value's stored bytes: the same bytes as ``optionalPersonal(_:)``.
  public mutating func optionalPersonal(stored bytes: UnsafeRawBufferPointer?) {
    if let bytes {
      byte(1)
      string(utf8: bytes)
    } else {
      byte(0)
    }
  }
}

extension RowReader {
  /// A ``RowWriter/personal(_:)``.
  public mutating func personal<Value>(_ type: Value.Type = Value.self) throws(RowError) -> Personal<Value> {
    Personal(storedBytes: Array(try stringBytes()))
  }

  /// A ``RowWriter/optionalPersonal(_:)``.
  public mutating func optionalPersonal<Value>(
    _ type: Value.Type = Value.self
  ) throws(RowError)
    -> Personal<Value>?
  {
    switch try byte() {
    case 0: return nil
    case 1: return try personal(Value.self)
    case let tag: throw .unreadable(row: row, reason: "bad optional tag \(tag)")
    }
  }

  /// A ``RowWriter/personal(_:)`` text: the generic `personal(_:)` for `String`, the value met
  /// most (a name), without the generic call across modules, which looks `Personal<String>`'s
  /// metadata up at run time (`perf`, `read.all`: the generic forms, with their lookups, were
  /// about 5% of the CPU; this form measured 0.976× (0.965–1.026) the CPU, 8 pairs, inside the
  /// spread; Benchmarks/Results/FINDINGS.md, finding 15).
  public mutating func personal(_ type: String.Type = String.self) throws(RowError) -> Personal<String> {
    Personal(storedBytes: Array(try stringBytes()))
  }

  /// A ``RowWriter/optionalPersonal(_:)`` text: the generic `optionalPersonal(_:)` for `String`,
  /// without the generic path (as the `String` form of `personal(_:)`).
  public mutating func optionalPersonal(
    _ type: String.Type = String.self
  ) throws(RowError) -> Personal<String>? {
    switch try byte() {
    case 0: return nil
    case 1: return try personal(String.self)
    case let tag: throw .unreadable(row: row, reason: "bad optional tag \(tag)")
    }
  }
}

/// How a ``Personal`` value is stored, judged on its bytes: what admission rules check about a
/// personal field of an event from elsewhere (a pull, an import), whose value they cannot read.
public enum PersonalStorage: Sendable, Hashable {
  /// Sealed for this event (its header names the event's ID).
  case sealed
  /// Stored in clear, by a build before sealing existed: the value's text, to judge as before.
  case clear
  /// Neither: the reason.
  case invalid(String)

  /// How `bytes`, a ``Personal`` value's stored bytes in event `eventID`, are stored.
  public static func of(_ bytes: UnsafeRawBufferPointer, inEvent eventID: UUID) -> PersonalStorage {
    guard bytes.first == SealedValue.marker else { return .clear }
    guard let sealed = SealedValue(bytes: Array(bytes)) else {
      return .invalid("is neither text nor a well-formed sealed value")
    }
    guard sealed.eventID == eventID else {
      return .invalid("is sealed for another event (\(sealed.eventID.lowercasedString))")
    }
    return .sealed
  }
}

extension Personal {
  /// How the value is stored in event `eventID` (``PersonalStorage/of(_:inEvent:)``); a value not
  /// appended yet is judged as sealed.
  public func storage(inEvent eventID: UUID) -> PersonalStorage {
    guard let bytes = storedBytes else { return .sealed }
    return bytes.withUnsafeBytes { PersonalStorage.of($0, inEvent: eventID) }
  }
}
