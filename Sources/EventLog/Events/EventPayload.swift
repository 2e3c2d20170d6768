import Foundation

/// An event type: the stored contract of one kind of change.
///
/// Adopt it with one small conformance; `Codable` is synthesized, and the payload is stored in
/// the compact binary format of `BinaryEncoder`:
///
/// ```swift
/// struct BookingDeleted: EventPayload {
///   static let eventType = "BookingDeleted"
///   var bookingID: UUID
/// }
/// ```
///
/// The binary format is positional. Changing the stored properties of an event type (their
/// order, types or number) is a new schema: raise ``schemaVersion`` and implement
/// ``upcast(from:payload:)`` to read the older versions still in the log.
public protocol EventPayload: Codable, Sendable {
  /// The stored type name; never change it once events of the type are stored.
  static var eventType: String { get }
  /// The schema version new events are written with. Defaults to 1.
  static var schemaVersion: UInt16 { get }
  /// Reads a payload written with an older `schemaVersion`.
  ///
  /// The default throws ``EventStoreError/unsupportedSchemaVersion(type:version:supported:)``.
  /// - Parameters:
  ///   - schemaVersion: the version the payload was written with, lower than ``schemaVersion``.
  ///   - payload: the stored bytes; decode them as the old shape with ``EncodedPayload/decode(_:)``.
  /// - Returns: the payload in the current shape.
  /// - Throws: when the version is not one the type reads, or the bytes do not decode.
  static func upcast(from schemaVersion: UInt16, payload: EncodedPayload) throws -> Self
  /// Reads a payload of the current ``schemaVersion``.
  ///
  /// The default decodes through `Codable` with `BinaryDecoder`. A type on a hot path (replay
  /// folds every event) may read its fields with the ``BinaryReader`` instead: the same bytes, in
  /// the order its `Encodable` conformance writes them, several times faster.
  init(binary reader: inout BinaryReader) throws
  /// Writes the payload of a new event.
  ///
  /// The default encodes through `Codable` with `BinaryEncoder`. A type on a hot path (every
  /// append encodes its event) may write its fields with the ``BinaryWriter`` instead: the same
  /// bytes, in the order its `Encodable` conformance writes them, and its ``Personal`` values with
  /// the writer's `personal(_:field:)`.
  /// - Throws: what the encoding of a field throws.
  func encode(binary writer: inout BinaryWriter) throws
}

extension EventPayload {
  /// Version 1: a type that never changed its shape.
  public static var schemaVersion: UInt16 { 1 }

  /// Reads no older version: an event type that raises ``schemaVersion`` implements its own.
  /// - Throws: ``EventStoreError/unsupportedSchemaVersion(type:version:supported:)``, always.
  public static func upcast(from schemaVersion: UInt16, payload: EncodedPayload) throws -> Self {
    throw EventStoreError.unsupportedSchemaVersion(
      type: eventType, version: schemaVersion, supported: Self.schemaVersion)
  }

  /// Decodes the payload through its `Decodable` conformance with the reader's bytes.
  /// - Throws: the decoder's error for bytes that are not this type.
  public init(binary reader: inout BinaryReader) throws {
    self = try reader.decode(Self.self)
  }

  /// Encodes the payload through its `Encodable` conformance into the writer's bytes.
  /// - Throws: the encoder's error for a value the format cannot hold.
  public func encode(binary writer: inout BinaryWriter) throws {
    try writer.encode(self)
  }
}

/// The stored bytes of a payload, handed to an upcaster.
public struct EncodedPayload: Sendable {
  /// The payload bytes: binary, or JSON text for an event stored with a JSON payload
  /// (``encoding``). Read them through ``decode(_:)``, which reads both.
  public let bytes: [UInt8]
  /// How ``bytes`` are encoded.
  public let encoding: PayloadEncoding

  /// A payload of `bytes` in `encoding`.
  public init(bytes: [UInt8], encoding: PayloadEncoding = .binary) {
    self.bytes = bytes
    self.encoding = encoding
  }

  /// Decodes the bytes as `type` (an older shape of the event): with `BinaryDecoder`, or from
  /// JSON (dates in ISO 8601) for a JSON payload.
  /// - Throws: the decoder's error for bytes that are not `type`.
  public func decode<T: Decodable>(_ type: T.Type) throws -> T {
    switch encoding {
    case .binary: try BinaryDecoder().decode(type, from: bytes)
    case .json: try PayloadJSONDecoder().decode(type, from: Data(bytes))
    }
  }
}
