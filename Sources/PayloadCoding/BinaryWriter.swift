#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Writes one `BinaryEncoder` encoding field by field, in order: the mirror of ``BinaryReader``,
/// the fast path for hot event types (EventLog's `EventPayload.encode(binary:)`).
///
/// Synthesized `Encodable` goes through keyed containers, coding paths and generic dispatch for
/// every field of every event; writing the same bytes directly skips them (in the
/// `append.batched` profile, a booking's `Codable` encoding beside its two sealed values was
/// about 7% of an append's CPU; Benchmarks/Results/FINDINGS.md, finding 15). A type that writes
/// itself with a `BinaryWriter` must write exactly what its `Encodable` conformance writes, field
/// by field, and a test should check that both agree.
public struct BinaryWriter: ~Copyable {
  /// The run this writer appends to (its output, its hook).
  package let state: BinaryEncodingState

  /// A writer appending to `state`'s output.
  package init(state: BinaryEncodingState) {
    self.state = state
  }

  /// Writes a `UUID` (its 16 bytes).
  public mutating func uuid(_ value: UUID) { state.writeUUID(value) }

  /// Writes a `String` (varint byte count, then its UTF-8).
  public mutating func string(_ value: String) { state.writeString(value) }

  /// Writes an `Int` (zigzag varint).
  public mutating func int(_ value: Int) { state.writeSigned(Int64(value)) }

  /// Writes an `Int64` (zigzag varint).
  public mutating func int64(_ value: Int64) { state.writeSigned(value) }

  /// Writes a `UInt64` (varint).
  public mutating func uint64(_ value: UInt64) { state.writeUnsigned(value) }

  /// Writes a `Bool` (one byte, 0 or 1).
  public mutating func bool(_ value: Bool) { state.writeBool(value) }

  /// Writes a `Double` (8-byte bit pattern).
  public mutating func double(_ value: Double) { state.writeFixed64(value.bitPattern) }

  /// Writes a `Date` (8-byte bit pattern of `timeIntervalSinceReferenceDate`).
  public mutating func date(_ value: Date) { state.writeDate(value) }

  /// Writes an optional as a synthesized `encodeIfPresent` does: a tag byte, then the value with
  /// `write` when it is present.
  public mutating func optional<T>(_ value: T?, _ write: (inout BinaryWriter, T) throws -> Void) rethrows {
    guard let value else {
      state.writeByte(0)
      return
    }
    state.writeByte(1)
    try write(&self, value)
  }

  /// Writes a value through its `Encodable` conformance (for fields without a fast path).
  /// - Throws: what `BinaryEncoder` throws for the value.
  public mutating func encode<T: Encodable>(_ value: T) throws {
    try state.encodeValue(value)
  }
}
