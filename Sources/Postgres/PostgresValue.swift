import Foundation

/// A statement parameter: sent apart from the SQL text, never spliced into it.
public enum PostgresValue: Sendable, Hashable {
  /// SQL `NULL`.
  case null
  /// A value in PostgreSQL's text form; the server converts it to the parameter's type.
  case text(String)
  /// Raw bytes for a `bytea` parameter, sent in binary form (no escaping).
  case bytes([UInt8])

  /// An integer, in text form.
  public static func integer<T: BinaryInteger>(_ value: T) -> PostgresValue { .text(String(value)) }

  /// A UUID, in text form (lower case).
  public static func uuid(_ value: UUID) -> PostgresValue { .text(value.uuidString.lowercased()) }
}
