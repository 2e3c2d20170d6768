/// A read model folded from the events, stored in its own LMDB tables and kept up to date inside
/// every append's write transaction.
///
/// A projection declares the tables it owns and applies one event at a time to a
/// ``ProjectionWriter``. The same `apply` serves the inline path (tables in LMDB, inside the
/// append's transaction) and replay (tables in memory), so a replay rebuilds exactly what the
/// live path built. `apply` must be deterministic: it may read only the event and its own tables.
public protocol Projection: Sendable {
  /// A stable, unique name: it names the projection's tables and checkpoint.
  /// 1 to 100 characters from `a-z`, `0-9`, `.`, `_`, `-`.
  var name: String { get }
  /// Raise it whenever `apply` or the row format changes: on open, a projection whose stored
  /// version differs is rebuilt from the log.
  var version: UInt32 { get }
  /// The names of the tables the projection owns (same alphabet as ``name``).
  var tables: [String] { get }
  /// Applies one event.
  /// - Throws: anything; the append that carried the event then fails and stores nothing.
  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws
  /// How the audit commands (`eventlog diff`, `eventlog history`) show an entry of `table`: its
  /// fields, or `nil` to leave the table out (an index whose rows another table shows). The
  /// default shows every entry as one field, `bytes`, its value in hex; a ``TableProjection``
  /// shows its rows' fields when its row type is `Encodable`, and leaves its indexes out.
  /// - Parameters:
  ///   - table: one of ``tables``.
  ///   - value: the entry's stored bytes.
  /// - Returns: the fields, sorted by name; `nil` to leave the table out.
  /// - Throws: when the bytes do not read back as the table's entry.
  func shownFields(ofEntryIn table: String, value: [UInt8]) throws -> [ShownField]?
}

/// A field of a projection's entry as the audit commands show it (``Projection/shownFields(ofEntryIn:value:)``).
public struct ShownField: Sendable, Hashable {
  /// The field's name.
  public var name: String
  /// Its value as JSON text (`"Ada"`, `4`, `null`).
  public var json: String

  /// A field.
  public init(name: String, json: String) {
    self.name = name
    self.json = json
  }
}

extension Projection {
  /// Every entry as one field, `bytes`: its value in hex.
  public func shownFields(ofEntryIn table: String, value: [UInt8]) throws -> [ShownField]? {
    [ShownField(name: "bytes", json: "\"\(Hex.string(value))\"")]
  }
}

extension Projection {
  func validate() throws {
    func valid(_ text: String) -> Bool {
      !text.isEmpty && text.count <= 100
        && text.unicodeScalars.allSatisfy {
          ("a"..."z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)
        }
    }
    guard valid(name) else {
      throw EventStoreError.invalidProjection("'\(name)' is not a valid projection name (a-z 0-9 . _ -)")
    }
    guard !tables.isEmpty, Set(tables).count == tables.count else {
      throw EventStoreError.invalidProjection("projection '\(name)' must declare distinct tables")
    }
    for table in tables where !valid(table) {
      throw EventStoreError.invalidProjection("projection '\(name)': '\(table)' is not a valid table name")
    }
  }
}
