/// An ordered index of a ``TableProjection``: one more LMDB table whose keys are a function of the
/// row, kept in step by the engine on every put, replace and delete, live and in replay alike.
///
/// An entry's key is the index's key of the row followed by the row's primary key, so that equal
/// index keys are ordered by primary key and every entry is unique. By default the index holds
/// keys only (the value is empty when the primary key has a fixed width, else the primary key),
/// and a read in its order looks each row up by primary key; ``storesRows`` keeps a copy of the
/// row in the index instead, so that reading in its order is one sequential scan, at the price of
/// writing the row twice.
public struct TableIndex<Row>: Sendable {
  /// The index's table name (`by-name`): `a-z`, `0-9`, `.`, `_`, `-`.
  public let name: String
  /// How the index's key is made from a row.
  public let key: TableKey.Column<Row>
  /// Whether the index holds a copy of each row.
  public let storesRows: Bool
  /// Writes the index's key of a row from its stored bytes, without decoding the row: an optional
  /// fast path for removals and replacements (the engine otherwise decodes the old row), and what
  /// lets ``TableWriter/put(encodedRow:primaryKey:)`` index a row given as bytes.
  let keyOfStoredRow: (@Sendable (UnsafeRawBufferPointer, inout KeyBuilder) throws -> Void)?

  /// An index named `name` on `key`.
  /// - Parameters:
  ///   - name: the index's table name.
  ///   - key: the index's key of a row.
  ///   - storesRows: keep a copy of each row in the index (a covering index).
  ///   - keyOfStoredRow: an optional fast path: writes the same key as `key` does, read from the
  ///     row's stored bytes. A test should check that the two agree.
  public init(
    _ name: String, _ key: TableKey.Column<Row>, storesRows: Bool = false,
    keyOfStoredRow: (@Sendable (UnsafeRawBufferPointer, inout KeyBuilder) throws -> Void)? = nil
  ) {
    self.name = name
    self.key = key
    self.storesRows = storesRows
    self.keyOfStoredRow = keyOfStoredRow
  }

  /// The index's key of `row` (without the primary key its entries end in).
  public func key(of row: Row) -> TableKey { key.key(of: row) }

  /// The index's key of a row given as its stored bytes, through `keyOfStoredRow`; `nil` when the
  /// index has none. (For tests that check it agrees with ``key(of:)``.)
  public func key(ofStoredRow bytes: UnsafeRawBufferPointer) throws -> TableKey? {
    guard let keyOfStoredRow else { return nil }
    return try KeyBuilder.withKey({ try keyOfStoredRow(bytes, &$0) }) { TableKey(bytes: Array($0)) }
  }
}
