import Foundation

extension TableKey {
  /// How a row's key is made: the primary key of a ``TableProjection`` or the key of a
  /// ``TableIndex``, as a function of the row in one of ``TableKey``'s encodings.
  ///
  /// ```swift
  /// primaryKey: .uuid(\.id)
  /// TableIndex("by-name", .caseInsensitive(\.name))
  /// TableIndex("by-restaurant-date", .compound(.uuid(\.restaurantID), .date(\.date)))
  /// ```
  public struct Column<Row>: Sendable {
    /// The bytes every key of the column has, or `nil` when they vary (text).
    public let width: Int?
    @usableFromInline let write: @Sendable (Row, inout KeyBuilder) -> Void

    /// A column of `width` bytes (`nil`: varying) that `write` writes.
    public init(width: Int?, _ write: @escaping @Sendable (Row, inout KeyBuilder) -> Void) {
      self.width = width
      self.write = write
    }

    /// A UUID (16 bytes).
    public static func uuid(_ value: @escaping @Sendable (Row) -> UUID) -> Column {
      Column(width: 16) { row, key in key.uuid(value(row)) }
    }

    /// A date (8 bytes), in time order.
    public static func date(_ value: @escaping @Sendable (Row) -> Date) -> Column {
      Column(width: 8) { row, key in key.date(value(row)) }
    }

    /// A signed integer (8 bytes), in numeric order.
    public static func int(_ value: @escaping @Sendable (Row) -> Int) -> Column {
      Column(width: 8) { row, key in key.int(Int64(value(row))) }
    }

    /// An unsigned integer (8 bytes), in numeric order.
    public static func uint(_ value: @escaping @Sendable (Row) -> UInt64) -> Column {
      Column(width: 8) { row, key in key.uint(value(row)) }
    }

    /// A text, bytewise.
    public static func text(_ value: @escaping @Sendable (Row) -> String) -> Column {
      Column(width: nil) { row, key in key.text(value(row)) }
    }

    /// A text, ignoring case.
    public static func caseInsensitive(_ value: @escaping @Sendable (Row) -> String) -> Column {
      Column(width: nil) { row, key in key.caseInsensitive(value(row)) }
    }

    /// Several columns one after the other: a compound key, ordered by the first, then the next.
    public static func compound(_ columns: Column...) -> Column {
      let widths = columns.map(\.width)
      let width = widths.contains { $0 == nil } ? nil : widths.reduce(0) { $0 + ($1 ?? 0) }
      return Column(width: width) { row, key in
        for column in columns { column.write(row, &key) }
      }
    }

    /// The key of `row` as a value.
    public func key(of row: Row) -> TableKey { TableKey { write(row, &$0) } }
  }
}
